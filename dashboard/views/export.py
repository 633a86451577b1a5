"""Export: preview MEMORY.md with the API's options, and download it."""

from __future__ import annotations

from django.http import HttpResponse
from django.views.decorators.http import require_GET

from dashboard.forms import ExportForm
from dashboard.permissions import member_required
from dashboard.views.common import form_error, human_error, render_page
from memory.models import Entity, EntityType
from memory.services.errors import MemoryLaneError
from memory.services.export import export_memory_md


def _export(request, form: ExportForm):
    """(result, error) for the form's options, within the current team."""
    if not form.is_valid():
        return None, form_error(form)
    try:
        return export_memory_md(team=request.team, project=form.cleaned_data["project"].strip() or None), ""
    except MemoryLaneError as exc:
        return None, human_error(exc)


@require_GET
@member_required
def export_preview(request):
    form = ExportForm(request.GET)
    result, error = _export(request, form)
    context = {
        "form": form,
        "result": result,
        "error": error,
        "projects": Entity.objects.for_team(request.team)
        .canonical()
        .filter(type=EntityType.PROJECT)
        .order_by("slug")[:500],
    }
    return render_page(
        request, "dashboard/export.html", context, partial="preview", status=422 if error else 200
    )


@require_GET
@member_required
def export_download(request):
    result, error = _export(request, ExportForm(request.GET))
    if result is None:
        return HttpResponse(error, status=400, content_type="text/plain; charset=utf-8")
    response = HttpResponse(result.markdown, content_type="text/markdown; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{result.filename}"'
    return response

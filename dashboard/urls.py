from django.urls import path
from django.views.generic import RedirectView

# The curation dashboard (DESIGN.md §6) is not built yet; until it is, the Django admin is the UI.
urlpatterns = [
    path("", RedirectView.as_view(url="/admin/", permanent=False), name="home"),
]

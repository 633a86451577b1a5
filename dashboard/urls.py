from django.contrib.auth import views as auth_views
from django.urls import path

from dashboard.views import (
    entities,
    export,
    maturity,
    memories,
    overview,
    reflections,
    review,
    sessions,
    tokens,
)

app_name = "dashboard"

urlpatterns = [
    path(
        "login/",
        auth_views.LoginView.as_view(template_name="dashboard/login.html", redirect_authenticated_user=True),
        name="login",
    ),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", overview.overview, name="overview"),
    path("review/", review.review_queue, name="review"),
    path("review/<uuid:pk>/", review.review_item, name="review_item"),
    path("review/<uuid:pk>/approve/", review.review_approve, name="review_approve"),
    path("review/<uuid:pk>/reject/", review.review_reject, name="review_reject"),
    path("review/<uuid:pk>/edit/", review.review_edit, name="review_edit"),
    path("review/<uuid:pk>/merge/", review.review_merge, name="review_merge"),
    path("review/changed/<int:pk>/", review.review_fact, name="review_fact"),
    path("memories/", memories.memory_list, name="memories"),
    path("memories/<uuid:pk>/", memories.memory_detail, name="memory_detail"),
    path("memories/<uuid:pk>/feedback/", memories.memory_feedback, name="memory_feedback"),
    path("memories/<uuid:pk>/maturity/", memories.memory_maturity, name="memory_maturity"),
    path("memories/<uuid:pk>/delete/", memories.memory_delete, name="memory_delete"),
    path("memories/<uuid:pk>/split/", memories.memory_split, name="memory_split"),
    path("maturity/", maturity.maturity_board, name="maturity"),
    path("entities/", entities.entity_list, name="entities"),
    path("entities/merge/", entities.entity_merge, name="entity_merge"),
    path("entities/<int:pk>/", entities.entity_row, name="entity_row"),
    path("entities/<int:pk>/aliases/", entities.entity_aliases, name="entity_aliases"),
    path("entities/mentions/<int:pk>/resolve/", entities.mention_resolve, name="mention_resolve"),
    path("entities/mentions/<int:pk>/dismiss/", entities.mention_dismiss, name="mention_dismiss"),
    path("sessions/", sessions.session_list, name="sessions"),
    path("sessions/<uuid:pk>/", sessions.session_detail, name="session_detail"),
    path("sessions/<uuid:pk>/status/", sessions.session_status, name="session_status"),
    path("sessions/<uuid:pk>/rerun/", sessions.session_rerun, name="session_rerun"),
    path("reflections/", reflections.reflection_list, name="reflections"),
    path("reflections/run/", reflections.reflection_run, name="reflection_run"),
    path("reflections/runs/<int:pk>/", reflections.reflection_run_status, name="reflection_run_status"),
    path("export/", export.export_preview, name="export"),
    path("export/download/", export.export_download, name="export_download"),
    path("tokens/", tokens.token_list, name="tokens"),
    path("tokens/<int:pk>/revoke/", tokens.token_revoke_view, name="token_revoke"),
]

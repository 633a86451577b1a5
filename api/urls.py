from django.urls import path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from api import views
from api.exceptions import not_found

urlpatterns = [
    path("v1/health", views.health, name="api-health"),
    path("v1/observations", views.ObservationListView.as_view(), name="api-observations"),
    path("v1/observations/batch", views.ObservationBatchView.as_view(), name="api-observations-batch"),
    path("v1/observations/<uuid:memory_id>", views.ObservationDetailView.as_view(), name="api-observation"),
    path(
        "v1/observations/<uuid:memory_id>/reinforcements",
        views.ReinforcementListView.as_view(),
        name="api-observation-reinforcements",
    ),
    path("v1/observations/<uuid:memory_id>/split", views.SplitView.as_view(), name="api-observation-split"),
    path(
        "v1/observations/<uuid:memory_id>/history",
        views.HistoryView.as_view(),
        name="api-observation-history",
    ),
    path(
        "v1/observations/<uuid:memory_id>/history/restore",
        views.RestoreView.as_view(),
        name="api-observation-history-restore",
    ),
    path("v1/changed-facts", views.FactChangeListView.as_view(), name="api-changed-facts"),
    path("v1/changed-facts/<int:change_id>", views.FactChangeDetailView.as_view(), name="api-changed-fact"),
    path("v1/search", views.SearchView.as_view(), name="api-search"),
    path("v1/context", views.ContextView.as_view(), name="api-context"),
    path("v1/feedback", views.FeedbackView.as_view(), name="api-feedback"),
    path("v1/entities", views.EntityListView.as_view(), name="api-entities"),
    path("v1/entities/resolve", views.EntityResolveView.as_view(), name="api-entities-resolve"),
    path("v1/entities/merge", views.EntityMergeView.as_view(), name="api-entities-merge"),
    path("v1/reflections", views.ReflectionListView.as_view(), name="api-reflections"),
    path("v1/export", views.ExportView.as_view(), name="api-export"),
    path("v1/sessions", views.SessionCreateView.as_view(), name="api-sessions"),
    path("v1/sessions/<str:session_id>", views.SessionDetailView.as_view(), name="api-session"),
    path(
        "v1/sessions/<str:session_id>/messages",
        views.SessionMessagesView.as_view(),
        name="api-session-messages",
    ),
    path("v1/sessions/<str:session_id>/end", views.SessionEndView.as_view(), name="api-session-end"),
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    re_path(r"^[\s\S]*$", not_found),  # anything else under /api/, newlines included
]

"""The agent API (DESIGN.md §5). Each view: input serializer → service → output serializer.

``common.py`` holds what every view shares (errors, access, pagination, markdown); the other files
are the API's parts, as ``api/urls.py`` lists them: ``health``, ``observations``, ``retrieval``
(search, context, feedback), ``curation`` (changed facts, reinforcements, history), ``knowledge``
(entities, reflections, export) and ``sessions``.
"""

from __future__ import annotations

from api.views.curation import (
    FactChangeDetailView,
    FactChangeListView,
    HistoryView,
    ReinforcementListView,
    RestoreView,
    SplitView,
)
from api.views.health import health
from api.views.knowledge import (
    EntityListView,
    EntityMergeView,
    EntityResolveView,
    ExportView,
    ReflectionListView,
)
from api.views.observations import (
    ObservationBatchView,
    ObservationDetailView,
    ObservationListView,
    store_one,
    store_result,
)
from api.views.retrieval import (
    ContextView,
    FeedbackView,
    SearchView,
    context_result,
    feedback_give,
    feedback_result,
    search_result,
)
from api.views.sessions import SessionCreateView, SessionDetailView, SessionEndView, SessionMessagesView

__all__ = [
    "ContextView",
    "EntityListView",
    "EntityMergeView",
    "EntityResolveView",
    "ExportView",
    "FactChangeDetailView",
    "FactChangeListView",
    "FeedbackView",
    "HistoryView",
    "ObservationBatchView",
    "ObservationDetailView",
    "ObservationListView",
    "ReflectionListView",
    "ReinforcementListView",
    "RestoreView",
    "SearchView",
    "SessionCreateView",
    "SessionDetailView",
    "SessionEndView",
    "SessionMessagesView",
    "SplitView",
    "context_result",
    "feedback_give",
    "feedback_result",
    "health",
    "search_result",
    "store_one",
    "store_result",
]

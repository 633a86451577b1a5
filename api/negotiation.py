"""Content negotiation: the API speaks JSON, whatever the Accept header says.

An agent or a proxy that sends an Accept header the API cannot satisfy ("text/html", or a malformed
one) gets JSON rather than a 406 — HTTP lets a server ignore Accept, and every client of this API
reads JSON. A request's own ``format`` parameters (the context endpoint's markdown) are the views'.
"""

from __future__ import annotations

from rest_framework.exceptions import NotAcceptable
from rest_framework.negotiation import DefaultContentNegotiation


class JSONWhateverAccepted(DefaultContentNegotiation):
    def select_renderer(self, request, renderers, format_suffix=None):
        try:
            return super().select_renderer(request, renderers, format_suffix)
        except NotAcceptable:
            renderer = renderers[0]
            return renderer, renderer.media_type

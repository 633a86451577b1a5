"""ASGI entry point: ``uvicorn memorylane.asgi:application``.

One process serves both surfaces: ``/mcp`` goes to the MCP server (api/mcp_server.py), everything
else to Django.

Django runs as a WSGI application on a fixed pool of WEB_THREADS threads (a2wsgi). Its ASGI
handler ran each request on a new thread and crossed between that thread and the event loop around
every middleware, which under load cost more CPU than the requests' own work (bench/HISTORY.md,
load). The fixed threads also keep their database connections between requests when
DATABASE_CONN_MAX_AGE is set.

ASGI lifespan events start and stop the MCP session manager; without them (``uvicorn --lifespan
off``, as the runner starts it) the first /mcp request starts it. The models, screens and lexicons
load on a background thread as the process starts (``memory/services/warmup.py``, ``WARM_UP``).
"""

from __future__ import annotations

import os

from a2wsgi import WSGIMiddleware
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memorylane.settings")

from memory.conf import setting  # noqa: E402 - needs the settings module named first
from memorylane.bodies import with_body_length  # noqa: E402

django_application = with_body_length(WSGIMiddleware(get_wsgi_application(), workers=setting("WEB_THREADS")))

from api.mcp_server import McpApplication, is_mcp_path  # noqa: E402 - needs Django set up first

mcp_application = McpApplication()

if setting("WARM_UP"):  # the models, screens and lexicons load now, not at the first request
    from memory.services.warmup import warm_up_in_background

    warm_up_in_background("web process")


async def lifespan(scope, receive, send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            try:
                await mcp_application.start()
            except Exception as exc:  # noqa: BLE001 - reported to the server, which refuses to start
                await send({"type": "lifespan.startup.failed", "message": str(exc)})
                return
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await mcp_application.stop()
            await send({"type": "lifespan.shutdown.complete"})
            return


async def application(scope, receive, send) -> None:
    if scope["type"] == "lifespan":
        await lifespan(scope, receive, send)
    elif scope["type"] == "http" and is_mcp_path(scope["path"]):
        await mcp_application(scope, receive, send)
    else:
        await django_application(scope, receive, send)

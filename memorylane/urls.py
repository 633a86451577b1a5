from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", include("api.urls")),
    path("", include("dashboard.urls")),
]

# API paths answer 404 in the API's error shape even when no URL pattern matched at all.
handler404 = "memorylane.views.page_not_found"
# A request refused before any view (an invalid Host header) answers 400 in the API's error shape.
handler400 = "memorylane.views.bad_request"
# A database outage met outside a view answers 503 with Retry-After, not 500 (memorylane/middleware.py).
handler500 = "memorylane.views.server_error"

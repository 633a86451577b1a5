from __future__ import annotations

import yaml
from django.core.management import call_command


def test_the_openapi_schema_validates_without_warnings_and_documents_every_endpoint(tmp_path):
    path = tmp_path / "schema.yml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(path))
    schema = yaml.safe_load(path.read_text())
    expected = {
        "/api/v1/health",
        "/api/v1/observations",
        "/api/v1/observations/batch",
        "/api/v1/observations/{memory_id}",
        "/api/v1/observations/{memory_id}/reinforcements",
        "/api/v1/observations/{memory_id}/split",
        "/api/v1/observations/{memory_id}/history",
        "/api/v1/observations/{memory_id}/history/restore",
        "/api/v1/changed-facts",
        "/api/v1/changed-facts/{change_id}",
        "/api/v1/search",
        "/api/v1/context",
        "/api/v1/feedback",
        "/api/v1/entities",
        "/api/v1/entities/resolve",
        "/api/v1/entities/merge",
        "/api/v1/reflections",
        "/api/v1/export",
        "/api/v1/sessions",
        "/api/v1/sessions/{session_id}",
        "/api/v1/sessions/{session_id}/messages",
        "/api/v1/sessions/{session_id}/end",
    }
    assert set(schema["paths"]) == expected
    for path_item in schema["paths"].values():
        for operation in path_item.values():
            if operation.get("security") == [{}] or "health" in operation["operationId"]:
                continue
            assert {"401", "403", "429"} <= set(operation["responses"]), operation["operationId"]
    assert schema["components"]["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"

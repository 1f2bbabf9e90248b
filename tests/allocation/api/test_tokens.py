"""Token authentication: a plain HTTP client with ``Authorization: Token <key>`` reads and
writes the REST API of a running server, with no session and no CSRF token; a revoked token
is refused; the schema, Swagger UI and Redoc pages are served (their assets locally)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
from django.contrib.auth.models import User

from allocation.models import Node
from allocation.services import accounts
from tests import factories as f


def _call(url: str, key: str | None, method: str = "GET", body: str | None = None,
          content_type: str = "application/yaml", accept: str = "application/json"
          ) -> tuple[int, str]:
    headers = {"Accept": accept}
    if key:
        headers["Authorization"] = f"Token {key}"
    if body is not None:
        headers["Content-Type"] = content_type
    request = urllib.request.Request(url, data=body.encode() if body is not None else None,
                                     headers=headers, method=method)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


@pytest.mark.django_db(transaction=True)
def test_a_token_reads_and_writes_without_session_or_csrf_and_revoked_is_refused(live_server):
    staff = User.objects.create_user("ops", is_staff=True)
    key = accounts.create_token(staff)
    api = f"{live_server.url}/api"

    status, body = _call(f"{api}/nodes/", key)
    assert status == 200 and json.loads(body)["kind"] == "List"

    status, body = _call(f"{api}/nodes/", key, "POST", f.to_yaml([f.node("scripted")]))
    assert status == 201, body
    assert Node.objects.filter(name="scripted").exists()

    status, body = _call(f"{api}/nodes/", None)
    assert status in (401, 403)
    status, body = _call(f"{api}/nodes/", "0" * 40)
    assert status == 403 and "Invalid token" in body

    assert accounts.revoke_token(staff)
    status, body = _call(f"{api}/nodes/scripted/", key, "DELETE")
    assert status == 403 and "Invalid token" in body
    assert Node.objects.filter(name="scripted").exists()


@pytest.mark.django_db(transaction=True)
def test_a_users_token_writes_what_the_user_may_write_only(live_server):
    key = accounts.create_token(User.objects.create_user("alice"))

    status, body = _call(f"{live_server.url}/api/nodes/", key, "POST",
                         f.to_yaml([f.node("mine")]))

    assert status == 403, body
    assert not Node.objects.filter(name="mine").exists()


@pytest.mark.django_db(transaction=True)
def test_schema_swagger_ui_and_redoc_with_a_token(live_server):
    key = accounts.create_token(User.objects.create_user("alice"))

    status, body = _call(f"{live_server.url}/api/schema/?format=json", key)
    assert status == 200
    schema = json.loads(body)
    assert "/api/nodes/" in schema["paths"]
    assert "tokenAuth" in schema["components"]["securitySchemes"]

    status, page = _call(f"{live_server.url}/api/docs/", key, accept="text/html")
    assert status == 200 and "/static/drf_spectacular_sidecar/swagger-ui-dist/" in page
    assert "//cdn" not in page and "unpkg" not in page
    status, page = _call(f"{live_server.url}/api/redoc/", key, accept="text/html")
    assert status == 200 and "/static/drf_spectacular_sidecar/redoc/" in page
    assert "//cdn" not in page
    assert _call(f"{live_server.url}/api/docs/", None, accept="text/html")[0] == 403

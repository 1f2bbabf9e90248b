"""clusters/kube/client.py: loading a kubeconfig, GETs only, refusals in words."""

from __future__ import annotations

import pytest

from clusters.kube.client import (
    AccessDenied,
    NotServed,
    SourceError,
    connect,
    parse_json,
    part_at,
)


def test_connect_names_context_and_server(fake, kubeconfig):
    connection = connect(str(kubeconfig))
    assert connection.context == "prod-eu"
    assert connection.server == fake.url


def test_an_unknown_context_is_a_source_error(kubeconfig):
    with pytest.raises(SourceError, match="nowhere"):
        connect(str(kubeconfig), "nowhere")


def test_a_missing_kubeconfig_is_a_source_error(tmp_path):
    with pytest.raises(SourceError, match="kubeconfig"):
        connect(str(tmp_path / "absent"))


def test_kubeconfig_from_the_environment(fake, kubeconfig, monkeypatch):
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    assert connect().server == fake.url


def test_forbidden_names_the_missing_permission(fake, connection):
    fake.forbidden.add("/api/v1/pods")
    with pytest.raises(AccessDenied) as caught:
        connection.get_json("/api/v1/pods", {"limit": 10}, verb="list")
    message = str(caught.value)
    assert message.startswith("list pods: forbidden")
    assert "docs/rbac/draplanner-mirror.yaml" in message
    assert 'cannot list resource "pods"' in message


def test_forbidden_names_group_resources(fake, connection):
    path = "/apis/resource.k8s.io/v1/resourceclaims"
    fake.forbidden.add(path)
    with pytest.raises(AccessDenied, match=r"^watch resourceclaims\.resource\.k8s\.io"):
        list(connection.stream_lines(path, {"watch": "true"}))


def test_not_served_is_404(connection):
    with pytest.raises(NotServed):
        connection.get_json("/apis/example.com")


def test_a_slow_server_is_waited_for(fake, connection):
    fake.delay = 0.3
    assert connection.get_json("/api/v1/nodes")["kind"] == "NodeList"


def test_an_unreachable_server_is_a_source_error(tmp_path):
    from tests.kube_server import write_kubeconfig

    path = write_kubeconfig(tmp_path / "kc", "http://127.0.0.1:9")
    with pytest.raises(SourceError, match="cannot reach"):
        connect(str(path)).get_json("/api/v1/nodes")


def test_only_get_is_sent(fake, connection):
    connection.get_json("/api/v1/nodes")
    list(connection.stream_lines("/api/v1/nodes", {"watch": "true", "timeoutSeconds": 0}))
    assert fake.verbs() == {"GET"}


@pytest.mark.parametrize(("body", "message"), [
    (b"[]", "GET /api/v1/nodes: the answer is not a JSON object: b'[]'"),
    (b"5", "GET /api/v1/nodes: the answer is not a JSON object: b'5'"),
    (b"{", "GET /api/v1/nodes: the answer is not JSON: "),
])
def test_an_answer_that_is_not_a_json_object_is_a_source_error(body, message):
    with pytest.raises(SourceError) as raised:
        parse_json(body, "/api/v1/nodes")
    assert str(raised.value).startswith(message)


def test_parts_of_an_answer_are_checked_for_their_shape():
    path = "/api/v1/nodes"
    assert part_at({}, "metadata", path, dict) == {} == part_at({"metadata": None},
                                                                 "metadata", path, dict)
    assert part_at({"items": None}, "items", path, list) == [] == part_at({}, "items", path,
                                                                          list)
    with pytest.raises(SourceError, match=r"^GET /api/v1/nodes: items is not a list: 5$"):
        part_at({"items": 5}, "items", path, list)
    with pytest.raises(SourceError, match=r"^GET /api/v1/nodes: metadata is not an object: "
                                          r"\['x'\]$"):
        part_at({"metadata": ["x"]}, "metadata", path, dict)

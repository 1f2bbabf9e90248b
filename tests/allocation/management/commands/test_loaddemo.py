"""``manage.py loaddemo``: the demo loads once, idempotently, and simulates as well."""

from __future__ import annotations

from collections import Counter
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from allocation.engine.manifests import load_files
from allocation.engine.simulation import simulate
from allocation.services import cluster
from allocation.services.manifests import export_documents

DEMO = Path(__file__).resolve().parents[4] / "examples" / "demo.yaml"


def _run(*args: str) -> str:
    out = StringIO()
    call_command("loaddemo", *args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db
def test_loads_the_demo_once_and_then_leaves_the_cluster_alone():
    first = _run()
    stored = export_documents()
    revision = cluster.revision()

    second = _run()

    assert "demo: loaded demo.yaml:" in first
    assert "already has" in second
    assert (export_documents(), cluster.revision()) == (stored, revision)
    kinds = Counter(d["kind"] for d in stored)
    assert kinds["Node"] == 4 and kinds["NodeGroup"] == 2 and kinds["ProvisioningRequest"] == 2
    assert "createsuperuser" in second


@pytest.mark.django_db
def test_replace_resets_the_cluster_to_the_demo(tmp_path):
    extra = tmp_path / "extra.yaml"
    extra.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: extra}\n")
    _run("--file", str(extra))
    assert [d["metadata"]["name"] for d in export_documents()] == ["extra"]

    _run("--replace")

    names = {d["metadata"]["name"] for d in export_documents() if d["kind"] == "Node"}
    assert names == {"a100-1", "a100-2", "t4-1", "t4-2"}


def test_demo_is_rich_and_simulates():
    state = simulate(load_files([str(DEMO)])).state
    models = {i.model.name for inventories in state.inventories.values() for i in inventories}
    assert models == {"partitionable", "namedResourcesWithAttributes", "counter"}
    pods = {p.name: p for p in state.pods()}
    bound = {n for n, p in pods.items() if p.node_name}
    assert {"trainer", "inference-a", "renderer"} <= bound
    assert {"wide-render", "h100-job"} <= set(pods) - bound
    claims = {c.name: c for c in state.claims()}
    held = [i for c in claims.values() if c.allocation for i, _ in c.allocation.picks
            if i.model.name == "partitionable"]
    assert held, "some MIG partitions are allocated"
    assert len(list(state.of_kind(type(state.get("DriverSimulation", None, "fpga"))))) == 1


@pytest.mark.django_db
def test_a_fresh_development_install_gets_a_first_admin_shown_once(settings):
    from django.contrib.auth import get_user_model

    settings.DEBUG = True
    first = _run()
    [line] = [x for x in first.splitlines() if "created the superuser admin" in x]
    password = line.split("password ")[1].split(" ")[0]
    assert get_user_model().objects.get(username="admin").check_password(password)
    assert "created the superuser" not in _run()  # only when there is no user at all

"""manage.py import / export: output, exit codes, invalid input changes nothing."""

import pytest
from django.core.management import call_command

from allocation import models
from tests import factories as f

pytestmark = pytest.mark.django_db


def _run(capsys, *args) -> tuple[int, str, str]:
    try:
        call_command(*args)
        code = 0
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def test_import_then_export(tmp_path, capsys):
    path = tmp_path / "cluster.yaml"
    path.write_text(f.to_yaml([f.node("n1"), f.resource_class()]))
    code, out, _ = _run(capsys, "import", str(path))
    assert code == 0 and out.startswith("imported: 2 created")
    code, out, _ = _run(capsys, "export")
    assert code == 0 and out.startswith("apiVersion: v1\nitems:\n") and "name: gpu" in out
    code, out_json, _ = _run(capsys, "export", "-o", "json")
    assert code == 0 and out_json.startswith("{\n  \"apiVersion\": \"v1\"")
    again = tmp_path / "export.yaml"
    again.write_text(out)
    assert _run(capsys, "import", "--replace", str(again))[0] == 0
    assert _run(capsys, "export")[1] == out


def test_invalid_import_exits_2_lists_every_problem_and_changes_nothing(tmp_path, capsys):
    good = tmp_path / "good.yaml"
    good.write_text(f.to_yaml([f.node("n1")]))
    bad = tmp_path / "bad.yaml"
    broken = f.resource_class("x")
    broken["comonField"] = 1
    bad.write_text(f.to_yaml([broken, {"apiVersion": "v1", "kind": "Node"}]))
    code, _, err = _run(capsys, "import", str(good), str(bad))
    assert code == 2
    lines = err.splitlines()
    assert lines[0].startswith(f"{bad}:1 (ResourceClass x): comonField: ")
    assert lines[1].startswith(f"{bad}:2 (Node <unnamed>): metadata")
    assert lines[-1] == "2 problem(s); nothing was imported."
    assert not models.Node.objects.exists()


def test_import_of_a_missing_file_exits_2(tmp_path, capsys):
    code, _, err = _run(capsys, "import", str(tmp_path / "nope.yaml"))
    assert code == 2 and "cannot read" in err


def test_internal_error_exits_1(tmp_path, capsys, monkeypatch):
    path = tmp_path / "cluster.yaml"
    path.write_text(f.to_yaml([f.node("n1")]))
    monkeypatch.setattr("allocation.services.manifests.write",
                        lambda *a, **k: (_ for _ in ()).throw(RuntimeError("boom")))
    code, _, err = _run(capsys, "import", str(path))
    assert code == 1 and "internal error" in err and "boom" in err
    assert not models.Node.objects.exists()


def test_worker_once(capsys, tmp_path):
    path = tmp_path / "cluster.yaml"
    path.write_text(f.to_yaml([f.node("n1"), f.named_slice("n1", [f.device("d0")]),
                               f.resource_class(), f.claim("c1"),
                               f.pod("p1", claims={"g": "c1"})]))
    _run(capsys, "import", str(path))
    code, out, _ = _run(capsys, "worker", "--once")
    assert code == 0 and out.startswith("saved at revision 2")
    assert models.Pod.objects.get().node_name == "n1"


def test_a_v1_cluster_round_trips_byte_identical_through_the_commands(tmp_path, capsys):
    from allocation.services.reconcile import reconcile
    from tests import v1_cluster as v1

    path = tmp_path / "v1.yaml"
    path.write_text(f.to_yaml(v1.cluster()))
    assert _run(capsys, "import", str(path))[0] == 0
    reconcile()  # allocations, reservations and Events are exported too
    code, out, _ = _run(capsys, "export")
    assert code == 0 and "apiVersion: resource.k8s.io/v1\n  kind: ResourceClaim" in out
    assert "shareID:" in out
    exported = tmp_path / "export.yaml"
    exported.write_text(out)
    assert _run(capsys, "import", "--replace", str(exported))[0] == 0
    assert _run(capsys, "export")[1] == out
    first = _run(capsys, "export", "-o", "json")[1]
    (tmp_path / "e.json").write_text(first)
    assert _run(capsys, "import", "--replace", str(tmp_path / "e.json"))[0] == 0
    assert _run(capsys, "export", "-o", "json")[1] == first
    assert models.ResourceClaimV1.objects.get(name="c1").status == "Reserved"


def test_import_warns_of_a_selector_attribute_no_device_has(tmp_path, capsys):
    path = tmp_path / "cluster.yaml"
    devices = [f.device("d0", productName=("string", "T4"))]
    path.write_text(f.to_yaml([f.node("n1"), f.named_slice("n1", devices),
                               f.class_parameters("t4", 'strings["prodName"] == "T4"')]))

    code, out, err = _run(capsys, "import", str(path))

    assert code == 0 and out.startswith("imported: 3 created")
    assert err.splitlines() == [
        f"warning: {path}:3 (ResourceClassParameters t4): filters[0]."
        "namedResourcesWithAttributes.selector: no device in the cluster has an attribute "
        "'prodName' (did you mean productName?)"]
    assert models.ResourceClassParameters.objects.filter(name="t4").exists()

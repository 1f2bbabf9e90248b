"""clusters/commands.py: ``manage.py import --kubeconfig`` and ``manage.py mirror``."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from allocation.models import Pod
from tests.clusters.objects import pod

pytestmark = pytest.mark.django_db


def _run(*args, **options):
    out, err = io.StringIO(), io.StringIO()
    code = 0
    try:
        call_command(*args, stdout=out, stderr=err, **options)
    except SystemExit as exc:
        code = exc.code
    return code, out.getvalue(), err.getvalue()


def test_import_from_a_kubeconfig(kubeconfig, fake):
    code, out, err = _run("import", kubeconfig=str(kubeconfig))
    assert code == 0
    assert out.startswith("imported from prod-eu: 1 Namespace, 2 Node, 1 DeviceClass")
    assert "pods: 2 listed" in err and "reading context prod-eu at http://127.0.0.1" in err
    assert Pod.objects.count() == 2
    assert fake.verbs() == {"GET"}


def test_import_names_the_context(kubeconfig, fake):
    code, out, _err = _run("import", kubeconfig=str(kubeconfig), context="prod-eu")
    assert code == 0 and "prod-eu" in out


def test_import_reports_invalid_objects_and_imports_the_rest(kubeconfig, fake):
    bad = pod("broken")
    bad["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "lots"
    fake.put(bad)
    code, out, err = _run("import", kubeconfig=str(kubeconfig))
    assert code == 0
    assert "left out: prod-eu:Pod:1 (Pod default/broken): spec.containers[0]" in err
    assert "1 problem(s), those objects left out" in out
    assert Pod.objects.count() == 2


def test_a_refused_list_names_the_permission(kubeconfig, fake):
    fake.forbidden.add("/apis/resource.k8s.io/v1/resourceslices")
    code, _out, err = _run("import", kubeconfig=str(kubeconfig))
    assert code == 2
    assert "error: list resourceslices.resource.k8s.io: forbidden" in err
    assert "nothing was imported." in err
    assert Pod.objects.count() == 0


def test_files_and_a_cluster_are_exclusive(kubeconfig):
    with pytest.raises(CommandError, match="not both"):
        call_command("import", "x.yaml", kubeconfig=str(kubeconfig))
    with pytest.raises(CommandError, match="FILE"):
        call_command("import")


def test_mirror_without_a_cluster_exits_2(tmp_path):
    code, _out, err = _run("mirror", kubeconfig=str(tmp_path / "absent"))
    assert code == 2 and "kubeconfig" in err and "nothing was mirrored." in err

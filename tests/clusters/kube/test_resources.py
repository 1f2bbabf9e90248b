"""clusters/kube/resources.py: the kinds read, and the documented ClusterRole grants exactly
them (docs/rbac/draplanner-mirror.yaml)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from clusters.kube.resources import RESOURCES, by_kind

ROLE = Path(__file__).resolve().parents[3] / "docs" / "rbac" / "draplanner-mirror.yaml"


def test_the_cluster_role_grants_exactly_get_list_watch_on_the_kinds_read():
    role = next(d for d in yaml.safe_load_all(ROLE.read_text()) if d["kind"] == "ClusterRole")
    granted = set()
    for rule in role["rules"]:
        assert sorted(rule["verbs"]) == ["get", "list", "watch"]
        granted |= {(g, r) for g in rule["apiGroups"] for r in rule["resources"]}
    assert granted == {(r.group, r.plural) for r in RESOURCES}


def test_paths_and_names():
    pods = by_kind("Pod")
    assert pods.path == "/api/v1/pods" and pods.name == "pods"
    claims = by_kind("ResourceClaim")
    assert claims.candidates == ("v1", "v1beta2", "v1beta1")
    assert claims.name == "resourceclaims.resource.k8s.io"
    with pytest.raises(KeyError):
        by_kind("Secret")

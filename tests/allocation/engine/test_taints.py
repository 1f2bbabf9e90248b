"""Kubernetes' taint and toleration rule (``allocation/engine/taints.py``)."""

from __future__ import annotations

import pytest

from allocation.engine.taints import (
    UNSCHEDULABLE_TAINT,
    cordon_refuses,
    taint_text,
    tolerates,
    untolerated,
)

GPU = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}


@pytest.mark.parametrize(("toleration", "expected"), [
    ({"key": "nvidia.com/gpu", "operator": "Equal", "value": "present",
      "effect": "NoSchedule"}, True),
    ({"key": "nvidia.com/gpu", "value": "present"}, True),  # Equal by default, any effect
    ({"key": "nvidia.com/gpu", "value": "absent"}, False),
    ({"key": "nvidia.com/gpu"}, False),  # Equal to the empty value
    ({"key": "nvidia.com/gpu", "operator": "Exists"}, True),
    ({"operator": "Exists"}, True),  # an empty key with Exists tolerates every taint
    ({"operator": "Exists", "effect": "NoExecute"}, False),
    ({"key": "other", "operator": "Exists"}, False),
    ({"key": "nvidia.com/gpu", "operator": "Gt", "value": "1"}, False),  # gate off upstream
])
def test_tolerates_follows_toleration_go(toleration, expected):
    assert tolerates(toleration, GPU) is expected


def test_untolerated_reads_blocking_effects_in_order():
    soft = {"key": "a", "effect": "PreferNoSchedule"}
    evict = {"key": "b", "effect": "NoExecute"}
    assert untolerated([soft, GPU, evict], []) == GPU
    assert untolerated([soft, GPU, evict], [{"key": "nvidia.com/gpu", "operator": "Exists"}]) \
        == evict
    assert untolerated([soft], []) is None
    assert untolerated([soft], [], every_effect=True) == soft


def test_a_cordon_refuses_unless_its_taint_is_tolerated():
    assert cordon_refuses([])
    assert cordon_refuses([{"key": "nvidia.com/gpu", "operator": "Exists"}])
    assert not cordon_refuses([{"key": UNSCHEDULABLE_TAINT["key"], "operator": "Exists"}])
    assert not cordon_refuses([{"operator": "Exists"}])


def test_taint_text_is_kubectl_taint_form():
    assert taint_text(GPU) == "nvidia.com/gpu=present:NoSchedule"
    assert taint_text({"key": "k", "effect": "NoExecute"}) == "k:NoExecute"

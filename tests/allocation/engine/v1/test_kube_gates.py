"""kube-scheduler's feature gates beyond the DRA ones (``v1/kube_gates.py``)."""

from __future__ import annotations

from allocation.engine.v1.features import GATES, RELEASES
from allocation.engine.v1.kube_gates import KUBE_GATES


def test_the_kube_gate_table_is_well_formed_and_apart_from_the_dra_table():
    assert not set(KUBE_GATES) & set(GATES)
    assert "AllAlpha" not in KUBE_GATES and "AllBeta" not in KUBE_GATES  # flags, not gates
    for name, specs in KUBE_GATES.items():
        assert len(specs) == len(RELEASES), name
        for spec in specs:
            assert spec is None or (spec[0] in ("ALPHA", "BETA", "GA", "DEPRECATED")
                                    and isinstance(spec[1], bool)
                                    and isinstance(spec[2], bool)), name


def test_a_few_gates_read_as_their_releases_ship_them():
    assert KUBE_GATES["SchedulerQueueingHints"] == (("GA", True, True),) * 3
    assert KUBE_GATES["InPlacePodVerticalScaling"] == (
        ("BETA", True, False), ("GA", True, True), ("GA", True, True))
    assert KUBE_GATES["DRAWorkloadResourceClaims"] == (None, None, ("ALPHA", False, False))

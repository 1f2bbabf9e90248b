"""Kubernetes profiles: gate defaults, ``--feature-gates`` parsing, allocator variants."""

from __future__ import annotations

import pytest

from allocation.engine.v1 import (
    FeatureGateError,
    ignored_gates,
    make_profile,
    parse_feature_gates,
)
from allocation.engine.v1.features import GATES


def test_default_profile_is_136_incubating_with_every_feature():
    # 1.36 promoted binding conditions and consumable capacity to incubating; experimental
    # adds only list-type attributes (off)
    p = make_profile()
    assert p.release == "1.36"
    assert p.variant == "incubating"
    assert make_profile("1.36", "DRAListTypeAttributes=true").variant == "experimental"
    assert all([p.admin_access, p.prioritized_list, p.partitionable_devices, p.device_taints,
                p.binding_and_status, p.consumable_capacity, p.extended_resource])
    assert not p.list_type_attributes
    assert not p.enabled("DRADeviceTaintRules")


def test_135_default_is_incubating():
    p = make_profile("1.35")
    assert p.variant == "incubating"
    assert not p.partitionable_devices and not p.device_taints


def test_variant_follows_the_enabled_features():
    assert make_profile("1.35", "DRAAdminAccess=false,DRAPrioritizedList=false").variant \
        == "stable"
    assert make_profile("1.35", "DRAConsumableCapacity=true").variant == "experimental"
    # v0.36.2 stable supports admin access, prioritized list, partitionable devices, taints
    assert make_profile("1.36", "DRAConsumableCapacity=false,DRADeviceBindingConditions=false"
                        ).variant == "stable"
    # the 1.36 incubating code knows distinctAttribute and binding-condition pool order
    p = make_profile("1.36", "DRADeviceBindingConditions=false")
    assert p.distinct_attribute and p.binding_slices_last and p.capacity_gate_checked
    p = make_profile("1.35")
    assert not (p.distinct_attribute or p.binding_slices_last or p.capacity_gate_checked)


def test_release_quirks():
    p34, p35, p36 = (make_profile(r) for r in ("1.34", "1.35", "1.36"))
    assert p34.incomplete_pools_for_exact_count and not p35.incomplete_pools_for_exact_count
    assert p34.invalid_pools_fatal and not p36.invalid_pools_fatal
    assert not p34.copy_tolerations and p35.copy_tolerations
    assert p35.all_subrequest_bug and not p36.all_subrequest_bug
    assert p36.combinations and not p35.combinations
    assert p34.max_taints == 4 and p36.max_taints == 16


def test_cel_compatibility_is_the_release_before():
    assert [make_profile(r).cel_compatibility for r in ("1.34", "1.35", "1.36")] == [
        (1, 33), (1, 34), (1, 35)]


def test_136_stable_knows_admin_access_so_it_stays_in_reach():
    p = make_profile("1.36", "AllBeta=false,DRAPrioritizedList=false")
    assert p.variant == "stable"
    assert not p.combinations
    assert not (p.distinct_attribute or p.binding_slices_last or p.capacity_gate_checked)
    assert make_profile("1.35", "DRAAdminAccess=false,DRAPrioritizedList=false").variant \
        == "stable"


def test_all_alpha_and_all_beta_leave_explicit_gates_alone():
    gates = parse_feature_gates("AllAlpha=true,DRAConsumableCapacity=false", "1.35")
    assert gates["DRAPartitionableDevices"] is True
    assert gates["DRAConsumableCapacity"] is False
    assert "DRAAdminAccess" not in gates
    gates = parse_feature_gates("AllBeta=false", "1.36")
    assert gates["DRADeviceTaints"] is False and "DRAAdminAccess" not in gates


@pytest.mark.parametrize("text, message", [
    ("Nope=true", "unrecognized feature gate: Nope"),
    ("DRAAdminAccess", "missing bool value for DRAAdminAccess"),
    ("DRAAdminAccess=yes", 'invalid value of DRAAdminAccess=yes, err: strconv.ParseBool'),
    ("DRAAdminAccess=false", "cannot set feature gate DRAAdminAccess to false, feature is "
                             "locked to true"),
    ("DRAListTypeAttributes=true", None),
])
def test_gate_errors_136(text, message):
    if message is None:
        assert parse_feature_gates(text, "1.36") == {"DRAListTypeAttributes": True}
        return
    with pytest.raises(FeatureGateError, match=message):
        parse_feature_gates(text, "1.36")


def test_gate_unknown_to_an_older_release():
    with pytest.raises(FeatureGateError, match="unrecognized feature gate"):
        parse_feature_gates("DRAListTypeAttributes=true", "1.35")
    assert parse_feature_gates("DRAAdminAccess=false", "1.35") == {"DRAAdminAccess": False}


def test_locked_gate_may_be_set_to_its_value_and_bad_release_is_refused():
    assert parse_feature_gates("DRAAdminAccess=true", "1.36") == {"DRAAdminAccess": True}
    with pytest.raises(FeatureGateError, match="unsupported Kubernetes version"):
        make_profile("1.33")


def test_kube_schedulers_other_gates_are_checked_as_it_checks_them_and_have_no_effect():
    # kube_gates.KUBE_GATES: every gate kube-scheduler knows beside the DRA ones
    assert parse_feature_gates("SchedulerQueueingHints=true,DRAConsumableCapacity=true",
                               "1.35") == {"DRAConsumableCapacity": True}
    with pytest.raises(FeatureGateError, match="cannot set feature gate "
                       "SchedulerQueueingHints to false, feature is locked to true"):
        parse_feature_gates("SchedulerQueueingHints=false", "1.36")
    # a gate's stage and lock follow the release: beta in 1.34, GA and locked from 1.35
    assert parse_feature_gates("InPlacePodVerticalScaling=false", "1.34") == {}
    with pytest.raises(FeatureGateError, match="locked to true"):
        parse_feature_gates("InPlacePodVerticalScaling=false", "1.35")
    # 1.36's newer DRA gates the planner does not model: known to 1.36 only
    assert parse_feature_gates("DRAWorkloadResourceClaims=true", "1.36") == {}
    with pytest.raises(FeatureGateError, match="unrecognized feature gate"):
        parse_feature_gates("DRAWorkloadResourceClaims=true", "1.35")
    # AllAlpha reaches them too, but a profile holds only the gates it models
    assert set(make_profile("1.36", "AllAlpha=true").gates) <= set(GATES)
    assert ignored_gates("SchedulerQueueingHints=true,AllAlpha=true,DRAAdminAccess=true,"
                         "DRAWorkloadResourceClaims=false") == [
        "SchedulerQueueingHints", "DRAWorkloadResourceClaims"]


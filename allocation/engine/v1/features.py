"""Kubernetes profiles for the v1 allocator: feature gates, the allocator variant, quirks.

A profile is one Kubernetes release (1.34, 1.35 or 1.36, see docs/v1.md) with the gate
defaults of its ``pkg/features/kube_features.go`` and the behaviours in which that
release's allocator differs from the others (the [1.34]/[1.35]/[1.36+] marks of the v1
contract). ``--feature-gates`` is parsed as kube-scheduler's flag parses it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from allocation.engine.v1.kube_gates import KUBE_GATES

__all__ = [
    "DEFAULT_RELEASE",
    "GATES",
    "RELEASES",
    "FeatureGateError",
    "Profile",
    "make_profile",
    "parse_feature_gates",
    "ignored_gates",
]

RELEASES = ("1.34", "1.35", "1.36")
DEFAULT_RELEASE = "1.36"

# Gate -> per release (stage, default, locked); None: the release does not know the gate.
_ALPHA, _BETA, _GA = "ALPHA", "BETA", "GA"
GATES: dict[str, tuple] = {
    "DynamicResourceAllocation": ((_GA, True, False), (_GA, True, True), (_GA, True, True)),
    "DRAAdminAccess": ((_BETA, True, False), (_BETA, True, False), (_GA, True, True)),
    "DRAPrioritizedList": ((_BETA, True, False), (_BETA, True, False), (_GA, True, False)),
    "DRAResourceClaimDeviceStatus": ((_BETA, True, False),) * 3,
    "DRASchedulerFilterTimeout": ((_BETA, True, False),) * 3,
    "DRAPartitionableDevices": ((_ALPHA, False, False), (_ALPHA, False, False),
                                (_BETA, True, False)),
    "DRADeviceTaints": ((_ALPHA, False, False), (_ALPHA, False, False), (_BETA, True, False)),
    "DRADeviceTaintRules": (None, (_ALPHA, False, False), (_BETA, False, False)),
    "DRADeviceBindingConditions": ((_ALPHA, False, False), (_ALPHA, False, False),
                                   (_BETA, True, False)),
    "DRAConsumableCapacity": ((_ALPHA, False, False), (_ALPHA, False, False),
                              (_BETA, True, False)),
    "DRAExtendedResource": ((_ALPHA, False, False), (_ALPHA, False, False),
                            (_BETA, True, False)),
    "DRAListTypeAttributes": (None, None, (_ALPHA, False, False)),
}

# The allocator variants in upstream's order of preference, with the optional features
# each supports (structured/internal/*: SupportedFeatures).
_INCUBATING = frozenset({"admin_access", "prioritized_list", "partitionable_devices",
                         "device_taints"})
_VARIANTS = (
    ("stable", frozenset()),
    ("incubating", _INCUBATING),
    ("experimental", _INCUBATING | {"binding_and_status", "consumable_capacity",
                                    "list_type_attributes"}),
)
# 1.36 promoted the four features of the old incubating variant to stable, and binding
# conditions and consumable capacity to incubating (structured/internal/*
# SupportedFeatures of v0.36.2); experimental adds list types
_VARIANTS_136 = (
    ("stable", _INCUBATING),
    ("incubating", _INCUBATING | {"binding_and_status", "consumable_capacity"}),
    ("experimental", _INCUBATING | {"binding_and_status", "consumable_capacity",
                                    "list_type_attributes"}),
)


class FeatureGateError(ValueError):
    """A ``--feature-gates`` value kube-scheduler would refuse; the message is its own."""


def _gate_table(release: str, every: bool = False) -> dict[str, tuple]:
    """The DRA gates ``release`` knows, or with ``every`` all kube-scheduler knows."""
    index = RELEASES.index(release)
    tables = (GATES, KUBE_GATES) if every else (GATES,)
    return {name: spec[index] for table in tables for name, spec in table.items()
            if spec[index] is not None}


def parse_feature_gates(text: str, release: str = DEFAULT_RELEASE) -> dict[str, bool]:
    """Parse ``Name=true,Other=false`` (plus ``AllAlpha``/``AllBeta``) for ``release``.

    Returns the explicit settings of the DRA gates (:data:`GATES`), AllAlpha/AllBeta
    expanded onto those not set by name. Every other gate kube-scheduler knows
    (``kube_gates.KUBE_GATES``) is checked as it checks it, and has no effect here.
    Raises FeatureGateError as kube-scheduler does: an unknown gate, a value that is not a
    bool, a missing value, or a locked gate set against its locked value.
    """
    if not text.strip():  # the usual profile: no table of every gate to build
        return {}
    table = _gate_table(release, every=True)
    explicit: dict[str, bool] = {}
    alls: dict[str, bool] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        name, sep, raw = part.partition("=")
        name, raw = name.strip(), raw.strip()
        if not sep:
            raise FeatureGateError(f"missing bool value for {name}")
        value = _parse_bool(name, raw)
        if name in ("AllAlpha", "AllBeta"):
            alls[name] = value
            continue
        if name not in table:
            raise FeatureGateError(f"unrecognized feature gate: {name}")
        _stage, default, locked = table[name]
        if locked and value != default:
            raise FeatureGateError(
                f"cannot set feature gate {name} to {str(value).lower()}, "
                f"feature is locked to {str(default).lower()}")
        explicit[name] = value
    result = {name: value for name, value in explicit.items() if name in GATES}
    for all_name, stage in (("AllAlpha", _ALPHA), ("AllBeta", _BETA)):
        if all_name in alls:
            for name, (gate_stage, _default, locked) in _gate_table(release).items():
                if gate_stage == stage and name not in explicit and not locked:
                    result[name] = alls[all_name]
    return result


def ignored_gates(text: str) -> list[str]:
    """The gates ``--feature-gates`` ``text`` sets by name that the planner does not model:
    kube-scheduler's other gates, accepted by :func:`parse_feature_gates` without effect
    (for a warning)."""
    names = (part.partition("=")[0].strip() for part in text.split(","))
    return [name for name in names if name and name not in GATES
            and name not in ("AllAlpha", "AllBeta")]


def _parse_bool(name: str, raw: str) -> bool:
    # Go's strconv.ParseBool
    if raw in ("1", "t", "T", "true", "TRUE", "True"):
        return True
    if raw in ("0", "f", "F", "false", "FALSE", "False"):
        return False
    raise FeatureGateError(
        f'invalid value of {name}={raw}, err: strconv.ParseBool: parsing "{raw}": '
        "invalid syntax")


@dataclass(frozen=True)
class Profile:
    """One Kubernetes release with its effective gates; every quirk is a property here.

    The allocator reads the quirks in its innermost loops, so each is computed once per
    profile (``cached_property``); ``gates`` must not change after construction.
    """

    release: str = DEFAULT_RELEASE
    gates: dict[str, bool] = field(default_factory=dict)

    def enabled(self, gate: str) -> bool:
        """Whether ``gate`` is on (unknown to the release: off)."""
        return self.gates.get(gate, False)

    # -- allocator features (upstream's Features struct) --
    @cached_property
    def admin_access(self) -> bool:
        return self.enabled("DRAAdminAccess")

    @cached_property
    def prioritized_list(self) -> bool:
        return self.enabled("DRAPrioritizedList")

    @cached_property
    def partitionable_devices(self) -> bool:
        return self.enabled("DRAPartitionableDevices")

    @cached_property
    def device_taints(self) -> bool:
        return self.enabled("DRADeviceTaints")

    @cached_property
    def binding_and_status(self) -> bool:
        return (self.enabled("DRADeviceBindingConditions")
                and self.enabled("DRAResourceClaimDeviceStatus"))

    @cached_property
    def consumable_capacity(self) -> bool:
        return self.enabled("DRAConsumableCapacity")

    @cached_property
    def extended_resource(self) -> bool:
        return self.enabled("DRAExtendedResource")

    @cached_property
    def list_type_attributes(self) -> bool:
        return self.enabled("DRAListTypeAttributes")

    @cached_property
    def list_type_fields(self) -> bool:
        """Whether the release's API types have the list types of a device attribute
        (``ints`` ...: 1.36 on, behind DRAListTypeAttributes); before, they are unknown."""
        return self._minor >= 36

    @cached_property
    def drops_list_types(self) -> bool:
        """Whether loading drops every list-type attribute (1.36 with the gate off, the
        default): then none reaches a rule or the allocator."""
        return self.list_type_fields and not self.list_type_attributes

    @cached_property
    def selector_options(self) -> dict[str, bool]:
        """The gates a v1 device selector compiles under, as keyword arguments of
        ``cel.compile_device_selector`` and ``check_new_device_selector``."""
        return {"consumable_capacity": self.consumable_capacity,
                "list_type_attributes": self.list_type_attributes}

    @cached_property
    def filter_timeout(self) -> bool:
        """kube-scheduler's DRA Filter gives up on a node after ``filterTimeout`` (10 s by
        default with this gate; ``search.TIMEOUT_STEPS`` here)."""
        return self.enabled("DRASchedulerFilterTimeout")

    @cached_property
    def variant(self) -> str:
        """The first allocator variant supporting every enabled feature (docs/v1.md)."""
        wanted = {f for f in ("admin_access", "prioritized_list", "partitionable_devices",
                              "device_taints", "binding_and_status", "consumable_capacity",
                              "list_type_attributes") if getattr(self, f)}
        for name, supported in self._variants:
            if wanted <= supported:
                return name
        return "experimental"

    @property
    def _variants(self) -> tuple:
        return _VARIANTS_136 if self._minor >= 36 else _VARIANTS

    def _supports(self, feature: str) -> bool:
        """Whether the chosen variant's code knows ``feature`` (enabled or not)."""
        return feature in dict(self._variants)[self.variant]

    @property
    def capacity_gate_checked(self) -> bool:
        """The variant knows consumable capacity, so capacity requests with the gate off
        are a preflight error; older variants ignore them."""
        return self._supports("consumable_capacity")

    # -- release quirks --
    @cached_property
    def _minor(self) -> int:
        return int(self.release.split(".")[1])

    @cached_property
    def combinations(self) -> bool:
        """[1.36+] later slots of a request scan on after the previous pick (PR #133678);
        the stable variant of 1.36 still scans from the start."""
        return self._minor >= 36 and self.variant != "stable"

    @cached_property
    def node_slices_first(self) -> bool:
        """[1.36+, not the stable variant] a node's pools are gathered from its own slices
        (``nodeName``, no shared counters) before the others (``NewAllocator``'s
        ``slicesOnNode`` and ``slicesShared``), so a pool's first slice, whose
        ``resourceSliceCount`` counts, is one of its node slices when it has one."""
        return self._minor >= 36 and self.variant != "stable"

    @cached_property
    def incomplete_pools_for_exact_count(self) -> bool:
        """[1.34] ExactCount requests still used incomplete pools."""
        return self._minor == 34

    @cached_property
    def legacy_pools(self) -> bool:
        """[1.34] pools from node-matching slices only, complete when the kept slices number
        resourceSliceCount, invalid only for duplicate device names; shared counters are
        local to their slice."""
        return self._minor == 34

    @cached_property
    def invalid_pools_fatal(self) -> bool:
        """[1.34] a search reaching an invalid pool fails with a fatal error."""
        return self._minor == 34

    @cached_property
    def copy_tolerations(self) -> bool:
        """[1.35+] results copy the request's tolerations."""
        return self._minor >= 35

    @cached_property
    def block_owner_deletion(self) -> bool:
        """[1.34] the pod's owner reference on a claim made from a template or for extended
        resources sets ``blockOwnerDeletion`` (dropped in 1.35, kubernetes PR #134956)."""
        return self._minor == 34

    @cached_property
    def all_subrequest_bug(self) -> bool:
        """[1.35 and before] an All subrequest at position >= 2 continues after its first
        device with the first subrequest's data."""
        return self._minor <= 35

    @cached_property
    def second_all_subrequest_lists_first(self) -> bool:
        """[1.35 and before] when subrequests 0 and 1 of a request are both All, the
        preflight lists for subrequest 1 the devices subrequest 0 selects (upstream looks
        subrequest i up under subrequest i-1's selector-cache key; fixed in 1.36)."""
        return self._minor <= 35

    @cached_property
    def counters_count_shared(self) -> bool:
        """[1.36+] a device allocated only through shared results still consumes its
        counters when availability is computed (IsDeviceAllocated)."""
        return self._minor >= 36

    @cached_property
    def distinct_attribute(self) -> bool:
        """distinctAttribute constraints exist only in the variants with consumable capacity
        (experimental; from 1.36 incubating too)."""
        return self._supports("consumable_capacity")

    @cached_property
    def binding_slices_last(self) -> bool:
        """The variants with binding conditions put pools with binding-condition devices
        last (experimental; from 1.36 incubating too), whether the gate is on or not."""
        return self._supports("binding_and_status")

    @cached_property
    def binding_slices_last_in_pool(self) -> bool:
        """[1.34/1.35 experimental] slices with binding-condition devices were added to
        their pool after the others."""
        return self._supports("binding_and_status") and self._minor <= 35

    @cached_property
    def capacity_reads_slot_device(self) -> bool:
        """[1.34] the capacity check of a pick read the device at the slot's index in the
        candidate's slice (v0.34.9 experimental allocateDevice), see capacity.slot_device."""
        return self._minor == 34

    @cached_property
    def shared_skips_counter_check(self) -> bool:
        """[1.35+] a multi-allocatable device with capacity already in use skips the counter
        check (allocateDevice's skipCounterCheck); v0.34.9 checks, and consumes, the
        counters of every pick."""
        return self._minor >= 35

    @cached_property
    def distinct_by_identity(self) -> bool:
        """[1.34] distinctAttribute compared the values' pointers, so only the same device
        picked again is a duplicate (structured/internal/experimental/constraint.go)."""
        return self._minor == 34

    @property
    def every_taint_blocks(self) -> bool:
        """[1.34] every taint must be tolerated, whatever its effect (allTaintsTolerated);
        from 1.35 only NoSchedule and NoExecute block."""
        return self._minor == 34

    @cached_property
    def max_taints(self) -> int:
        return 4 if self._minor == 34 else 16

    @cached_property
    def cel_compatibility(self) -> tuple[int, int]:
        """The API server's CEL compatibility version, (major, minor): the release before by
        default (component-base's MinCompatibilityVersion); a new selector may use only the
        CEL extensions Kubernetes had by then (``allocation.engine.cel.releases``)."""
        return (1, self._minor - 1)


def make_profile(release: str = DEFAULT_RELEASE, feature_gates: str = "") -> Profile:
    """The profile of ``release`` with ``--feature-gates`` applied.

    Raises FeatureGateError for an unknown release or a bad gate setting.
    """
    if release not in RELEASES:
        raise FeatureGateError(
            f"unsupported Kubernetes version {release!r}; use one of {', '.join(RELEASES)}")
    gates = {name: spec[1] for name, spec in _gate_table(release).items()}
    gates.update(parse_feature_gates(feature_gates, release))
    return Profile(release=release, gates=gates)

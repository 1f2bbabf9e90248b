"""The registry of kinds: group, name, served versions and scope, declared once per kind.

The manifest loader (``manifests/``) finds a document's schema through it, the engine
objects (``objects/``) and the console's models (``allocation/models/``) take their kind
name, scope and preferred API version from it, so adding a kind touches this table and the
kind's own class, schema and model, nothing else.

A :class:`KindSpec` is one kind *in one API group at a set of versions sharing one schema*;
the same kind name may appear in several specs (another group, or later versions of the
same group with another schema, as ``resource.k8s.io/v1`` next to ``v1alpha2``). Documents
are matched by ``(apiVersion, kind)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from allocation.engine.constants import PLANNER_GROUP, PROVISIONING_GROUP, RESOURCE_GROUP

__all__ = [
    "KindSpec", "KINDS", "UNSIMULATED_KINDS", "lookup", "specs_named", "specs_in_group",
    "namespaced", "scope",
    "NODE_RESOURCE_SLICE", "NODE_RESOURCE_CAPACITY", "RESOURCE_CLASS",
    "RESOURCE_CLASS_PARAMETERS", "RESOURCE_CLAIM_PARAMETERS", "RESOURCE_CLAIM",
    "RESOURCE_CLAIM_TEMPLATE", "POD_SCHEDULING_CONTEXT", "NODE_GROUP", "DRIVER_SIMULATION",
    "PROVISIONING_REQUEST", "NODE", "POD", "POD_TEMPLATE", "EVENT", "NAMESPACE",
    "DEVICE_CLASS", "RESOURCE_SLICE", "RESOURCE_CLAIM_V1", "RESOURCE_CLAIM_TEMPLATE_V1",
    "V1_VERSIONS", "V1_KINDS", "V1_KIND_SET",
]


@dataclass(frozen=True, slots=True)
class KindSpec:
    """One kind of one API group, served at ``versions`` (oldest first) with one schema."""

    group: str
    """The API group; empty for the core group (``apiVersion: v1``)."""
    name: str
    """The kind, as in a document's ``kind``."""
    versions: tuple[str, ...]
    namespaced: bool
    api_versions: tuple[str, ...] = field(init=False, compare=False, repr=False)
    """Every ``apiVersion`` this spec accepts (derived; read on every object made)."""
    preferred_version: str = field(init=False, compare=False, repr=False)
    """The ``apiVersion`` of objects the planner creates: the newest served."""

    _hash: int = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        versions = tuple(f"{self.group}/{v}" if self.group else v for v in self.versions)
        object.__setattr__(self, "api_versions", versions)
        object.__setattr__(self, "preferred_version", versions[-1])
        object.__setattr__(self, "_hash", hash(self._fields()))

    def _fields(self) -> tuple:
        return self.group, self.name, self.versions, self.namespaced

    # The dataclass's own equality and hash, the hash computed once and the same object
    # answered at once: specs are compared and hashed for every document loaded and every
    # object looked up by kind.
    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if other.__class__ is not KindSpec:
            return NotImplemented
        return self._fields() == other._fields()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return self._hash


NODE_RESOURCE_SLICE = KindSpec(RESOURCE_GROUP, "NodeResourceSlice", ("v1alpha2",), False)
NODE_RESOURCE_CAPACITY = KindSpec(RESOURCE_GROUP, "NodeResourceCapacity", ("v1alpha2",),
                                  False)
RESOURCE_CLASS = KindSpec(RESOURCE_GROUP, "ResourceClass", ("v1alpha2",), False)
RESOURCE_CLASS_PARAMETERS = KindSpec(RESOURCE_GROUP, "ResourceClassParameters", ("v1alpha2",),
                                     False)
RESOURCE_CLAIM_PARAMETERS = KindSpec(RESOURCE_GROUP, "ResourceClaimParameters", ("v1alpha2",),
                                     True)
RESOURCE_CLAIM = KindSpec(RESOURCE_GROUP, "ResourceClaim", ("v1alpha2",), True)
RESOURCE_CLAIM_TEMPLATE = KindSpec(RESOURCE_GROUP, "ResourceClaimTemplate", ("v1alpha2",), True)
POD_SCHEDULING_CONTEXT = KindSpec(RESOURCE_GROUP, "PodSchedulingContext", ("v1alpha2",), True)
NODE_GROUP = KindSpec(PLANNER_GROUP, "NodeGroup", ("v1alpha1",), False)
DRIVER_SIMULATION = KindSpec(PLANNER_GROUP, "DriverSimulation", ("v1alpha1",), False)
PROVISIONING_REQUEST = KindSpec(PROVISIONING_GROUP, "ProvisioningRequest", ("v1beta1", "v1"),
                                True)
NODE = KindSpec("", "Node", ("v1",), False)
POD = KindSpec("", "Pod", ("v1",), True)
POD_TEMPLATE = KindSpec("", "PodTemplate", ("v1",), True)
EVENT = KindSpec("", "Event", ("v1",), True)
NAMESPACE = KindSpec("", "Namespace", ("v1",), False)

V1_VERSIONS = ("v1beta1", "v1beta2", "v1")
"""The served versions of today's DRA kinds; v1beta1 and v1beta2 documents are converted to
v1 when read, so one (v1) schema checks them all (docs/v1.md, reading v1 manifests)."""
DEVICE_CLASS = KindSpec(RESOURCE_GROUP, "DeviceClass", V1_VERSIONS, False)
RESOURCE_SLICE = KindSpec(RESOURCE_GROUP, "ResourceSlice", V1_VERSIONS, False)
RESOURCE_CLAIM_V1 = KindSpec(RESOURCE_GROUP, "ResourceClaim", V1_VERSIONS, True)
RESOURCE_CLAIM_TEMPLATE_V1 = KindSpec(RESOURCE_GROUP, "ResourceClaimTemplate", V1_VERSIONS,
                                      True)
V1_KINDS = (DEVICE_CLASS, RESOURCE_SLICE, RESOURCE_CLAIM_V1, RESOURCE_CLAIM_TEMPLATE_V1)
"""The resource.k8s.io/v1 kinds, beside the seed v1alpha2 kinds of the same names."""
V1_KIND_SET = frozenset(V1_KINDS)
""":data:`V1_KINDS` for membership: one hash, not a comparison with each (every document
loaded is asked)."""

KINDS: tuple[KindSpec, ...] = (
    NODE_RESOURCE_SLICE, NODE_RESOURCE_CAPACITY, RESOURCE_CLASS, RESOURCE_CLASS_PARAMETERS,
    RESOURCE_CLAIM_PARAMETERS, RESOURCE_CLAIM, RESOURCE_CLAIM_TEMPLATE, POD_SCHEDULING_CONTEXT,
    NODE_GROUP, DRIVER_SIMULATION, PROVISIONING_REQUEST, NODE, POD, POD_TEMPLATE, EVENT,
    NAMESPACE, *V1_KINDS,
)
"""Every kind the planner reads, in the order problems and suggestions list them."""

UNSIMULATED_KINDS: dict[str, frozenset[str]] = {RESOURCE_GROUP: frozenset({"DeviceTaintRule"})}
"""Kinds of the planner's own groups that Kubernetes serves and the planner does not
simulate: read as vendor objects are (kept, written back unchanged) and warned of at
loading, not refused as unknown (docs/v1.md, "Not built yet")."""

_BY_API: dict[tuple[str, str], KindSpec] = {}
for _kind in KINDS:
    for _api_version in _kind.api_versions:
        if (_api_version, _kind.name) in _BY_API:
            raise RuntimeError(f"{_api_version} {_kind.name} is declared twice")
        _BY_API[(_api_version, _kind.name)] = _kind


def lookup(api_version: str, name: str) -> KindSpec | None:
    """The spec of documents of ``apiVersion``/``kind``, or None (a vendor object)."""
    return _BY_API.get((api_version, name))


_BY_NAME: dict[str, tuple[KindSpec, ...]] = {}
for _kind in KINDS:
    _BY_NAME[_kind.name] = (*_BY_NAME.get(_kind.name, ()), _kind)


def specs_named(name: str) -> tuple[KindSpec, ...]:
    """Every spec of the kind ``name``, in any group or version (looked up once per object
    in every scenario change and write: an index, not a scan)."""
    return _BY_NAME.get(name, ())


def specs_in_group(group: str) -> tuple[KindSpec, ...]:
    """Every spec of the API group ``group``."""
    return tuple(k for k in KINDS if k.group == group)


@lru_cache(maxsize=256)  # per object of an import or a scenario change: a set made once
def namespaced(name: str) -> bool | None:
    """Whether objects of the kind ``name`` are namespaced; None for a kind not listed.

    Raises:
        ValueError: if two specs of that name disagree (a kind's scope never changes).
    """
    scopes = {k.namespaced for k in specs_named(name)}
    if len(scopes) > 1:
        raise ValueError(f"kind {name} is namespaced in some API versions only")
    return next(iter(scopes), None)


def scope(kind: str, namespace: str | None) -> str | None:
    """The namespace an object of ``kind`` is keyed under, as the loader keys it
    (``ObjectMeta.from_raw``): a namespaced kind's absent namespace is ``default``, a
    cluster-scoped kind has none, a kind not listed (a vendor object's) keeps what it says.

    Raises:
        ValueError: as :func:`namespaced`.
    """
    scoped = namespaced(kind)
    if scoped is None:
        return namespace  # vendor objects: scope as written
    return (namespace or "default") if scoped else None

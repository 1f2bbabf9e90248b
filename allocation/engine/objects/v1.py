"""The resource.k8s.io/v1 kinds, typed for the engine (docs/v1.md).

Namespace is a registered kind (its labels are checked, and the loader reads the
admin-access label) but stays an ``OpaqueObject``, stored and written as before.

Each object holds the validated, defaulted v1 document the loader made
(``manifests/v1_convert``), whatever version was read, and writes v1 back. Accessors give
the plain v1 dicts the allocator (``allocation/engine/v1``) works on; a claim's status
(allocation, reservations, device statuses) is state the claim controller and the
scheduler change and ``to_manifest`` writes in a fixed field order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from allocation.engine import kinds
from allocation.engine.objects.clone import own_parts
from allocation.engine.objects.meta import KObject, ObjectMeta, json_copy

__all__ = ["DeviceClass", "ResourceSlice", "ResourceClaimV1",
           "ResourceClaimTemplateV1", "DeviceRequest", "implicit_extended_resource_name"]

_EXTENDED_PREFIX = "deviceclass.resource.kubernetes.io/"


def implicit_extended_resource_name(class_name: str) -> str:
    """The extended resource name every DeviceClass has besides an explicit one (KEP-5004)."""
    return f"{_EXTENDED_PREFIX}{class_name}"


class DeviceClass(KObject):
    kind_spec = kinds.DEVICE_CLASS

    def __init__(self, raw: dict, source=None) -> None:
        super().__init__(raw, source)
        spec = raw.get("spec") or {}
        self.spec: dict = spec
        self.selectors: list[str] = [s["cel"]["expression"] for s in spec.get("selectors")
                                     or ()]
        """The CEL expressions, in order."""
        self.config: list[dict] = list(spec.get("config") or ())
        self.extended_resource_name: str | None = spec.get("extendedResourceName")

    @property
    def extended_resource_names(self) -> tuple[str, ...]:
        """The explicit name (if any) and the implicit one."""
        implicit = implicit_extended_resource_name(self.name)
        explicit = self.extended_resource_name
        return (explicit, implicit) if explicit else (implicit,)

    def as_v1(self) -> dict:
        """The v1 document, as the allocator takes classes."""
        return self.to_manifest()


class ResourceSlice(KObject):
    kind_spec = kinds.RESOURCE_SLICE

    def __init__(self, raw: dict, source=None) -> None:
        super().__init__(raw, source)
        spec = raw["spec"]
        self.spec: dict = spec
        self.driver: str = spec["driver"]
        pool = spec["pool"]
        self.pool_name: str = pool["name"]
        self.pool_generation: int = pool.get("generation", 0)
        self.resource_slice_count: int = pool["resourceSliceCount"]
        self.node_name: str | None = spec.get("nodeName")
        self.node_selector: dict | None = spec.get("nodeSelector")
        self.all_nodes: bool = spec.get("allNodes") is True
        self.per_device_node_selection: bool = spec.get("perDeviceNodeSelection") is True
        self.devices: list[dict] = list(spec.get("devices") or ())
        self.shared_counters: list[dict] = list(spec.get("sharedCounters") or ())

    @property
    def pool_key(self) -> tuple[str, str]:
        """``(driver, pool name)``: pools are per driver (spec section 3.2)."""
        return self.driver, self.pool_name

    @property
    def device_names(self) -> list[str]:
        return [d["name"] for d in self.devices]

    def device(self, name: str) -> dict | None:
        """The device called ``name`` in this slice, or None."""
        return next((d for d in self.devices if d["name"] == name), None)

    def as_v1(self) -> dict:
        """The slice as the allocator takes it: its name and its (v1) spec, shared, not
        copied (the allocator never changes a slice; copying every slice was the first
        cost of a scheduler pass on a large cluster)."""
        return {"apiVersion": self.api_version, "kind": self.kind_name,
                "metadata": {"name": self.name}, "spec": self.spec}


class DeviceRequest:
    """One entry of a claim's ``spec.devices.requests``: ``exactly`` or ``firstAvailable``."""

    __slots__ = ("name", "exactly", "first_available")

    def __init__(self, raw: dict) -> None:
        self.name: str = raw["name"]
        self.exactly: dict | None = raw.get("exactly")
        self.first_available: list[dict] = list(raw.get("firstAvailable") or ())

    @property
    def class_names(self) -> list[str]:
        """The DeviceClasses this request (or any of its subrequests) names, in order."""
        if self.exactly is not None:
            return [self.exactly["deviceClassName"]]
        return [sub["deviceClassName"] for sub in self.first_available]

    @property
    def admin_access(self) -> bool:
        return bool((self.exactly or {}).get("adminAccess"))

    def __repr__(self) -> str:
        return f"<DeviceRequest {self.name}>"


def _claim_devices(spec: dict) -> dict:
    return spec.get("devices") or {}


def _controller_pod(owner_references: list[dict]) -> tuple[str, str] | None:
    """``(name, uid)`` of the Pod among ``owner_references`` marked as the controller."""
    for ref in owner_references:
        if ref.get("controller") and ref.get("kind") == "Pod" and ref.get("apiVersion") == "v1":
            return ref.get("name", ""), ref.get("uid", "")
    return None


class ResourceClaimV1(KObject):
    """A v1 ResourceClaim: its spec (immutable) and its status, which the engine changes."""

    kind_spec = kinds.RESOURCE_CLAIM_V1

    def __init__(self, raw: dict, source=None) -> None:
        super().__init__(raw, source)
        self.owner_pod: tuple[str, str] | None = _controller_pod(self.meta.owner_references)
        """``(name, uid)`` of the pod that controls the claim (a template claim's), if any:
        read once, as the engine never changes a claim's owners (asked per pod visit of
        the v1 claim controller)."""
        self.spec: dict = raw["spec"]
        devices = _claim_devices(self.spec)
        self.requests: list[DeviceRequest] = [DeviceRequest(r) for r in
                                              devices.get("requests") or ()]
        self.constraints: list[dict] = list(devices.get("constraints") or ())
        self.config: list[dict] = list(devices.get("config") or ())
        self._spec_key: str | None = None  # spec_key, made when first asked
        self._read_status(raw)

    def _read_status(self, raw: dict) -> None:
        status = raw.get("status")
        if not status:  # a claim made from a template (every pod's): nothing to copy
            self.allocation: dict | None = None
            self.reserved_for: list[dict] = []
            self.device_statuses: list[dict] = []
            self._status_extra: dict = {}
            return
        # the parts the engine may change in place the claim's own, deeper ones shared
        # with the document, as a copy on write shares them (objects/clone.py): a deep
        # copy of every allocated claim's status was 50 MB at 40,000 claims
        self.allocation = own_parts(status.get("allocation"))
        self.reserved_for = own_parts(list(status.get("reservedFor") or ()))
        self.device_statuses = own_parts(list(status.get("devices") or ()))
        self._status_extra = {k: own_parts(v) for k, v in status.items()
                              if k not in ("allocation", "reservedFor", "devices")}

    @classmethod
    def made_from(cls, raw: dict, template: ResourceClaimTemplateV1,
                  meta: ObjectMeta | None = None,
                  owner: tuple[str, str] | None = None) -> ResourceClaimV1:
        """The claim of ``raw`` (a new claim made from ``template``, without status): when
        its spec is the template's very claim spec, the template's parsed requests,
        constraints and config and its spec key are the claim's too (one parse per
        template, not per pod: docs/v1.md, "Speed"), else it is read as any claim.

        ``meta`` and ``owner``, when given, are what the claim would read from ``raw``
        (``ObjectMeta.from_raw`` of its metadata, and :attr:`owner_pod`), as the caller
        made them with it (``ClaimPrototype.made``, for the pod it names owner: its
        document has an ``apiVersion``).

        Returns:
            The claim, equal to ``ResourceClaimV1(raw)``.
        """
        if raw["spec"] is not template.claim_spec:
            return cls(raw)
        claim = cls.__new__(cls)
        if meta is None:
            KObject.__init__(claim, raw)
        else:
            claim.read_with(raw, meta)
        claim.owner_pod = owner if owner is not None else _controller_pod(
            claim.meta.owner_references)
        claim.spec = template.claim_spec
        claim.requests = list(template.requests)  # the entries are read only, never changed
        claim.constraints = list(template.claim_constraints)
        claim.config = list(template.claim_config)
        claim._read_status(raw)
        claim._spec_key = template.claim_spec_key
        return claim

    @property
    def spec_key(self) -> str:
        """A key equal for equal specs, for the v1 scheduler's caches (computed once: the
        spec is immutable). ``repr``, not sorted JSON: claims from one template repeat its
        key order, and a spec written in another order only misses a cache."""
        # an attribute, never through ``__dict__`` (objects/meta.py ``_Key`` says why)
        key = self._spec_key
        if key is None:
            key = self._spec_key = repr(self.spec)
        return key

    @property
    def request_names(self) -> list[str]:
        return [r.name for r in self.requests]

    @property
    def class_names(self) -> list[str]:
        """Every DeviceClass the claim names, in request order, without repeats."""
        return list(dict.fromkeys(n for r in self.requests for n in r.class_names))

    @property
    def allocated(self) -> bool:
        return self.allocation is not None

    @property
    def results(self) -> list[dict]:
        """``status.allocation.devices.results`` (empty when not allocated)."""
        return list(((self.allocation or {}).get("devices") or {}).get("results") or ())

    @property
    def reserved_pod_uids(self) -> list[str]:
        return [r["uid"] for r in self.reserved_for if r.get("resource") == "pods"]

    def as_v1(self) -> dict:
        """The v1 document with the current status, as the allocator takes claims."""
        return self.to_manifest()

    def status_manifest(self, copy_value: Callable[[Any], Any] = json_copy) -> Any:
        status: dict[str, Any] = {}
        if self.allocation is not None:
            status["allocation"] = copy_value(self.allocation)
        if self.reserved_for:
            status["reservedFor"] = copy_value(self.reserved_for)
        if self.device_statuses:
            status["devices"] = copy_value(self.device_statuses)
        status.update(copy_value(self._status_extra))
        return status


class ResourceClaimTemplateV1(KObject):
    """A v1 ResourceClaimTemplate: the metadata and spec of the claims made from it."""

    kind_spec = kinds.RESOURCE_CLAIM_TEMPLATE_V1

    def __init__(self, raw: dict, source=None) -> None:
        super().__init__(raw, source)
        spec = raw["spec"]
        self.claim_spec: dict = spec["spec"]
        template_meta = spec.get("metadata") or {}
        self.claim_labels: dict[str, str] = dict(template_meta.get("labels") or {})
        self.claim_annotations: dict[str, str] = dict(template_meta.get("annotations") or {})
        self._claim_spec_key: str | None = None  # claim_spec_key, made when first asked
        devices = _claim_devices(self.claim_spec)
        self.requests: list[DeviceRequest] = [DeviceRequest(r) for r in
                                              devices.get("requests") or ()]
        # a claim's parsed spec, as ResourceClaimV1 reads it (ResourceClaimV1.made_from)
        self.claim_constraints: list[dict] = list(devices.get("constraints") or ())
        self.claim_config: list[dict] = list(devices.get("config") or ())

    @property
    def class_names(self) -> list[str]:
        return list(dict.fromkeys(n for r in self.requests for n in r.class_names))

    @property
    def claim_spec_key(self) -> str:
        """``ResourceClaimV1.spec_key`` of the claims made from this template."""
        key = self._claim_spec_key
        if key is None:
            key = self._claim_spec_key = repr(self.claim_spec)
        return key

    def as_v1(self) -> dict:
        """A view of the v1 document for making claims (``v1/templates.py``): identity and
        ``spec`` (the input's, shared, never copied: readers copy what they keep)."""
        return {"apiVersion": self.api_version, "kind": self.kind_name,
                "metadata": {"name": self.name, "namespace": self.namespace},
                "spec": self.raw["spec"]}

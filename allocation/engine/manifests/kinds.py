"""Schemas of every kind the planner reads (spec section 2), one per registered kind spec.

Groups, versions and scopes are declared in ``allocation/engine/kinds.py``. Model-specific
fields (slice models, request and filter models, result models) come from the structured
model registry, so a newly registered model is validated like the built-in ones.
"""

from __future__ import annotations

from functools import lru_cache

from allocation.engine import kinds
from allocation.engine.constants import HANDLE_DATA_MAX, NODE_LIST_MAX
from allocation.engine.kinds import KindSpec
from allocation.engine.manifests.common import (
    generated_from,
    label_map,
    label_selector,
    metadata_schema,
    node_selector,
    object_metadata,
    parameters_ref,
    request_quantity_map,
)
from allocation.engine.manifests.k8s_schema import core_kind_schema
from allocation.engine.manifests.schema import (
    DNS_LABEL,
    DNS_SUBDOMAIN,
    AnyValue,
    Bool,
    Int,
    ListOf,
    MapOf,
    Obj,
    Schema,
    Str,
)
from allocation.engine.manifests.v1_schema import v1_schemas
from allocation.engine.models import registry
from allocation.engine.objects.planner import is_v1_slice_spec

__all__ = ["schema_of"]


def _doc(spec: KindSpec, fields: dict, required=(), open_: bool = False, **kw
         ) -> tuple[KindSpec, Obj]:
    """The schema of ``spec``'s documents: its fields besides apiVersion, kind, metadata."""
    base = {"apiVersion": Str(), "kind": Str(), "metadata": metadata_schema(spec.namespaced)}
    base.update(fields)
    return spec, Obj(base, required=("metadata", *required), open=open_, **kw)


def _slice_spec(with_node: bool) -> Obj:
    models = registry.slice_models()
    fields: dict[str, Schema] = {"driverName": Str(DNS_SUBDOMAIN)}
    if with_node:
        fields["nodeName"] = Str(DNS_SUBDOMAIN)
    for model in models:
        fields[model.name] = model.slice_schema
    required = ("nodeName", "driverName") if with_node else ("driverName",)
    return Obj(fields, required=required, one_of=(tuple(m.name for m in models),))


class _NodeGroupSlice(Schema):
    """An entry of a NodeGroup's ``resourceSlices``: a seed slice spec, or a
    resource.k8s.io/v1 one, which ``v1_node_groups`` checks under the Kubernetes
    profile."""

    def __init__(self) -> None:
        self.seed = _slice_spec(with_node=False)

    def check(self, value, path: str, problems) -> None:
        if not is_v1_slice_spec(value):
            self.seed.check(value, path, problems)


def _model_union(attr: str, base: dict[str, Schema]) -> Obj:
    models = [m for m in registry.all_models() if getattr(m, attr) is not None]
    fields = dict(base)
    for model in models:
        fields[model.name] = getattr(model, attr)
    return Obj(fields, required=tuple(base), one_of=(tuple(m.name for m in models),))


_capacity_instance = Obj({
    "id": Str(allow_empty=False), "apiVersion": Str(allow_empty=False),
    "kind": Str(allow_empty=False), "data": AnyValue(dict),
}, required=("id", "apiVersion", "kind", "data"))

_claim_spec = Obj({
    "resourceClassName": Str(DNS_SUBDOMAIN), "parametersRef": parameters_ref,
    "allocationMode": Str(enum=("WaitForFirstConsumer", "Immediate")),
}, required=("resourceClassName",))

_consumer_ref = Obj({"apiGroup": Str(), "resource": Str(allow_empty=False),
                     "name": Str(allow_empty=False), "uid": Str()},
                    required=("resource", "name"))

_condition = Obj({"type": Str(allow_empty=False), "status": Str(enum=("True", "False",
                  "Unknown")), "reason": Str(), "message": Str(), "lastTransitionTime": Str(),
                  "lastProbeTime": Str(), "observedGeneration": Int()},
                 required=("type", "status"))


def _claim_status() -> Obj:
    structured = _model_union("result_schema", {})
    structured.fields.update({"vendorClassParameters": AnyValue(), "nodeName": Str(),
                              "vendorClaimParameters": AnyValue()})
    structured.required = ("nodeName",)
    handle = Obj({"driverName": Str(), "data": Str(max_len=HANDLE_DATA_MAX),
                  "structuredData": structured})
    allocation = Obj({"resourceHandles": ListOf(handle), "shareable": Bool(),
                      "availableOnNodes": node_selector})
    return Obj({"driverName": Str(), "controllerName": Str(), "allocation": allocation,
                "reservedFor": ListOf(_consumer_ref, max_items=256),
                "deallocationRequested": Bool()})


def _resource_kinds() -> list[tuple[KindSpec, Obj]]:
    numeric_entry = Obj({"apiVersion": Str(), "kind": Str(allow_empty=False),
                         "celTemplate": Str(allow_empty=False), "shareable": Bool()},
                        required=("kind", "celTemplate"))
    return [
        _doc(kinds.NODE_RESOURCE_SLICE, {"spec": _slice_spec(with_node=True)}, ("spec",)),
        _doc(kinds.NODE_RESOURCE_CAPACITY, {
            "nodeName": Str(DNS_SUBDOMAIN), "driverName": Str(DNS_SUBDOMAIN),
            "instances": ListOf(_capacity_instance, unique_key="id"),
        }, ("nodeName", "driverName")),
        _doc(kinds.RESOURCE_CLASS, {
            "driverName": Str(DNS_SUBDOMAIN), "parametersRef": parameters_ref,
            "suitableNodes": node_selector, "structuredParameters": Bool(),
            "semanticParameters": Bool(), "numericParameters": ListOf(numeric_entry,
                                                                      min_items=1),
            "controllerName": Str(DNS_SUBDOMAIN),
        }, ("driverName",)),
        _doc(kinds.RESOURCE_CLASS_PARAMETERS, {
            "generatedFrom": generated_from, "vendorParameters": AnyValue(),
            "filters": ListOf(_model_union("filter_schema", {"driverName": Str(DNS_SUBDOMAIN)})),
        }),
        _doc(kinds.RESOURCE_CLAIM_PARAMETERS, {
            "generatedFrom": generated_from, "shareable": Bool(), "vendorParameters": AnyValue(),
            "requests": ListOf(_model_union("request_schema",
                                            {"driverName": Str(DNS_SUBDOMAIN)})),
        }),
        _doc(kinds.RESOURCE_CLAIM, {"spec": _claim_spec, "status": _claim_status()}, ("spec",)),
        _doc(kinds.RESOURCE_CLAIM_TEMPLATE, {"spec": Obj({
            "metadata": object_metadata,
            "spec": _claim_spec}, required=("spec",))}, ("spec",)),
        _doc(kinds.POD_SCHEDULING_CONTEXT, {
            "spec": Obj({"selectedNode": Str(), "potentialNodes": ListOf(
                Str(DNS_SUBDOMAIN), max_items=NODE_LIST_MAX)}),
            "status": Obj({"resourceClaims": ListOf(Obj({
                "name": Str(allow_empty=False),
                "unsuitableNodes": ListOf(Str(DNS_SUBDOMAIN), max_items=NODE_LIST_MAX),
            }, required=("name",)))}),
        }, ("spec",)),
    ]


def _planner_kinds() -> list[tuple[KindSpec, Obj]]:
    template = Obj({
        "metadata": object_metadata,
        "spec": Obj({"unschedulable": Bool(), "taints": ListOf(AnyValue())}),
        "status": Obj({"allocatable": request_quantity_map,
                       "capacity": request_quantity_map}),
    })
    capacity = Obj({"driverName": Str(DNS_SUBDOMAIN),
                    "instances": ListOf(_capacity_instance, unique_key="id")},
                   required=("driverName",))
    pool = Obj({"name": Str(DNS_LABEL), "count": Int(minimum=0),
                "nodeSelector": label_selector}, required=("name", "count"))
    return [
        _doc(kinds.NODE_GROUP, {
            "spec": Obj({
                "minSize": Int(minimum=0), "maxSize": Int(minimum=0), "template": template,
                "capacityFromNode": Str(DNS_SUBDOMAIN),
                "resourceSlices": ListOf(_NodeGroupSlice()),
                "resourceCapacities": ListOf(capacity),
            }, required=("maxSize",)),
            "status": Obj({"size": Int(minimum=0), "nodes": ListOf(Str())}),
        }, ("spec",)),
        _doc(kinds.DRIVER_SIMULATION, {
            "spec": Obj({
                "controllerName": Str(DNS_SUBDOMAIN), "pools": ListOf(pool, unique_key="name"),
                "requestCount": Str(allow_empty=False),
                "handleData": Str(max_len=HANDLE_DATA_MAX),
            }, required=("controllerName",)),
            "status": Obj({"pools": ListOf(AnyValue())}),
        }, ("spec",)),
    ]


def _provisioning_request() -> tuple[KindSpec, Obj]:
    pod_set = Obj({"podTemplateRef": Obj({"name": Str(DNS_SUBDOMAIN)}, required=("name",)),
                   "count": Int(minimum=1, maximum=16384)},
                  required=("podTemplateRef", "count"))
    spec = Obj({
        "podSets": ListOf(pod_set, min_items=1, max_items=32),
        "provisioningClassName": Str(allow_empty=False),
        "provisioningClass": Str(allow_empty=False),
        "parameters": MapOf(Str()), "Parameters": MapOf(Str()),
    }, required=("podSets",), one_of=(("provisioningClassName", "provisioningClass"),),
        at_most_one=(("parameters", "Parameters"),))
    status = Obj({"conditions": ListOf(_condition), "statuses": MapOf(Str()),
                  "provisioningClassDetails": MapOf(AnyValue())})
    return _doc(kinds.PROVISIONING_REQUEST, {"spec": spec, "status": status}, ("spec",))


def _core_kinds() -> list[tuple[KindSpec, Obj]]:
    resources = Obj({"requests": request_quantity_map, "limits": request_quantity_map,
                     "claims": ListOf(Obj({"name": Str(allow_empty=False),
                                           "request": Str(DNS_LABEL)},
                                          required=("name",), open=True))}, open=True)
    container = Obj({"name": Str(), "resources": resources}, open=True)
    pod_claim = Obj({
        "name": Str(DNS_LABEL),
        "source": Obj({"resourceClaimName": Str(DNS_SUBDOMAIN),
                       "resourceClaimTemplateName": Str(DNS_SUBDOMAIN)},
                      one_of=(("resourceClaimName", "resourceClaimTemplateName"),)),
        "resourceClaimName": Str(DNS_SUBDOMAIN),
        "resourceClaimTemplateName": Str(DNS_SUBDOMAIN),
    }, required=("name",), one_of=(("source", "resourceClaimName",
                                    "resourceClaimTemplateName"),))
    pod_spec = Obj({
        "nodeName": Str(DNS_SUBDOMAIN), "nodeSelector": label_map,
        "containers": ListOf(container), "initContainers": ListOf(container),
        "resourceClaims": ListOf(pod_claim, unique_key="name"),
        # Only required node affinity is read (what-if pins use matchFields metadata.name,
        # as DaemonSets do); the other affinity kinds are kept and ignored.
        "affinity": Obj({"nodeAffinity": Obj({
            "requiredDuringSchedulingIgnoredDuringExecution": node_selector}, open=True)},
            open=True),
    }, open=True)
    # resource.k8s.io/v1 (docs/v1.md): the claims made for the pod's template entries, and
    # the claim made for its extended resources backed by DRA (KEP-5004).
    claim_statuses = ListOf(Obj({"name": Str(DNS_LABEL),
                                 "resourceClaimName": Str(DNS_SUBDOMAIN)},
                                required=("name",)), unique_key="name")
    extended_status = Obj({"resourceClaimName": Str(DNS_SUBDOMAIN), "requestMappings": ListOf(
        Obj({"containerName": Str(allow_empty=False), "resourceName": Str(allow_empty=False),
             "requestName": Str(DNS_LABEL)},
            required=("containerName", "resourceName", "requestName")))},
        required=("resourceClaimName", "requestMappings"))
    pod_status = Obj({"phase": Str(), "conditions": ListOf(_condition),
                      "resourceClaimStatuses": claim_statuses,
                      "extendedResourceClaimStatus": extended_status}, open=True)
    return [
        _doc(kinds.NODE, {"spec": Obj({"unschedulable": Bool()}, open=True),
                          "status": Obj({"allocatable": request_quantity_map,
                                         "capacity": request_quantity_map}, open=True)},
             open_=True),
        _doc(kinds.POD, {"spec": pod_spec, "status": pod_status}, ("spec",), open_=True),
        _doc(kinds.POD_TEMPLATE, {"template": Obj({"metadata": Obj({}, open=True),
                                                   "spec": pod_spec}, required=("spec",),
                                                  open=True)}, ("template",), open_=True),
        _doc(kinds.NAMESPACE, {}),
        _doc(kinds.EVENT, {}, open_=True),
    ]


@lru_cache(maxsize=4)
def _all_schemas(generation: int) -> dict[KindSpec, Schema]:
    # Core kinds are checked against the Kubernetes schema, with the rules above merged in
    # (manifests/k8s_schema.py; Events stay open).
    core = [(spec, core_kind_schema(spec.name, schema)) for spec, schema in _core_kinds()]
    built = dict([*_resource_kinds(), *_planner_kinds(), _provisioning_request(), *core,
                  *v1_schemas()])
    return {spec: built[spec] for spec in kinds.KINDS}


def schema_of(spec: KindSpec) -> Schema:
    """The schema of documents of ``spec``, with the registered models' fields.

    Raises:
        KeyError: for a spec that has no schema here.
    """
    return _all_schemas(registry.generation())[spec]

"""Schemas and scopes of every kind the planner reads (spec section 2).

Model-specific fields (slice models, request and filter models, result models) come from the
structured model registry, so a newly registered model is validated like the built-in ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from allocation.engine.constants import (
    HANDLE_DATA_MAX,
    NODE_LIST_MAX,
    PLANNER_API,
    PROVISIONING_APIS,
    RESOURCE_API,
)
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
from allocation.engine.models import registry

__all__ = ["KindInfo", "kind_info", "DRA_KINDS", "PLANNER_KINDS", "CORE_KINDS"]


DRA_KINDS = ("NodeResourceSlice", "NodeResourceCapacity", "ResourceClass",
             "ResourceClassParameters", "ResourceClaimParameters", "ResourceClaim",
             "ResourceClaimTemplate", "PodSchedulingContext")
PLANNER_KINDS = ("NodeGroup", "DriverSimulation")
CORE_KINDS = ("Node", "Pod", "PodTemplate", "Event")
CLUSTER_SCOPED = {"NodeResourceSlice", "NodeResourceCapacity", "ResourceClass",
                  "ResourceClassParameters", "NodeGroup", "DriverSimulation", "Node"}


@dataclass(frozen=True)
class KindInfo:
    """What the loader needs to know about one kind."""

    kind: str
    api_versions: tuple[str, ...]
    namespaced: bool
    schema: Schema
    strict: bool


def _doc(fields: dict, namespaced: bool, required=(), open_: bool = False, **kw) -> Obj:
    base = {"apiVersion": Str(), "kind": Str(), "metadata": metadata_schema(namespaced)}
    base.update(fields)
    return Obj(base, required=("metadata", *required), open=open_, **kw)


def _slice_spec(with_node: bool) -> Obj:
    models = registry.slice_models()
    fields: dict[str, Schema] = {"driverName": Str(DNS_SUBDOMAIN)}
    if with_node:
        fields["nodeName"] = Str(DNS_SUBDOMAIN)
    for model in models:
        fields[model.name] = model.slice_schema
    required = ("nodeName", "driverName") if with_node else ("driverName",)
    return Obj(fields, required=required, one_of=(tuple(m.name for m in models),))


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


def _resource_kinds() -> dict[str, Schema]:
    numeric_entry = Obj({"apiVersion": Str(), "kind": Str(allow_empty=False),
                         "celTemplate": Str(allow_empty=False), "shareable": Bool()},
                        required=("kind", "celTemplate"))
    return {
        "NodeResourceSlice": _doc({"spec": _slice_spec(with_node=True)}, False, ("spec",)),
        "NodeResourceCapacity": _doc({
            "nodeName": Str(DNS_SUBDOMAIN), "driverName": Str(DNS_SUBDOMAIN),
            "instances": ListOf(_capacity_instance, unique_key="id"),
        }, False, ("nodeName", "driverName")),
        "ResourceClass": _doc({
            "driverName": Str(DNS_SUBDOMAIN), "parametersRef": parameters_ref,
            "suitableNodes": node_selector, "structuredParameters": Bool(),
            "semanticParameters": Bool(), "numericParameters": ListOf(numeric_entry,
                                                                      min_items=1),
            "controllerName": Str(DNS_SUBDOMAIN),
        }, False, ("driverName",)),
        "ResourceClassParameters": _doc({
            "generatedFrom": generated_from, "vendorParameters": AnyValue(),
            "filters": ListOf(_model_union("filter_schema", {"driverName": Str(DNS_SUBDOMAIN)})),
        }, False),
        "ResourceClaimParameters": _doc({
            "generatedFrom": generated_from, "shareable": Bool(), "vendorParameters": AnyValue(),
            "requests": ListOf(_model_union("request_schema",
                                            {"driverName": Str(DNS_SUBDOMAIN)})),
        }, True),
        "ResourceClaim": _doc({"spec": _claim_spec, "status": _claim_status()}, True, ("spec",)),
        "ResourceClaimTemplate": _doc({"spec": Obj({
            "metadata": object_metadata,
            "spec": _claim_spec}, required=("spec",))}, True, ("spec",)),
        "PodSchedulingContext": _doc({
            "spec": Obj({"selectedNode": Str(), "potentialNodes": ListOf(
                Str(DNS_SUBDOMAIN), max_items=NODE_LIST_MAX)}),
            "status": Obj({"resourceClaims": ListOf(Obj({
                "name": Str(allow_empty=False),
                "unsuitableNodes": ListOf(Str(DNS_SUBDOMAIN), max_items=NODE_LIST_MAX),
            }, required=("name",)))}),
        }, True, ("spec",)),
    }


def _planner_kinds() -> dict[str, Schema]:
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
    return {
        "NodeGroup": _doc({
            "spec": Obj({
                "minSize": Int(minimum=0), "maxSize": Int(minimum=0), "template": template,
                "capacityFromNode": Str(DNS_SUBDOMAIN),
                "resourceSlices": ListOf(_slice_spec(with_node=False)),
                "resourceCapacities": ListOf(capacity),
            }, required=("maxSize",)),
            "status": Obj({"size": Int(minimum=0), "nodes": ListOf(Str())}),
        }, False, ("spec",)),
        "DriverSimulation": _doc({
            "spec": Obj({
                "controllerName": Str(DNS_SUBDOMAIN), "pools": ListOf(pool, unique_key="name"),
                "requestCount": Str(allow_empty=False),
                "handleData": Str(max_len=HANDLE_DATA_MAX),
            }, required=("controllerName",)),
            "status": Obj({"pools": ListOf(AnyValue())}),
        }, False, ("spec",)),
    }


def _provisioning_request() -> Schema:
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
    return _doc({"spec": spec, "status": status}, True, ("spec",))


def _core_kinds() -> dict[str, Schema]:
    resources = Obj({"requests": request_quantity_map, "limits": request_quantity_map,
                     "claims": ListOf(Obj({"name": Str(allow_empty=False)},
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
    pod_status = Obj({"phase": Str(), "conditions": ListOf(_condition)}, open=True)
    return {
        "Node": _doc({"spec": Obj({"unschedulable": Bool()}, open=True),
                      "status": Obj({"allocatable": request_quantity_map,
                                     "capacity": request_quantity_map}, open=True)},
                     False, open_=True),
        "Pod": _doc({"spec": pod_spec, "status": pod_status}, True, ("spec",), open_=True),
        "PodTemplate": _doc({"template": Obj({"metadata": Obj({}, open=True),
                                              "spec": pod_spec}, required=("spec",),
                                             open=True)}, True, ("template",), open_=True),
        "Event": _doc({}, True, open_=True),
    }


@lru_cache(maxsize=4)
def _all_kinds(generation: int) -> dict[str, KindInfo]:
    out: dict[str, KindInfo] = {}
    for kind, schema in _resource_kinds().items():
        out[kind] = KindInfo(kind, (RESOURCE_API,), kind not in CLUSTER_SCOPED, schema, True)
    for kind, schema in _planner_kinds().items():
        out[kind] = KindInfo(kind, (PLANNER_API,), False, schema, True)
    out["ProvisioningRequest"] = KindInfo("ProvisioningRequest", PROVISIONING_APIS, True,
                                          _provisioning_request(), True)
    for kind, schema in _core_kinds().items():
        out[kind] = KindInfo(kind, ("v1",), kind not in CLUSTER_SCOPED, schema, False)
    return out


def kind_info(kind: str) -> KindInfo | None:
    """The schema and scope of ``kind``, or None for vendor (opaque) objects."""
    return _all_kinds(registry.generation()).get(kind)


def known_kinds() -> dict[str, KindInfo]:
    return _all_kinds(registry.generation())


"""Strict schemas of the resource.k8s.io/v1 kinds (spec section 1, docs/v1.md).

DeviceClass, ResourceSlice, ResourceClaim and ResourceClaimTemplate in their v1 shape:
v1beta1 and v1beta2 documents are converted to v1 before they are checked
(``v1_convert``). Rules that relate several fields, depend on the Kubernetes profile or
compile CEL live in ``v1_rules``.
"""

from __future__ import annotations

from allocation.engine import kinds
from allocation.engine.manifests.common import (
    metadata_schema,
    node_selector,
    object_metadata,
    timestamp_str,
)
from allocation.engine.manifests.remembered import Remembered
from allocation.engine.manifests.schema import (
    DNS_LABEL,
    DNS_SUBDOMAIN,
    AnyValue,
    Bool,
    Check,
    Int,
    ListOf,
    MapOf,
    Obj,
    QuantityStr,
    Schema,
    Str,
)
from allocation.engine.manifests.v1_attribute_rules import attribute_value_ok, check_attribute_value
from allocation.engine.manifests.v1_names import (
    DRIVER_NAME,
    MAX_ALLOCATION_CONFIGS,
    MAX_BINDING_CONDITIONS,
    MAX_CONFIGS,
    MAX_CONSTRAINTS,
    MAX_CONSUMES_COUNTERS,
    MAX_COUNTER_SETS,
    MAX_DEVICE_CONDITIONS,
    MAX_DEVICES,
    MAX_REQUESTS,
    MAX_RESERVED_FOR,
    MAX_SELECTORS,
    MAX_SUBREQUESTS,
    MAX_TOLERATIONS,
    MAX_VALID_VALUES,
    POOL_NAME,
    check_qualified_keys,
    qualified_keys,
)
from allocation.engine.v1 import MAX_RESULTS
from allocation.engine.v1_attribute_types import ATTRIBUTE_TYPES

__all__ = ["v1_schemas"]

_selector = Obj({"cel": Obj({"expression": Str()}, required=("expression",))},
                required=("cel",))
_opaque = Obj({"driver": Str(DRIVER_NAME), "parameters": AnyValue(dict)},
              required=("driver", "parameters"))
_class_config = Obj({"opaque": _opaque}, required=("opaque",))

_counter = Obj({"value": QuantityStr()}, required=("value",))
_counters = MapOf(_counter, key=DNS_LABEL)
_counter_set = Obj({"name": Str(DNS_LABEL), "counters": _counters},
                   required=("name", "counters"))
_consumption = Obj({"counterSet": Str(DNS_LABEL), "counters": _counters},
                   required=("counterSet", "counters"))

# Every slice of a cluster repeats the same attribute and capacity values (``string: A100``,
# ``value: 80Gi``): each distinct one is checked once (remembered.py).
# The list types (``ints`` ...) are 1.36's, behind gate DRAListTypeAttributes: loading drops
# them with the gate off (v1/gated.py) and refuses them as unknown before 1.36 (v1_rules).
_attribute = Remembered(Check(
    Obj({"int": Int(), "bool": Bool(), "string": Str(), "version": Str(),
         "ints": ListOf(Int()), "bools": ListOf(Bool()), "strings": ListOf(Str()),
         "versions": ListOf(Str())},
        one_of=(ATTRIBUTE_TYPES,)),
    check_attribute_value, attribute_value_ok))
_valid_range = Obj({"min": QuantityStr(), "max": QuantityStr(), "step": QuantityStr()},
                   required=("min",))
_request_policy = Obj({"default": QuantityStr(),
                       "validValues": ListOf(QuantityStr(), max_items=MAX_VALID_VALUES),
                       "validRange": _valid_range},
                      at_most_one=(("validValues", "validRange"),))
_capacity = Remembered(Obj({"value": QuantityStr(non_negative=True),
                           "requestPolicy": _request_policy}, required=("value",)))
_taint = Obj({"key": Str(allow_empty=False), "value": Str(),
              "effect": Str(enum=("None", "NoSchedule", "NoExecute")),
              "timeAdded": timestamp_str}, required=("key", "effect"))

_device = Obj({
    "name": Str(DNS_LABEL),
    "attributes": Check(MapOf(_attribute), check_qualified_keys, qualified_keys),
    "capacity": Check(MapOf(_capacity), check_qualified_keys, qualified_keys),
    "consumesCounters": ListOf(_consumption, max_items=MAX_CONSUMES_COUNTERS,
                               unique_key="counterSet"),
    "nodeName": Str(DNS_SUBDOMAIN), "nodeSelector": node_selector, "allNodes": Bool(),
    "taints": ListOf(_taint),  # the limit depends on the release: v1_rules
    "bindsToNode": Bool(),
    "bindingConditions": ListOf(Str(allow_empty=False), max_items=MAX_BINDING_CONDITIONS),
    "bindingFailureConditions": ListOf(Str(allow_empty=False),
                                       max_items=MAX_BINDING_CONDITIONS),
    "allowMultipleAllocations": Bool(),
}, required=("name",))

_slice_spec = Obj({
    "driver": Str(DRIVER_NAME),
    "pool": Obj({"name": Str(POOL_NAME), "generation": Int(minimum=0),
                 "resourceSliceCount": Int(minimum=1)},
                required=("name", "resourceSliceCount")),
    "nodeName": Str(DNS_SUBDOMAIN), "nodeSelector": node_selector, "allNodes": Bool(),
    "perDeviceNodeSelection": Bool(),
    "devices": ListOf(_device, max_items=MAX_DEVICES, unique_key="name"),
    "sharedCounters": ListOf(_counter_set, max_items=MAX_COUNTER_SETS, unique_key="name"),
}, required=("driver", "pool"))

_toleration = Obj({"key": Str(), "operator": Str(enum=("Exists", "Equal")), "value": Str(),
                   "effect": Str(enum=("", "None", "NoSchedule", "NoExecute")),
                   "tolerationSeconds": Int()})


def _request_fields(admin: bool) -> dict[str, Schema]:
    fields: dict[str, Schema] = {
        "deviceClassName": Str(DNS_SUBDOMAIN),
        "selectors": ListOf(_selector, max_items=MAX_SELECTORS),
        "allocationMode": Str(enum=("ExactCount", "All")),
        "count": Int(),
        "tolerations": ListOf(_toleration, max_items=MAX_TOLERATIONS),
        "capacity": Obj({"requests": Check(MapOf(QuantityStr(non_negative=True)),
                                           check_qualified_keys, qualified_keys)}),
    }
    if admin:
        fields["adminAccess"] = Bool()
    return fields


_exact = Obj(_request_fields(admin=True), required=("deviceClassName",))
_subrequest = Obj({"name": Str(DNS_LABEL), **_request_fields(admin=False)},
                  required=("name", "deviceClassName"))
_request = Obj({
    "name": Str(DNS_LABEL), "exactly": _exact,
    "firstAvailable": ListOf(_subrequest, min_items=1, max_items=MAX_SUBREQUESTS,
                             unique_key="name"),
}, required=("name",), one_of=(("exactly", "firstAvailable"),))
_constraint = Obj({"requests": ListOf(Str(allow_empty=False)), "matchAttribute": Str(),
                   "distinctAttribute": Str()},
                  one_of=(("matchAttribute", "distinctAttribute"),))
_claim_config = Obj({"requests": ListOf(Str(allow_empty=False)), "opaque": _opaque},
                    required=("opaque",))
_claim_spec = Obj({"devices": Obj({
    "requests": ListOf(_request, max_items=MAX_REQUESTS, unique_key="name"),
    "constraints": ListOf(_constraint, max_items=MAX_CONSTRAINTS),
    "config": ListOf(_claim_config, max_items=MAX_CONFIGS),
})})

_result = Obj({
    "request": Str(allow_empty=False), "driver": Str(DRIVER_NAME), "pool": Str(POOL_NAME),
    "device": Str(DNS_LABEL), "adminAccess": Bool(), "tolerations": ListOf(_toleration),
    "bindingConditions": ListOf(Str()), "bindingFailureConditions": ListOf(Str()),
    "shareID": Str(), "consumedCapacity": MapOf(QuantityStr(non_negative=True)),
}, required=("request", "driver", "pool", "device"))
_allocation = Obj({
    "devices": Obj({
        "results": ListOf(_result, max_items=MAX_RESULTS),
        "config": ListOf(Obj({"source": Str(enum=("FromClass", "FromClaim")),
                              "requests": ListOf(Str()), "opaque": _opaque},
                             required=("source", "opaque")),
                         max_items=MAX_ALLOCATION_CONFIGS),
    }),
    "nodeSelector": node_selector, "allocationTimestamp": timestamp_str,
})
_condition = Obj({"type": Str(allow_empty=False),
                  "status": Str(enum=("True", "False", "Unknown")), "reason": Str(),
                  "message": Str(), "lastTransitionTime": timestamp_str,
                  "observedGeneration": Int(minimum=0)}, required=("type", "status"))
_device_status = Obj({
    "driver": Str(DRIVER_NAME), "pool": Str(POOL_NAME), "device": Str(DNS_LABEL),
    "shareID": Str(), "conditions": ListOf(_condition, max_items=MAX_DEVICE_CONDITIONS),
    "data": AnyValue(dict),  # at most 10 KiB: v1_rules
    "networkData": Obj({"interfaceName": Str(), "ips": ListOf(Str()),
                        "hardwareAddress": Str()}),
}, required=("driver", "pool", "device"))
_consumer = Obj({"apiGroup": Str(), "resource": Str(allow_empty=False),
                 "name": Str(allow_empty=False), "uid": Str(allow_empty=False)},
                required=("resource", "name", "uid"))
_claim_status = Obj({
    "allocation": _allocation,
    "reservedFor": ListOf(_consumer, max_items=MAX_RESERVED_FOR),
    "devices": ListOf(_device_status),
})


def _doc(spec: kinds.KindSpec, fields: dict, required=(), open_: bool = False
         ) -> tuple[kinds.KindSpec, Obj]:
    base = {"apiVersion": Str(), "kind": Str(), "metadata": metadata_schema(spec.namespaced)}
    base.update(fields)
    return spec, Obj(base, required=("metadata", *required), open=open_)


def v1_schemas() -> list[tuple[kinds.KindSpec, Obj]]:
    """The schema of each v1 kind spec (Namespace, whose label matters to v1, is a core kind
    checked against the Kubernetes schema: manifests/kinds.py)."""
    class_spec = Obj({
        "selectors": ListOf(_selector, max_items=MAX_SELECTORS),
        "config": ListOf(_class_config, max_items=MAX_CONFIGS),
        "extendedResourceName": Str(allow_empty=False),
    })
    return [
        _doc(kinds.DEVICE_CLASS, {"spec": class_spec}, ("spec",)),
        _doc(kinds.RESOURCE_SLICE, {"spec": _slice_spec}, ("spec",)),
        # Claims made from one template share their spec: checked once (remembered.py).
        _doc(kinds.RESOURCE_CLAIM_V1, {"spec": Remembered(_claim_spec),
                                       "status": _claim_status}, ("spec",)),
        _doc(kinds.RESOURCE_CLAIM_TEMPLATE_V1, {"spec": Obj({
            "metadata": object_metadata, "spec": _claim_spec}, required=("spec",))},
            ("spec",)),
    ]

"""Schemas shared by several kinds: metadata, selectors, attributes, references."""

from __future__ import annotations

import re
from typing import Any

from allocation.engine.cel import CelCompileError, compile_problem, compile_selector
from allocation.engine.events import parse_time
from allocation.engine.manifests.problems import ProblemList
from allocation.engine.manifests.remembered import Remembered
from allocation.engine.manifests.schema import (
    DNS_LABEL,
    DNS_SUBDOMAIN,
    IDENTIFIER,
    AnyValue,
    Bool,
    Check,
    Int,
    ListOf,
    MapOf,
    Obj,
    QuantityStr,
    Str,
    join,
)
from allocation.engine.versions import parse_version

__all__ = [
    "metadata_schema", "label_selector", "node_selector", "attribute", "attributes",
    "attribute_group", "version_str", "parameters_ref", "generated_from", "quantity_map",
    "cel_str", "TYPED_ATTRIBUTE_FIELDS", "label_map", "annotation_map", "timestamp_str",
    "request_quantity_map", "object_metadata", "label_key_problem", "label_value_problem",
]

TYPED_ATTRIBUTE_FIELDS = ("quantity", "bool", "int", "intSlice", "string", "stringSlice",
                          "version")


_NAME_PART = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_QUALIFIED = ("must be a qualified name: an optional DNS-subdomain prefix and '/', then at "
              "most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or "
              "digit")
_ANNOTATIONS_MAX_BYTES = 256 * 1024  # kube-apiserver's TotalAnnotationSizeLimitB


def label_key_problem(key: str) -> str | None:
    """Why ``key`` is not a Kubernetes qualified name (label or annotation key), or None."""
    prefix, slash, name = key.rpartition("/")
    if slash and (not prefix or len(prefix) > 253 or not DNS_SUBDOMAIN[0].match(prefix)):
        return f"invalid key {key!r}: the prefix {prefix!r} must be a DNS subdomain"
    if not name or len(name) > 63 or not _NAME_PART.match(name):
        return f"invalid key {key!r}: {_QUALIFIED}"
    return None


def _check_labels(value: dict, path: str, problems: ProblemList) -> None:
    for key, item in value.items():
        message = label_key_problem(key)
        if message:
            problems.add(join(path, key), message)
        message = label_value_problem(item)
        if message:
            problems.add(join(path, key), message)


def label_value_problem(value: str) -> str | None:
    """Why ``value`` is not a Kubernetes label value (empty is valid), or None."""
    if value and (len(value) > 63 or not _NAME_PART.match(value)):
        return (f"invalid label value {value!r}: at most 63 letters, digits, '-', '_' or '.', "
                "starting and ending with a letter or digit")
    return None


def _check_annotations(value: dict, path: str, problems: ProblemList) -> None:
    total = 0
    for key, item in value.items():
        message = label_key_problem(key)
        if message:
            problems.add(join(path, key), message)
        total += len(key.encode()) + len(item.encode())
    if total > _ANNOTATIONS_MAX_BYTES:
        problems.add(path, f"annotations are {total} bytes in all, more than the limit of "
                     f"{_ANNOTATIONS_MAX_BYTES} bytes")


def _check_time(value: str, path: str, problems: ProblemList) -> None:

    try:
        parse_time(value)
    except ValueError as exc:
        problems.add(path, str(exc))


label_map = Check(MapOf(Str()), _check_labels)
annotation_map = Check(MapOf(Str()), _check_annotations)
timestamp_str = Check(Str(), _check_time)


def _check_version(value: Any, path: str, problems: ProblemList) -> None:

    try:
        parse_version(value)
    except ValueError as exc:
        problems.add(path, str(exc))


def _check_cel(value: Any, path: str, problems: ProblemList) -> None:

    try:
        compile_selector(value)
    except CelCompileError as exc:
        problems.add(path, compile_problem(exc, "selector"))


version_str = Check(Str(), _check_version)
cel_str = Check(Str(allow_empty=False), _check_cel)
quantity_map = MapOf(QuantityStr())
#: Requests, limits and allocatable: never below zero (the API server's rule).
request_quantity_map = MapOf(QuantityStr(non_negative=True))
#: The metadata a template may carry (PodTemplate, ResourceClaimTemplate, NodeGroup).
object_metadata = Obj({"labels": label_map, "annotations": annotation_map})

_owner_reference = Obj({
    "apiVersion": Str(), "kind": Str(), "name": Str(), "uid": Str(), "controller": Bool(),
    "blockOwnerDeletion": Bool(),
}, required=("apiVersion", "kind", "name"))


def metadata_schema(namespaced: bool) -> Obj:
    """ObjectMeta: a DNS-subdomain name, a DNS-label namespace and the usual fields."""
    fields = {
        "name": Str(DNS_SUBDOMAIN), "generateName": Str(), "uid": Str(),
        "resourceVersion": Str(), "generation": Int(), "creationTimestamp": timestamp_str,
        "deletionTimestamp": timestamp_str, "deletionGracePeriodSeconds": Int(),
        "labels": label_map, "annotations": annotation_map,
        "ownerReferences": ListOf(_owner_reference), "finalizers": ListOf(Str()),
        "managedFields": ListOf(AnyValue()), "selfLink": Str(),
    }
    if namespaced:
        fields["namespace"] = Str(DNS_LABEL)
    return Obj(fields, required=("name",))


_label_requirement = Obj({
    "key": Str(allow_empty=False),
    "operator": Str(enum=("In", "NotIn", "Exists", "DoesNotExist")),
    "values": ListOf(Str()),
}, required=("key", "operator"))

label_selector = Obj({"matchLabels": label_map,
                      "matchExpressions": ListOf(_label_requirement)})

_node_requirement = Obj({
    "key": Str(allow_empty=False),
    "operator": Str(enum=("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")),
    "values": ListOf(Str()),
}, required=("key", "operator"))

node_selector = Obj({"nodeSelectorTerms": ListOf(Obj({
    "matchExpressions": ListOf(_node_requirement),
    "matchFields": ListOf(_node_requirement),
}))}, required=("nodeSelectorTerms",))

# Every slice of a cluster lists the same attributes (``model: A100``, ``index: 0``): each
# distinct one is checked once (remembered.py).
attribute = Remembered(Obj({
    "name": Str(IDENTIFIER), "quantity": QuantityStr(), "bool": Bool(), "int": Int(),
    "intSlice": ListOf(Int()), "string": Str(), "stringSlice": ListOf(Str()),
    "version": version_str,
}, required=("name",), one_of=(TYPED_ATTRIBUTE_FIELDS,)))

attributes = ListOf(attribute, unique_key="name")

attribute_group = Obj({"name": Str(DNS_SUBDOMAIN), "attributes": attributes},
                      required=("name",))

parameters_ref = Obj({"apiGroup": Str(), "kind": Str(allow_empty=False),
                      "name": Str(DNS_SUBDOMAIN), "namespace": Str(DNS_LABEL)},
                     required=("kind", "name"))

generated_from = Obj({"apiGroup": Str(), "kind": Str(allow_empty=False),
                      "name": Str(DNS_SUBDOMAIN), "uid": Str(), "namespace": Str(DNS_LABEL)},
                     required=("kind", "name"))

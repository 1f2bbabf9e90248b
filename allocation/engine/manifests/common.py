"""Schemas shared by several kinds: metadata, selectors, attributes, references."""

from __future__ import annotations

from typing import Any

from allocation.engine.manifests.problems import ProblemList
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
)

__all__ = [
    "metadata_schema", "label_selector", "node_selector", "attribute", "attributes",
    "attribute_group", "version_str", "parameters_ref", "generated_from", "quantity_map",
    "cel_str", "TYPED_ATTRIBUTE_FIELDS",
]

TYPED_ATTRIBUTE_FIELDS = ("quantity", "bool", "int", "intSlice", "string", "stringSlice",
                          "version")


def _check_version(value: Any, path: str, problems: ProblemList) -> None:
    from allocation.engine.versions import parse_version

    try:
        parse_version(value)
    except ValueError as exc:
        problems.add(path, str(exc))


def _check_cel(value: Any, path: str, problems: ProblemList) -> None:
    from allocation.engine.cel import CelCompileError, compile_problem, compile_selector

    try:
        compile_selector(value)
    except CelCompileError as exc:
        problems.add(path, compile_problem(exc, "selector"))


version_str = Check(Str(), _check_version)
cel_str = Check(Str(allow_empty=False), _check_cel)
quantity_map = MapOf(QuantityStr())

_owner_reference = Obj({
    "apiVersion": Str(), "kind": Str(), "name": Str(), "uid": Str(), "controller": Bool(),
    "blockOwnerDeletion": Bool(),
}, required=("apiVersion", "kind", "name"))


def metadata_schema(namespaced: bool) -> Obj:
    """ObjectMeta: a DNS-subdomain name, a DNS-label namespace and the usual fields."""
    fields = {
        "name": Str(DNS_SUBDOMAIN), "generateName": Str(), "uid": Str(),
        "resourceVersion": Str(), "generation": Int(), "creationTimestamp": Str(),
        "deletionTimestamp": Str(), "deletionGracePeriodSeconds": Int(),
        "labels": MapOf(Str()), "annotations": MapOf(Str()),
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

label_selector = Obj({"matchLabels": MapOf(Str()),
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

attribute = Obj({
    "name": Str(IDENTIFIER), "quantity": QuantityStr(), "bool": Bool(), "int": Int(),
    "intSlice": ListOf(Int()), "string": Str(), "stringSlice": ListOf(Str()),
    "version": version_str,
}, required=("name",), one_of=(TYPED_ATTRIBUTE_FIELDS,))

attributes = ListOf(attribute, unique_key="name")

attribute_group = Obj({"name": Str(DNS_SUBDOMAIN), "attributes": attributes},
                      required=("name",))

parameters_ref = Obj({"apiGroup": Str(), "kind": Str(allow_empty=False),
                      "name": Str(DNS_SUBDOMAIN), "namespace": Str(DNS_LABEL)},
                     required=("kind", "name"))

generated_from = Obj({"apiGroup": Str(), "kind": Str(allow_empty=False),
                      "name": Str(DNS_SUBDOMAIN), "uid": Str(), "namespace": Str(DNS_LABEL)},
                     required=("kind", "name"))

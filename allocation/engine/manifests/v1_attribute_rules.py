"""The rules of a v1 device's attributes and capacity (spec section 1, docs/v1.md): a
string or version value's limits, the list types' items (KEP-5491, docs/v1.md "List-type
attributes"), and the limits that span a device's entries. ``v1_schema`` asks
:func:`check_attribute_value` / :func:`attribute_value_ok` of each attribute value, and
``v1_rules`` asks :func:`check_device_attributes` of each device.
"""

from __future__ import annotations

from allocation.engine.manifests.problems import ProblemList
from allocation.engine.manifests.schema import join
from allocation.engine.manifests.v1_names import MAX_ATTRIBUTES_AND_CAPACITIES, MAX_STRING_LENGTH
from allocation.engine.manifests.v1_policy import check_request_policy
from allocation.engine.v1.features import Profile
from allocation.engine.v1_attribute_types import (
    LIST_ATTRIBUTE_TYPES,
    MAX_ATTRIBUTE_VALUES,
    SCALAR_ATTRIBUTE_TYPES,
    item_type,
)
from allocation.engine.versions import parse_strict_version

__all__ = ["check_device_attributes", "check_attribute_value", "attribute_value_ok"]

_SCALAR_TYPES = frozenset(SCALAR_ATTRIBUTE_TYPES)


def check_device_attributes(device: dict, path: str, profile: Profile,
                            problems: ProblemList) -> None:
    """The device's attribute and capacity rules that span entries: at most 32 together, at
    most 48 attribute values, list types known to the release, and each request policy.
    Asked of every device of a cluster: as few steps as the checks allow."""
    capacity = device.get("capacity") or {}
    attributes = device.get("attributes") or ()
    total = len(attributes) + len(capacity)
    if total > MAX_ATTRIBUTES_AND_CAPACITIES:
        problems.add(path, f"attributes and capacity have {total} entries together, more "
                     f"than the limit of {MAX_ATTRIBUTES_AND_CAPACITIES}")
    # Only a list attribute (or one without a value: the schema's problem) can bring the
    # values past 48 (32 scalars at most), and only a device with one needs the list rules
    # (a plain loop: cheaper than ``any(map(...))`` over a device's few attributes); where
    # loading dropped every list (1.36's defaults), none is left to look for
    for entry in attributes.values() if attributes and not profile.drops_list_types else ():
        if _SCALAR_TYPES.isdisjoint(entry):
            _list_attributes(device, path, profile, problems)
            break
    for name, entry in capacity.items():
        if entry.get("requestPolicy") is not None:
            where = join(join(path, "capacity"), name)
            if device.get("allowMultipleAllocations") is not True:
                problems.add(f"{where}.requestPolicy", "may only be set when "
                             "allowMultipleAllocations is true")
            check_request_policy(entry, where, problems)


def check_attribute_value(value: dict, path: str, problems: ProblemList) -> None:
    """What is wrong with a device attribute's value ``value`` (at ``path``) that its
    schema's shape allows: a string or version longer than the limit, a version that is
    not strict semver, an empty list; each item of a list type is checked as its scalar
    would be (``.strings[1]``). The v1 schema runs it on an invalid document; a valid one's
    values are judged by :func:`attribute_value_ok`, each distinct value once
    (``v1_schema``)."""
    for typed in ("string", "version"):
        if isinstance(value.get(typed), str):
            _text_problem(typed, value[typed], f"{path}.{typed}", problems)
    for typed in LIST_ATTRIBUTE_TYPES:
        items = value.get(typed)
        if not isinstance(items, list):
            continue
        if not items:
            problems.add(f"{path}.{typed}", "must not be empty if specified")
        elif typed in ("strings", "versions"):
            for index, item in enumerate(items):
                if isinstance(item, str):
                    _text_problem(item_type(typed), item, f"{path}.{typed}[{index}]",
                                  problems)


def _text_problem(typed: str, text: str, path: str, problems: ProblemList) -> None:
    """A string or version value's problem (its length, a version's form)."""
    if len(text) > MAX_STRING_LENGTH:
        problems.add(path, f"is {len(text)} characters, longer than the limit of "
                     f"{MAX_STRING_LENGTH}")
    if typed == "version":
        try:
            parse_strict_version(text)
        except ValueError as exc:
            problems.add(path, f"{exc} (strict semver 2.0.0, e.g. 1.2.3)")


def attribute_value_ok(value: dict) -> bool:
    """Whether :func:`check_attribute_value` finds nothing wrong with ``value``, whose shape
    the schema accepted (one value type set, strings where strings belong): its verdict
    alone, without a problem list (a slice's thousands of devices each have a distinct
    ``uuid``, so each is asked)."""
    text = value.get("string")
    if text is not None:  # the value's one type
        return len(text) <= MAX_STRING_LENGTH
    text = value.get("version")
    if text is not None:
        return _version_ok(text)
    if len(value) != 1 or "int" in value or "bool" in value:
        return True  # a scalar (or no value: the schema's problem)
    ((typed, items),) = value.items()
    if not items:
        return False
    if typed == "strings":
        return all(len(item) <= MAX_STRING_LENGTH for item in items)
    return typed != "versions" or all(_version_ok(item) for item in items)


def _version_ok(text: str) -> bool:
    if len(text) > MAX_STRING_LENGTH:
        return False
    try:
        parse_strict_version(text)
    except ValueError:
        return False
    return True


def _list_attributes(device: dict, path: str, profile: Profile, problems: ProblemList
                     ) -> None:
    """The rules of list-type attributes: unknown fields before 1.36 (its API types added
    them), and at most 48 values per device, a list's items each counted."""
    values = 0
    for name, entry in device["attributes"].items():
        lists = [typed for typed in LIST_ATTRIBUTE_TYPES if typed in entry]
        if not profile.list_type_fields:
            for typed in lists:
                problems.add(f"{join(join(path, 'attributes'), name)}.{typed}",
                             f"unknown field (did you mean {item_type(typed)}?) "
                             f"(Kubernetes {profile.release})")
        values += sum(len(entry[typed]) for typed in lists) or 1
    if values > MAX_ATTRIBUTE_VALUES:
        problems.add(f"{path}.attributes", f"has {values} values, more than the limit of "
                     f"{MAX_ATTRIBUTE_VALUES} (each item of a list counts)")

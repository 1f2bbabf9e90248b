"""The rules of a v1 device's attributes (``manifests/v1_attribute_rules.py``), with limits
at their bound and one past it, list types included."""

from __future__ import annotations

import pytest

from allocation.engine.manifests.problems import ProblemList
from allocation.engine.manifests.v1_attribute_rules import (
    attribute_value_ok,
    check_attribute_value,
)
from tests.allocation.engine.manifests.v1_docs import device, problems, slice_doc


def test_attributes_and_capacity_together_at_most_32():
    def doc(attributes, capacities):
        return [slice_doc([device(
            attributes={f"a{i}": {"int": i} for i in range(attributes)},
            capacity={f"c{i}": {"value": "1"} for i in range(capacities)})])]
    assert problems(doc(20, 12)) == []
    assert problems(doc(20, 13)) == ["spec.devices[0]: attributes and capacity have 33 "
                                     "entries together, more than the limit of 32"]


def test_string_and_version_attributes_at_most_64_characters():
    version = "1.0.0-" + "a" * 58
    ok = {"s": {"string": "x" * 64}, "v": {"version": version}}
    assert problems([slice_doc([device(attributes=ok)])]) == []
    bad = {"s": {"string": "x" * 65}, "v": {"version": version + "a"}}
    assert problems([slice_doc([device(attributes=bad)])]) == [
        "spec.devices[0].attributes.s.string: is 65 characters, longer than the limit of 64",
        "spec.devices[0].attributes.v.version: is 65 characters, longer than the limit of 64"]


@pytest.mark.parametrize("value", [
    {"string": "x" * 64}, {"string": "x" * 65}, {"string": ""}, {"int": 3}, {"bool": False},
    {"version": "1.2.3"}, {"version": "1.0.0-" + "a" * 58}, {"version": "1.0.0-" + "a" * 59},
    {"version": "v1.2.3"}, {"version": "1.2.3-01"}, {"string": None, "version": "1.2"},
    {"string": None, "int": 1}, {"version": None, "string": "a"},
    {"ints": [1, 2]}, {"ints": []}, {"bools": [True]}, {"bools": []}, {"strings": ["a"]},
    {"strings": []}, {"strings": ["a", "x" * 65]}, {"versions": ["1.2.3"]},
    {"versions": ["1.2.3", "v1"]}, {"versions": []}])
def test_an_attribute_values_verdict_alone_is_its_checks(value):
    # the loader asks attribute_value_ok of a valid document, and check_attribute_value only
    # of an invalid one: they must agree on every value the schema's shape allows
    found = ProblemList()
    check_attribute_value(value, "v", found)
    assert attribute_value_ok(value) is (not found)


_LISTS = "DRAListTypeAttributes=true"


def test_list_type_attributes_are_checked_item_by_item():
    ok = {"n": {"ints": [0, 1]}, "b": {"bools": [True, False]}, "s": {"strings": ["x" * 64]},
          "v": {"versions": ["1.2.3", "2.0.0-rc.1"]}}
    assert problems([slice_doc([device(attributes=ok)])], gates=_LISTS) == []
    bad = {"n": {"ints": []}, "s": {"strings": ["a", "x" * 65]},
           "v": {"versions": ["1.2.3", "v2"]}, "two": {"ints": [1], "int": 1}}
    lines = problems([slice_doc([device(attributes=bad)])], gates=_LISTS)
    assert lines[:2] == [
        "spec.devices[0].attributes.n.ints: must not be empty if specified",
        "spec.devices[0].attributes.s.strings[1]: is 65 characters, longer than the limit "
        "of 64"]
    assert lines[2].startswith("spec.devices[0].attributes.v.versions[1]: 'v2' ")
    assert "strict semver 2.0.0" in lines[2]
    assert lines[3:] == [
        "spec.devices[0].attributes.two: exactly one of int, bool, string, version, ints, "
        "bools, strings, versions may be set, found int, ints"]


def test_a_device_has_at_most_48_attribute_values_each_item_counted():
    def doc(items, scalars):
        attributes = {f"a{i}": {"int": i} for i in range(scalars)}
        attributes["list"] = {"strings": [f"v{i}" for i in range(items)]}
        return [slice_doc([device(attributes=attributes)])]
    assert problems(doc(40, 8), gates=_LISTS) == []
    assert problems(doc(41, 8), gates=_LISTS) == [
        "spec.devices[0].attributes: has 49 values, more than the limit of 48 (each item of "
        "a list counts)"]


def test_list_type_attributes_are_unknown_before_1_36_and_dropped_with_the_gate_off():
    doc = [slice_doc([device(attributes={"numa": {"ints": [0, 1]}, "m": {"string": "a"}})])]
    assert problems(doc, release="1.35") == [
        "spec.devices[0].attributes.numa.ints: unknown field (did you mean int?) "
        "(Kubernetes 1.35)"]
    # 1.36 with the gate off: the API server drops the list (test_gated.py), and the
    # attribute is then left without a value, which it refuses
    assert problems(doc) == [
        "spec.devices[0].attributes.numa: exactly one of int, bool, string, version, ints, "
        "bools, strings, versions must be set"]


@pytest.mark.parametrize("version", ["v1.2.3", "1.2", "01.2.3", "1.2.3-01"])
def test_versions_are_strict_semver(version):
    lines = problems([slice_doc([device(attributes={"v": {"version": version}})])])
    assert len(lines) == 1
    assert lines[0].startswith("spec.devices[0].attributes.v.version: ")
    assert "strict semver 2.0.0" in lines[0]

"""``convert.selectors``: seed CEL rewritten on the tree as v1 CEL that compiles (the
ResourceClass row of spec section 5: ``attributes.x`` -> ``device.attributes["<drv>"].x``;
quantities -> capacity + compareTo)."""

from __future__ import annotations

import pytest

from allocation.engine.cel import compile_device_selector
from allocation.engine.convert.names import attribute_id
from allocation.engine.convert.selectors import RewriteError, rewrite_selector

D = "gpu.example.com"
TYPES = {"memory": "quantity", "runtimeVersion": "version", "models": "stringSlice",
         "ids": "intSlice", "cores": "int", "x" * 40: "string"}
A = f'device.attributes["{D}"]'
C = f'device.capacity["{D}"]'


@pytest.mark.parametrize(("seed", "v1"), [
    ('attributes["runtimeVersion"] >= "v12.0.0" && attributes["memory"] >= "32Gi"',
     f'{A}.runtimeVersion.compareTo(semver("12.0.0")) >= 0 && '
     f'{C}.memory.compareTo(quantity("32Gi")) >= 0'),
    ('quantities["memory"] < "8Gi"', f'{C}.memory.compareTo(quantity("8Gi")) < 0'),
    ('"8Gi" <= quantities.memory', f'quantity("8Gi").compareTo({C}.memory) <= 0'),
    ('versions.runtimeVersion == "12"', f'{A}.runtimeVersion.compareTo(semver("12.0.0")) == 0'),
    ('quantities.memory.compareTo(quantity("1Gi")) > 0',
     f'{C}.memory.compareTo(quantity("1Gi")) > 0'),
    ('versions.runtimeVersion.isGreaterThan(semver("v1.2"))',
     f'{A}.runtimeVersion.isGreaterThan(semver("1.2.0"))'),
    ('ints.cores > 2 || strings["productName"].startsWith("A")',
     f'{A}.cores > 2 || {A}.productName.startsWith("A")'),
    ('has(attributes.memory) && "cores" in ints', f'has({C}.memory) && "cores" in {A}'),
    ('"memory" in attributes', f'"memory" in {A} || "memory" in {C}'),
    ('"memory" in quantities', f'"memory" in {C}'),
    (f'attributes.{"x" * 40} == "a"', f'{A}.{attribute_id("x" * 40)} == "a"'),
    ('"a" in stringSlices["models"]', f'"a" in {A}.models.split(",")'),
    ("3 in intSlices.ids", f'3 in {A}.ids.split(",").map(v, int(v))'),
    ("true", "true"),
])
def test_rewrites_compile_and_mean_the_same(seed, v1):
    rewritten = rewrite_selector(seed, D, TYPES, guard=False)
    assert rewritten.expression == v1
    compile_device_selector(v1)


def test_reads_are_guarded_per_operand_so_a_missing_attribute_is_no_match():
    # The seed: a missing key is an error, i.e. no match; v1: an error fails scheduling.
    rewritten = rewrite_selector(
        'attributes.cores == 1 || !(quantities.memory >= "1Gi") && has(attributes.x)', D, TYPES)
    assert rewritten.expression == (
        f'"cores" in {A} && {A}.cores == 1 || "memory" in {C} && '
        f'!({C}.memory.compareTo(quantity("1Gi")) >= 0) && has({A}.x)')
    assert rewrite_selector('attributes.cores > 1 && attributes.cores < 4', D, TYPES
                            ).expression == (f'"cores" in {A} && {A}.cores > 1 && '
                                             f'"cores" in {A} && {A}.cores < 4')
    selector = compile_device_selector(rewritten.expression)
    assert selector.matches(D, {"name": "g", "attributes": {"cores": {"int": 2}}}) is False
    assert selector.matches(D, {"name": "g", "attributes": {"cores": {"int": 1}}}) is True
    assert selector.matches(D, {"name": "g", "capacity": {"memory": {"value": "512Mi"}},
                                "attributes": {"x": {"bool": True}}}) is True


def test_list_attributes_are_noted_once_each():
    rewritten = rewrite_selector('"a" in stringSlices.models && size(stringSlices.models) > 1',
                                 D, TYPES)
    assert rewritten.notes == ["stringSlice attribute 'models' is read from its comma-joined "
                               "string (an empty list reads as [\"\"])"]


def test_a_typed_map_used_whole_is_noted():
    assert rewrite_selector('"cores" in ints', D, TYPES).notes == [
        "'ints' (the attributes of one type) becomes all the device's attributes"]


@pytest.mark.parametrize(("seed", "message"), [
    ('attributes[strings["k"]] == 1', "with a computed key has no v1 form"),
    ("attributes.exists(k, k == 'a')", "'attributes' is used as a whole map"),
    ("quantities.memory > attributes.cores", "compared with something that is not a quantity"),
    ('versions.runtimeVersion > "not a version"', "is not a valid semantic version"),
    ("attributes.m.?x", "optional syntax"),
    ("attributes.cores + ", "cannot parse the selector"),
    ("quantities.memory + 1 == 2", "does not compile"),
])
def test_what_has_no_v1_form_is_an_error(seed, message):
    with pytest.raises(RewriteError, match=message):
        rewrite_selector(seed, D, TYPES)

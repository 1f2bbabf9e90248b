"""The cost estimate (cel-go's model) and the limits: too expensive is refused at compile time.

The runtime budget (checked before each evaluation) is tested in test_budget.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from allocation.engine.cel import (
    MAX_COST,
    MAX_VALUE_SIZE,
    CelCompileError,
    CelCostError,
    compile_expression,
    compile_selector,
)
from allocation.engine.cel.cost import DECLARED_BOUNDS, DEVICE_BOUNDS, InputBounds, estimate
from allocation.engine.templates import HANDLE_VARIABLES, placeholders

ROOT = Path(__file__).resolve().parents[4]


def _chain(maps: int, seed: str = "a" * 1000, copies: int = 8) -> str:
    """``[seed].map(a, a+a+...).map(b, ...)``: each map multiplies the string by ``copies``."""
    source = f"['{seed}']"
    for level in range(maps):
        var = f"v{level}"
        source += f".map({var}, {'+'.join([var] * copies)})"
    return f"{source}.all(z, size(z) > 0)"


def test_the_memory_bomb_is_refused_with_its_estimate() -> None:
    bomb = _chain(7)
    assert len(bomb) < 1300
    with pytest.raises(CelCostError) as caught:
        compile_selector(bomb)
    assert str(caught.value) == ("CEL expression too expensive: estimated cost 1,048,575,734 "
                                 "exceeds the limit of 1,000,000")
    assert isinstance(caught.value, CelCompileError)  # every caller already handles it


def test_each_map_of_the_chain_multiplies_the_estimate() -> None:
    costs = [estimate(_chain(maps)).cost for maps in range(1, 5)]
    assert costs[0] < MAX_COST < costs[3]
    for smaller, larger in zip(costs, costs[1:], strict=False):
        assert 7 * smaller < larger < 9 * smaller
    compile_selector(_chain(2))  # 64 KB of string: allowed


def test_a_cheap_chain_building_a_huge_string_is_refused_by_the_size_cap() -> None:
    doubling = _chain(20, seed="ab", copies=2)
    result = estimate(doubling)
    assert result.cost < MAX_COST and result.largest == 2 * 2**20
    with pytest.raises(CelCostError, match=f"may build a string or list of 2,097,152 "
                                           f"characters or items, more than the limit of "
                                           f"{MAX_VALUE_SIZE:,}"):
        compile_selector(doubling)


@pytest.mark.parametrize(
    ("source", "cost"),
    [
        ('strings["model"] == "A100"', 3),  # ident, index, compare
        ('quantities.memory >= "16Gi"', 3),
        ('strings.model.startsWith("ACME T4")', 3),  # arguments + 0.1 per character
        ('"b" in ["a", "b"]', 12),  # list 10, in: the list's size
        ('["a", "b"].exists(x, x == "a")', 1 + 10 + 2 * (4 + 2)),
        ('stringSlices.tags.all(x, x == "a")', 2 + 1 + 128 * (3 + 2)),  # 128 items declared
        ('strings.model.matches("^A1.*$")', 2 + 26 * 2),  # (257 * 0.1) * (6 * 0.25)
    ],
)
def test_cost_model_follows_cel_go(source: str, cost: int) -> None:
    assert estimate(source).cost == cost


def test_concatenation_tracks_sizes_and_the_loop_multiplies_by_the_range() -> None:
    assert estimate('size("abcd" + "efgh") > 0').largest == 8
    small = estimate('stringSlices.tags.map(t, t + t).size() > 0')
    assert small.largest == 2 * DECLARED_BOUNDS.string
    bigger = estimate('stringSlices.tags.map(t, t + t).size() > 0',
                      bounds=InputBounds(256, 256, 128))
    assert bigger.cost > 1.9 * small.cost


def _yaml_cel(path: Path) -> list[tuple[str, str]]:
    found = []

    def walk(value: object) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key == "selector" and isinstance(item, str):
                    found.append(("selector", item))
                elif key in ("celTemplate", "handleData") and isinstance(item, str):
                    found.extend(("template", source) for source in placeholders(item))
                elif key == "requestCount" and isinstance(item, str):
                    found.append(("template", item))
                else:
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for doc in yaml.safe_load_all(path.read_text()):
        walk(doc)
    return found


_FILES = sorted([*ROOT.glob("examples/*.yaml"), *ROOT.glob("tests/**/data/*.yaml")])


@pytest.mark.parametrize("path", _FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_expression_of_the_examples_is_accepted(path: Path) -> None:
    found = _yaml_cel(path)
    for kind, source in found:
        if kind == "selector":
            compile_selector(source)
        else:
            compile_expression(source, HANDLE_VARIABLES)


def test_the_examples_hold_expressions() -> None:
    assert sum(len(_yaml_cel(path)) for path in _FILES) >= 8


@pytest.mark.parametrize(
    "source",
    [
        'stringSlices.a.exists(x, stringSlices.b.exists(y, x == y))',
        'attributes.exists(k, k.startsWith("gpu") && attributes[k] == true)',
        " || ".join(['attributes["memory"] >= "1Gi"'] * 300),
        'strings.a.contains(strings.b) && strings.a.matches("^[a-z]+-[0-9]+$")',
        '["ab"].map(a, [a+a+a+a+a+a+a+a+a].map(b, b+b+b+b+b+b+b+b+b).size() > 0).all(r, r)',
        "(" * 30 + "true" + ")" * 30,
        '{"a": [1, 2], "b": [3]}.all(k, {"a": [1, 2], "b": [3]}[k].all(v, v > 0))',
    ],
    ids=lambda source: source[:40],
)
def test_deep_and_ordinary_selectors_are_accepted(source: str) -> None:
    compile_selector(source)


def test_the_device_variable_has_the_v1_field_shapes() -> None:
    variables = {"device": "device"}
    driver = estimate('device.driver == "x"', variables, DEVICE_BOUNDS)
    assert driver.cost == 3  # two selections, a string comparison of at most 1 character
    # Each domain map holds at most 32 entries: a nested loop costs 32 x 32 iterations.
    domain = 'device.attributes["d"]'
    nested = estimate(f"{domain}.all(x, {domain}.all(y, x != y))", variables, DEVICE_BOUNDS)
    wider = estimate(f"{domain}.all(x, {domain}.all(y, x != y))", variables,
                     InputBounds(string=64, list=32, map=64))
    assert 32 * 32 < nested.cost < wider.cost / 3  # twice the range: four times the loops
    # Capacity values are quantities, not strings of the map's size.
    assert estimate('device.capacity["d"].m.isInteger()', variables, DEVICE_BOUNDS).cost == 5


@pytest.mark.parametrize(("source", "cost"), [
    ('ip("1.2.3.4").family() == 4', 1 + 1 + 1),  # parse 0.1 per character, accessor, compare
    ('isIP("1.2.3.4") && isCIDR("10.0.0.0/8")', 1 + 1),
    ('ip.isCanonical("2001:db8::2:1")', 3),  # parsed and printed: 0.2 per character
    ('cidr("10.0.0.0/8").ip().isLoopback()', 1 + 1 + 1),  # ip() of a CIDR is an accessor
    ('cidr("10.0.0.0/8").masked().prefixLength() == 8', 1 + 1 + 1 + 1),
    ('cidr("10.0.0.0/8").containsIP(ip("10.1.2.3"))', 1 + 1 + 4),  # 2 x 16 bytes x 0.1
    ('cidr("10.0.0.0/8").containsIP("10.1.2.3")', 1 + 4 + 1),  # and the string's parse
    ('cidr("10.0.0.0/8").containsCIDR(cidr("10.0.0.0/16"))', 1 + 2 + 4 + 2 + 1),
    ('cidr("10.0.0.0/8").containsCIDR("10.0.0.0/16")', 1 + 4 + 2 + 1 + 2),
    # a dyn argument may be a string: its parse, 64 characters at most
    ('cidr("10.0.0.0/8").containsIP(device.attributes["d"].a)', 1 + 4 + 4 + 7),
    ('string(ip("::1")) == "::1"', 1 + 1 + 1),
])
def test_ip_and_cidr_cost_as_kubernetes_estimates_them(source: str, cost: int) -> None:
    # k8s.io/apiserver pkg/cel/library/cost.go EstimateCallCost, over the v1 device bounds.
    assert estimate(source, {"device": "device"}, DEVICE_BOUNDS).cost == cost


def test_the_text_of_a_cidr_is_sized_as_its_longest_form() -> None:
    # "ffff:...:ffff/128": 43 characters, more than string()'s 40 for a number.
    doubled = estimate('string(cidr("::/0")) + string(cidr("::/0"))', {"device": "device"},
                       DEVICE_BOUNDS)
    assert doubled.largest == 2 * 43


@pytest.mark.parametrize(("source", "cost"), [
    # cost_test.go TestURLsCost and TestNameFormatCost (estimated costs)
    ("url('https:://kubernetes.io/').getScheme()", 3 + 1),  # 25 characters at 0.1, accessor
    ("url('https:://kubernetes.io/').getQuery()", 3 + 1),
    ("url('https:://kubernetes.io/') == url('https:://kubernetes.io/')", 3 + 3 + 3),
    ("url('https:://kubernetes.io/') == url('http://x.b')", 3 + 1 + 1),  # the right's size
    ('format.named("dns1123subdomain")', 1),
    ('format.named("dns1123Subdomain").value().validate("my-name")', 1 + 1 + 32),
    ('format.named("dns1123Label").value() == format.named("dns1123Label").value()',
     2 + 2 + 7),  # a name of at most 64 characters at 0.1
    # and over the device: a 64-character attribute
    ('isURL(device.driver)', 1 + 1 + 1),
    ('url(device.driver).getHost() == "x"', 2 + 7 + 1 + 1),
    ('format.dns1123Label().validate(device.driver).hasValue()', 1 + 2 + 7 * 32 + 1),
    ('format.uuid() == format.byte()', 1 + 1 + 7),
])
def test_url_and_format_cost_as_kubernetes_estimates_them(source: str, cost: int) -> None:
    # k8s.io/apiserver pkg/cel/library/cost.go EstimateCallCost, over the v1 device bounds.
    assert estimate(source, {"device": "device"}, DEVICE_BOUNDS).cost == cost


def test_a_url_query_is_as_large_as_the_url() -> None:
    built = estimate('url(device.driver).getQuery()["k"][0] + device.driver',
                     {"device": "device"}, DEVICE_BOUNDS)
    assert built.largest == 64 + 64


_INTS, _UINTS = "[1, 2, 3, 4, 5]", "[uint(1), uint(2), uint(3), uint(4), uint(5)]"
_DOUBLES, _BOOLS = "[1.0, 2.0, 3.0, 4.0, 5.0]", "[false, true, false, true, false]"
_DURATIONS = "[duration('1s'), duration('2s'), duration('3s'), duration('4s'), duration('5s')]"
_TIMESTAMPS = "[" + ", ".join(f"timestamp('2011-01-0{day}T00:00:00.000+01:00')"
                              for day in range(1, 6)) + "]"


@pytest.mark.parametrize(("source", "cost"), [
    # k8s.io/apiserver pkg/cel/library cost_test.go TestListsCost and TestIndexOfCost
    # (v0.36.2): 10 for the list, 1 per element, 1 per conversion in the literal.
    *((f"{_INTS}{call}", 15) for call in (".sum()", ".isSorted()", ".max()", ".min()")),
    *((f"{_UINTS}{call}", 20) for call in (".sum()", ".isSorted()", ".max()", ".min()")),
    *((f"{_DOUBLES}{call}", 15) for call in (".sum()", ".isSorted()", ".max()", ".min()")),
    *((f"{_BOOLS}{call}", 15) for call in (".isSorted()", ".max()", ".min()")),
    *((f"{_DURATIONS}{call}", 20) for call in (".sum()", ".isSorted()", ".max()", ".min()")),
    *((f"{_TIMESTAMPS}{call}", 20) for call in (".isSorted()", ".max()", ".min()")),
    *((f"{_INTS}.{f}(3)", 15) for f in ("indexOf", "lastIndexOf")),
    *((f"{_UINTS}.{f}(uint(3))", 21) for f in ("indexOf", "lastIndexOf")),
    *((f"{_DOUBLES}.{f}(3.0)", 15) for f in ("indexOf", "lastIndexOf")),
    *((f"{_BOOLS}.{f}(true)", 15) for f in ("indexOf", "lastIndexOf")),
    *((f"{_DURATIONS}.{f}(duration('3s'))", 21) for f in ("indexOf", "lastIndexOf")),
    (f"{_TIMESTAMPS}.indexOf(timestamp('2011-01-03T00:00:00.000+01:00'))", 21),
    # indexOf and lastIndexOf of strings are charged by name too: a traversal
    *((f"'{'0123456789' * 5}'.{f}('123')", 5) for f in ("indexOf", "lastIndexOf")),
    # cost_test.go TestSize...: find and findAll as matches, (string + 1) x 0.1 x regex x 0.25
    ("'abc 123 def 123'.find('123')", 2), ("'abc 123 def 123'.findAll('123')", 2),
    ("'abc 123 def 123'.findAll('123', 1)", 2),
    ("device.driver.find('[a-z]+[0-9]+')", 2 + 7 * 3),  # device.driver, 64 characters: 7 x 3
    # a dyn list (of attributes, 4 each): 1 per element (celhar: 21)
    ('[device.attributes["d"].a, device.attributes["d"].b].max() == 1', 10 + 2 * 4 + 2 + 1),
])
def test_lists_and_regex_cost_as_kubernetes_estimates_them(source: str, cost: int) -> None:
    assert estimate(source, {"device": "device"}, DEVICE_BOUNDS).cost == cost


@pytest.mark.parametrize("source", [
    "['a', 'b'].indexOf('b') == 1", "[b'a'].min() == b'a'",
    'device.attributes["d"].map(k, k).isSorted()', "[string(1)].indexOf('1') == 0",
])
def test_lists_of_strings_cost_beyond_any_limit_as_in_kubernetes(source: str) -> None:
    # Their elements' size is unknown to cel-go's estimator in DRA (no path to size them
    # by), so it charges math.MaxUint64 x 0.1 per element (celhar: ["a","b"].indexOf("b")
    # 3,689,348,814,741,910,540).
    assert estimate(source, {"device": "device"}, DEVICE_BOUNDS).cost > 10**18


def test_find_all_results_are_sized_by_the_string() -> None:
    doubled = estimate("device.driver.findAll('.') + device.driver.findAll('.')",
                       {"device": "device"}, DEVICE_BOUNDS)
    assert doubled.largest == 2 * 64

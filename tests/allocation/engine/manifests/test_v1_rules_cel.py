"""CEL selectors as the v1 rules check them (``manifests/v1_rules.py``): the v1
environment, the expression's length and estimated cost, and the CEL extensions each
Kubernetes release's API server lets new selectors use."""

from __future__ import annotations

import pytest

from allocation.engine.manifests import InvalidManifests
from tests.allocation.engine.manifests.v1_docs import claim_doc, class_doc, load, problems, request


def test_cel_selectors_compile_with_the_v1_environment():
    quantity_operator = 'device.capacity["gpu.example.com"].memory >= "8Gi"'
    lines = problems([class_doc(selectors=[{"cel": {"expression": quantity_operator}}]),
                      claim_doc([request(selectors=[{"cel": {"expression": "device.x"}}])])])
    assert lines[0].startswith("spec.selectors[0].cel.expression: invalid CEL selector: ")
    assert "_>=_" in lines[0]
    assert lines[1].startswith(
        "spec.devices.requests[0].exactly.selectors[0].cel.expression: invalid CEL selector")
    good = 'device.capacity["gpu.example.com"].memory.compareTo(quantity("8Gi")) >= 0'
    assert problems([class_doc(selectors=[{"cel": {"expression": good}}])]) == []


def test_cel_expression_at_most_10_kib():
    def doc(n):  # device.driver == "" is 19 characters
        return [class_doc(selectors=[{"cel": {"expression": f'device.driver == "{"x" * n}"'}}])]
    assert problems(doc(10240 - 19)) == []
    assert problems(doc(10240 - 18)) == [
        "spec.selectors[0].cel.expression: invalid CEL selector: compile error: expression "
        "is 10241 bytes, longer than the 10240-byte limit"]


def test_allow_multiple_allocations_is_gated_in_cel():
    expression = "device.allowMultipleAllocations"
    assert problems([class_doc(selectors=[{"cel": {"expression": expression}}])]) == []
    lines = problems([class_doc(selectors=[{"cel": {"expression": expression}}])], "1.35")
    assert len(lines) == 1
    assert lines[0].startswith("spec.selectors[0].cel.expression: invalid CEL selector")


def test_cel_estimated_cost_at_most_one_million():
    domain = 'device.attributes["d"]'
    below = f"{domain}.all(x, {domain}.all(y, {domain}.all(z, x != y || y != z)))"
    above = f"{domain}.all(w, {domain}.all(x, {domain}.all(y, {domain}.all(z, w != z))))"
    assert problems([claim_doc([request(selectors=[{"cel": {"expression": below}}])])]) == []
    lines = problems([claim_doc([request(selectors=[{"cel": {"expression": above}}])])])
    assert len(lines) == 1
    assert lines[0].startswith("spec.devices.requests[0].exactly.selectors[0].cel.expression: ")
    assert "exceeds the limit of 1,000,000" in lines[0]


# A new selector of each function family of the CEL lists extension, which Kubernetes 1.34's
# API server (compatibility version 1.33) refuses and 1.35 and later accept.
_LISTS_SELECTORS = {
    "slice": 'device.attributes["d"].all(k, [k, k].slice(0, 1) == [k])',
    "flatten": "[[1], [2]].flatten().size() == 2",
    "sort": "[2, 1].sort()[0] == 1",
    "sortBy": "[{'a': 2}, {'a': 1}].sortBy(e, e.a)[0].a == 1",
    "range": "lists.range(3).size() == 3",
    "reverse": "[1, 2].reverse()[0] == 2",
    "distinct": "[1, 1].distinct().size() == 1",
}


def _template_doc(selectors: list) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "t", "namespace": "default"},
            "spec": {"spec": {"devices": {"requests": [
                {"name": "r", "firstAvailable": [
                    {"name": "s", "deviceClassName": "gpu", "selectors": selectors}]}]}}}}


@pytest.mark.parametrize("function", sorted(_LISTS_SELECTORS))
def test_new_selectors_using_the_lists_extension_need_kubernetes_135(function):
    selectors = [{"cel": {"expression": _LISTS_SELECTORS[function]}}]
    docs = [class_doc(selectors=selectors), claim_doc([request(selectors=selectors)]),
            _template_doc(selectors)]
    lines = problems(docs, "1.34")
    paths = ["spec.selectors[0]", "spec.devices.requests[0].exactly.selectors[0]",
             "spec.spec.devices.requests[0].firstAvailable[0].selectors[0]"]
    assert len(lines) == 3
    for line, path in zip(lines, paths, strict=True):
        assert line.startswith(f"{path}.cel.expression: invalid CEL selector: line 1, column ")
        assert line.endswith(
            f"undeclared reference to '{function}' (in container ''): new selectors may use the "
            "CEL lists extension from compatibility version 1.34 on, not at 1.33 "
            "(Kubernetes 1.34)")
    assert problems(docs, "1.35") == []
    assert problems(docs, "1.36") == []


def test_refused_new_selector_names_the_object():
    selectors = [{"cel": {"expression": "[2, 1].sort()[0] == 1"}}]
    docs = [class_doc(name="sorted", selectors=selectors)]
    with pytest.raises(InvalidManifests) as caught:
        load(docs, "1.34")
    assert str(caught.value) == (
        "v1.yaml:1 (DeviceClass sorted): spec.selectors[0].cel.expression: invalid CEL "
        "selector: line 1, column 12: undeclared reference to 'sort' (in container ''): new "
        "selectors may use the CEL lists extension from compatibility version 1.34 on, not at "
        "1.33 (Kubernetes 1.34)")


@pytest.mark.parametrize("release", ["1.34", "1.35", "1.36"])
def test_regex_extension_selectors_are_refused_in_every_release(release):
    expression = 'regex.extract("ab", "b").hasValue()'
    docs = [class_doc(selectors=[{"cel": {"expression": expression}}])]
    assert problems(docs, release) == [
        "spec.selectors[0].cel.expression: invalid CEL selector: line 1, column 14: "
        "undeclared reference to 'extract' (in container ''): no Kubernetes release has the "
        f"CEL regex extension (Kubernetes {release})"]

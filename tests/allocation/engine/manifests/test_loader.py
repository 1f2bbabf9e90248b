"""Loading and validating manifests: every problem, one line each, naming object and field."""

from __future__ import annotations

import json

import pytest

from allocation.engine.manifests import InvalidManifests, load_texts
from allocation.engine.objects import NodeResourceSlice, OpaqueObject, Pod, ResourceClaim
from tests.factories import claim, named_slice, node, pod, problems_of, to_yaml

SEED_SLICE_WITH_TYPOS = """
kind: NodeResourceSlice
apiVersion: resource.k8s.io/v1alpha2
metadata:
  name: worker-1-cards
spec:
  nodeName: worker-1
  driverName: cards.dra.example.com
  namedResourcesWithAttributes:
  - name: gpu-0
    attributes:
    - name: UUID
      string: GPU-ceea231c-4257-7af7-6726-efcb8fc2ace9
    - name: driverVersion
      String: 1.2.3
    - name: productName:
      string: ACME T1000 32GB
"""


def test_seed_text_as_written_is_a_yaml_error_that_still_names_the_object():
    # `- name: productName:` is not valid YAML at all; the error must still say where and what.
    [line] = problems_of(SEED_SLICE_WITH_TYPOS, "seed.yaml")
    assert line.startswith("seed.yaml:1 (NodeResourceSlice worker-1-cards): <document>: "
                           "invalid YAML at line 16, column 24: mapping values are not allowed")
    assert "must be quoted" in line


def test_seed_typos_are_each_reported_with_object_and_field():
    text = SEED_SLICE_WITH_TYPOS.replace("name: productName:", 'name: "productName:"')
    lines = problems_of(text, "seed.yaml")
    prefix = "seed.yaml:1 (NodeResourceSlice worker-1-cards): spec.namedResourcesWithAttributes"
    assert f"{prefix}[0].attributes[1].String: unknown field (did you mean string?)" in lines
    assert any(line.startswith(f"{prefix}[0].attributes[2].name: invalid name 'productName:'")
               and "identifier" in line for line in lines)
    assert any("attributes[1]: exactly one of quantity, bool" in line for line in lines)


def test_partitionable_seed_typo_comon_attributes_refs():
    text = """
apiVersion: resource.k8s.io/v1alpha2
kind: NodeResourceSlice
metadata: {name: s}
spec:
  nodeName: worker-1
  driverName: cards.dra.example.com
  partitionable:
    commonAttributes: [{name: a4-half, attributes: [{name: memory, quantity: 16Gi}]}]
    resourceInstances:
    - name: first-half
      comonAttributesRefs: [a4-half]
"""
    lines = problems_of(text)
    assert ("bad.yaml:1 (NodeResourceSlice s): spec.partitionable.resourceInstances[0]."
            "comonAttributesRefs: unknown field (did you mean commonAttributesRefs?)") in lines


def test_every_problem_in_every_document_is_reported_in_order():
    docs = [node("Bad_Name"), claim("c1", class_name="gpu"),
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
             "spec": {"containers": [{"name": "x", "resources": {"requests": {"cpu": "lots"}}}]}}]
    docs[1]["spec"]["alocationMode"] = "Immediate"
    lines = problems_of(to_yaml(docs))
    assert lines[0].startswith("bad.yaml:1 (Node Bad_Name): metadata.name: invalid name")
    assert lines[1] == ("bad.yaml:2 (ResourceClaim default/c1): spec.alocationMode: "
                        "unknown field (did you mean allocationMode?)")
    assert lines[2].startswith("bad.yaml:3 (Pod default/p): spec.containers[0].resources."
                               "requests.cpu: ")


def test_cel_syntax_error_names_field_and_position():
    text = to_yaml([{"apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClaimParameters",
                     "metadata": {"name": "p"}, "requests": [{
                         "driverName": "d.example.com", "namedResourcesWithAttributes": {
                             "required": [{"selector": 'attributes["memory"] >= '}]}}]}])
    [line] = problems_of(text)
    assert line.startswith("bad.yaml:1 (ResourceClaimParameters default/p): requests[0]."
                           "namedResourcesWithAttributes.required[0].selector: invalid CEL")
    assert line.endswith("selector: line 1, column 25: the expression ends too early")


def test_over_long_expression_is_refused():
    selector = " || ".join(['attributes["memory"] >= "1Gi"'] * 500)
    text = to_yaml([{"apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClassParameters",
                     "metadata": {"name": "p"}, "filters": [{
                         "driverName": "d.example.com",
                         "namedResourcesWithAttributes": {"selector": selector}}]}])
    [line] = problems_of(text)
    assert "filters[0].namedResourcesWithAttributes.selector" in line and "10240" in line


def test_runaway_expression_is_refused_or_bounded():
    nested = "[" + ",".join(["1"] * 50) + "]"
    selector = (f"{nested}.all(a, {nested}.all(b, {nested}.all(c, {nested}.all(d, "
                "attributes[\"memory\"] >= \"1Gi\"))))")
    text = to_yaml([claim_params_doc(selector)])
    lines = problems_of(text)
    assert len(lines) == 1 and "selector" in lines[0]


def test_cel_memory_bomb_is_refused_with_its_estimate():
    bomb = "['" + "a" * 1000 + "']"
    for level in range(7):
        bomb += f".map(v{level}, {'+'.join([f'v{level}'] * 8)})"
    text = to_yaml([claim_params_doc(bomb + ".all(z, size(z) > 0)")])
    assert problems_of(text) == [
        "bad.yaml:1 (ResourceClaimParameters default/p): requests[0]."
        "namedResourcesWithAttributes.required[0].selector: CEL expression too expensive: "
        "estimated cost 1,048,575,734 exceeds the limit of 1,000,000"]


def _counter_class(template: str) -> dict:
    return {"apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClass",
            "metadata": {"name": "frobs"}, "driverName": "d.example.com",
            "numericParameters": [{"apiVersion": "c.example.com/v1", "kind": "Params",
                                   "celTemplate": template}]}


def test_numeric_templates_are_compiled_when_validated():
    assert problems_of(to_yaml([_counter_class("Required: {{ object.count }}\n")])) == []
    lines = problems_of(to_yaml([_counter_class(
        "Required: {{ object.count }}\nSelector: {{ object.count + }}\n")]))
    assert len(lines) == 1
    assert lines[0].startswith(
        "bad.yaml:1 (ResourceClass frobs): numericParameters[0].celTemplate: placeholder 2 "
        "{{object.count +}} is not valid CEL: line 1, column 15: the expression ends too early")


def test_numeric_template_too_expensive_is_refused():
    template = "Required: {{ object.items.map(a, object.items.map(b, a + b)).size() }}\n"
    [line] = problems_of(to_yaml([_counter_class(template)]))
    assert line == ("bad.yaml:1 (ResourceClass frobs): numericParameters[0].celTemplate: "
                    "placeholder 1 {{object.items.map(a, object.items.map(b, a + b)).size()}} "
                    "is not valid CEL: CEL expression too expensive: estimated cost "
                    "4,331,790 exceeds the limit of 1,000,000")


def claim_params_doc(selector: str) -> dict:
    return {"apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClaimParameters",
            "metadata": {"name": "p"}, "requests": [{
                "driverName": "d.example.com",
                "namedResourcesWithAttributes": {"required": [{"selector": selector}]}}]}


def test_resource_class_needs_exactly_one_mode():
    base = {"apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClass",
            "driverName": "d.example.com"}
    none = {**base, "metadata": {"name": "none"}}
    two = {**base, "metadata": {"name": "two"}, "structuredParameters": True,
           "controllerName": "d.example.com"}
    lines = problems_of(to_yaml([none, two]))
    assert "(ResourceClass none): <document>: exactly one allocation mode must be set" in lines[0]
    assert "(ResourceClass two): <document>: exactly one allocation mode may be set" in lines[1]


def test_limits_from_the_seeds():
    psc = {"apiVersion": "resource.k8s.io/v1alpha2", "kind": "PodSchedulingContext",
           "metadata": {"name": "p"}, "spec": {"potentialNodes": [f"n{i}" for i in range(129)]}}
    data = claim("c", status={"driverName": "d", "allocation": {"resourceHandles": [
        {"driverName": "d", "data": "x" * (16 * 1024 + 1)}]}})
    lines = problems_of(to_yaml([psc, data]))
    assert "spec.potentialNodes: must have at most 128 items, not 129" in lines[0]
    assert "status.allocation.resourceHandles[0].data: is 16385 bytes" in lines[1]


def test_unknown_kind_in_our_groups_and_wrong_api_version():
    docs = [{"apiVersion": "resource.k8s.io/v1alpha2", "kind": "ResourceClaimz",
             "metadata": {"name": "x"}},
            {"apiVersion": "resource.k8s.io/v1alpha3", "kind": "ResourceClaim",
             "metadata": {"name": "y"}}]
    lines = problems_of(to_yaml(docs))
    assert "kind: unknown kind 'ResourceClaimz' in resource.k8s.io/v1alpha2 (did you mean " \
        "ResourceClaim?)" in lines[0]
    assert "apiVersion: 'resource.k8s.io/v1alpha3' is not supported for ResourceClaim; use " \
        "resource.k8s.io/v1alpha2 or resource.k8s.io/v1beta1 or resource.k8s.io/v1beta2 or " \
        "resource.k8s.io/v1" in lines[1]


def test_duplicates_are_problems():
    lines = problems_of(to_yaml([node("a"), node("a")]))
    assert lines == ["bad.yaml:2 (Node a): metadata.name: duplicate object: Node a is also "
                     "defined at bad.yaml:1"]


def test_core_kinds_keep_unknown_fields_and_vendor_objects_are_kept():
    doc = pod("p")
    doc["spec"]["tolerations"] = [{"key": "x", "operator": "Exists"}]
    doc["spec"]["containers"][0]["ports"] = [{"containerPort": 80}]
    vendor = {"apiVersion": "dra.example.com/v1alpha1", "kind": "CardParameters",
              "metadata": {"name": "my", "namespace": "user"}, "spec": {"anything": [1, 2]}}
    loaded = load_texts([("ok.yaml", to_yaml([doc, vendor]))])
    p, v = loaded.objects
    assert isinstance(p, Pod) and isinstance(v, OpaqueObject)
    out = p.to_manifest()
    assert out["spec"]["tolerations"] == [{"key": "x", "operator": "Exists"}]
    assert out["spec"]["containers"][0]["ports"] == [{"containerPort": 80}]
    assert v.to_manifest() == vendor


def test_json_object_and_list_input():
    text = json.dumps({"apiVersion": "v1", "kind": "List",
                       "items": [node("a"), named_slice("a", [])]})
    loaded = load_texts([("in.json", text)])
    assert [o.name for o in loaded.objects] == ["a", "a-cards"]
    assert isinstance(loaded.objects[1], NodeResourceSlice)


def test_list_item_problems_carry_the_item_path():
    text = json.dumps({"apiVersion": "v1", "kind": "List", "items": [node("ok"), {"kind": "Node"}]})
    lines = problems_of(text, "in.json")
    assert lines == ["in.json:1 (Node <unnamed>): items[1].apiVersion: required field is missing"]


def test_namespace_defaults_and_input_status_is_honoured():
    status = {"driverName": "cards.dra.example.com", "reservedFor": []}
    loaded = load_texts([("x.yaml", to_yaml([claim("c", status=status)]))])
    [c] = loaded.objects
    assert isinstance(c, ResourceClaim) and c.namespace == "default"
    assert c.driver_name == "cards.dra.example.com"


def test_invalid_manifests_message_lists_problems():
    with pytest.raises(InvalidManifests) as info:
        load_texts([("x.yaml", "kind: Node\n")])
    assert "x.yaml:1 (Node <unnamed>): apiVersion: required field is missing" in str(info.value)


def test_load_documents_validates_parsed_documents_like_text():
    from allocation.engine.manifests import load_documents

    good = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}
    bad = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"nodeName": 7}}
    assert [o.name for o in load_documents([("db", good)]).objects] == ["n1"]
    with pytest.raises(InvalidManifests) as caught:
        load_documents([("db", good), ("db", bad)])
    assert [str(p) for p in caught.value.problems] == [
        "db:2 (Pod default/p): spec.nodeName: must be a string, not integer"]


def test_the_collector_is_paused_while_loading_and_resumed_after():
    import gc

    from allocation.engine.manifests import load_documents

    seen = []

    def trusted(document):
        seen.append(gc.isenabled())
        return False

    assert gc.isenabled()
    load_documents([("a", node("n1")), ("a", node("n2"))], trusted=trusted)
    assert seen == [False, False] and gc.isenabled()
    with pytest.raises(InvalidManifests):
        load_documents([("a", {"kind": "Nope"})], trusted=trusted)
    assert gc.isenabled()

"""``convert.report``: one warning per item, impossible objects remembered."""

from __future__ import annotations

from allocation.engine.convert import Report
from allocation.engine.objects import Node, Source


def _node(name: str) -> Node:
    return Node({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}},
                Source("f.yaml", 3))


def test_the_same_message_for_one_object_is_reported_once():
    report = Report()
    first, second = _node("a"), _node("b")
    report.warn(first, "x[0]", "same")
    report.warn(first, "x[1]", "same")
    report.warn(second, "x[0]", "same")
    assert [str(w) for w in report.warnings] == ["f.yaml:3 (Node a): x[0]: same",
                                                 "f.yaml:3 (Node b): x[0]: same"]
    assert report.failed == []


def test_impossible_items_mark_the_object_and_say_so():
    report = Report(lossy=True)
    node = _node("a")
    report.for_object(node)("spec", "no form", True)
    assert report.failed_object(node) and not report.failed_object(_node("b"))
    assert [str(w) for w in report.warnings] == [
        "f.yaml:3 (Node a): spec: cannot convert: no form (written as an approximation: "
        "--lossy)"]

"""allocation.services.editor: one object's YAML through the write services, problems and
warnings at their lines."""

from __future__ import annotations

import pytest
import yaml

from allocation.engine.manifests import Problem
from allocation.models import Cluster, DeviceClass, Node
from allocation.services.editor import InvalidEdit, at_lines, save_text
from allocation.services.manifests import import_texts
from allocation.services.permissions import NotPermitted
from tests import factories as f
from tests import v1_cluster as v1

CLASS = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu  # users name it
spec:
  selectors:
  - cel:
      expression: >-
        device.driver == "gpu.example.com" &&
        device.attributes["gpu.example.com"].model == "a100"
"""


@pytest.fixture
def stored(db):
    import_texts([("c.yaml", f.to_yaml(v1.cluster()))])
    return DeviceClass.objects.get(name="gpu")


def test_a_valid_text_is_stored_through_the_write_path(stored):
    revision = Cluster.objects.get().revision

    result = save_text(CLASS, DeviceClass, stored)

    assert result.warnings == []
    assert result.row.manifest["spec"]["selectors"][0]["cel"]["expression"] == (
        'device.driver == "gpu.example.com" && '
        'device.attributes["gpu.example.com"].model == "a100"')
    assert Cluster.objects.get().revision == revision + 1


@pytest.mark.parametrize(("change", "line", "path", "message"), [
    (("model ==", "model == =="), 8, "spec.selectors[0].cel.expression",
     "invalid CEL selector: line 1, column 85: unexpected"),  # a folded block: one line
    (("  - cel:", "  - cl:"), 7, "spec.selectors[0].cl", "unknown field (did you mean cel?)"),
    (("metadata:\n", "metadata:\n  labels: {a: [1]}\n"), 4, "metadata.labels.a", ""),
    (("spec:", "spec: [\n"), 8, "", "invalid YAML at line 8, column 3"),
])
def test_each_problem_is_placed_at_its_line_and_nothing_changes(stored, change, line, path,
                                                                message):
    before = stored.document

    with pytest.raises(InvalidEdit) as caught:
        save_text(CLASS.replace(*change), DeviceClass, stored)

    [first, *_] = [p for p in caught.value.problems if p.path == path]
    assert first.message.startswith(message)
    assert first.line == line
    assert str(first).startswith(f"line {first.line}: editor.yaml:1 (DeviceClass")
    assert DeviceClass.objects.get(name="gpu").document == before


def test_whole_cluster_problems_are_at_the_field_too(db):
    import_texts([("c.yaml", f.to_yaml([f.node("n1"), f.pod("p", node_name="n1")]))])
    node = Node.objects.get(name="n1")
    text = "apiVersion: v1\nkind: Node\nmetadata:\n  name: n2\n"

    with pytest.raises(InvalidEdit) as caught:
        save_text(text, Node, node)

    [problem] = caught.value.problems
    assert (problem.line, problem.path) == (4, "metadata.name")


def test_an_unknown_attribute_is_saved_with_a_warning_at_its_line(stored):
    text = CLASS.replace('.model == "a100"', '.modl == "a100"')

    result = save_text(text, DeviceClass, stored)

    [warning] = result.warnings
    assert warning.line == 8
    assert warning.message == ("no device in the cluster has an attribute "
                               "'gpu.example.com/modl' (did you mean gpu.example.com/model?)")
    assert "modl" in DeviceClass.objects.get(name="gpu").document


def test_a_user_who_may_not_write_the_kind_is_refused(stored, django_user_model):
    with pytest.raises(NotPermitted):
        save_text(CLASS, DeviceClass, stored, django_user_model.objects.create_user("u"))


def test_problems_of_other_files_have_no_line():
    problems = [Problem("stored", 3, "Pod", "default", "p", "spec.nodeName", "no node n9"),
                Problem("editor.yaml", 1, "Node", None, "n", "metadata.name", "bad")]
    placed = at_lines("apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n", problems)
    assert [(p.line, p.path) for p in placed] == [(None, "spec.nodeName"), (4, "metadata.name")]
    assert str(placed[0]) == "stored:3 (Pod default/p): spec.nodeName: no node n9"


def test_the_next_edit_opens_with_the_saved_comments_and_later_changes_merged_in(stored):
    from allocation.services.editor import text_for

    assert text_for(stored).startswith("apiVersion: resource.k8s.io/v1\nkind: DeviceClass\n")
    save_text(CLASS, DeviceClass, stored)
    assert text_for(DeviceClass.objects.get(name="gpu")) == CLASS  # exactly as saved
    changed = v1.device_class("gpu", 'device.driver == "gpu.example.com"')
    changed["metadata"]["labels"] = {"tier": "gold"}
    import_texts([("u.yaml", f.to_yaml([changed]))])  # a later write, not through the editor

    text = text_for(DeviceClass.objects.get(name="gpu"))

    assert "  name: gpu  # users name it\n  labels:\n    tier: gold\n" in text
    assert yaml.safe_load(text) == changed  # the stored document, in the saved text's style
    assert "      expression: >-\n" in text

"""Remembered verdicts (``manifests/remembered.py``) are the verdicts the schema gives.

The loader checks 8,000 near-identical pods with the verdicts of their specs, containers
and statuses remembered; a pod that differs in one field (a typo in the last pod of the
file) must still be checked in full and reported exactly as without remembering.
"""

from __future__ import annotations

import pytest

from allocation.engine.manifests import InvalidManifests, load_texts
from allocation.engine.manifests.problems import ProblemList
from allocation.engine.manifests.remembered import VERDICTS_KEPT, Remembered
from allocation.engine.manifests.schema import Int, ListOf, Obj, Str
from allocation.engine.writer import to_yaml


def _pod(index: int) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"pod-{index:05d}", "namespace": "default"},
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": "example/app",
                    "resources": {"requests": {"cpu": "1"}, "claims": [{"name": "gpu"}]},
                }
            ],
            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu-80gi"}],
        },
        "status": {"phase": "Pending"},
    }


def _problems(text: str) -> list[str]:
    with pytest.raises(InvalidManifests) as raised:
        load_texts([("pods.yaml", text)])
    return [str(problem) for problem in raised.value.problems]


def _slow(monkeypatch) -> None:
    monkeypatch.setattr(Remembered, "valid", lambda self, value: self.inner.valid(value))


@pytest.mark.parametrize("change", ["spec", "container", "status", "quantity"])
def test_a_typo_in_the_last_of_8000_pods_is_reported_as_without_remembering(change, monkeypatch):
    pods = [_pod(i) for i in range(8000)]
    last = pods[-1]
    if change == "spec":
        last["spec"]["nodeSelecter"] = {"zone": "a"}
    elif change == "container":
        last["spec"]["containers"][0]["imagePullPolicyy"] = "Always"
    elif change == "status":
        last["status"]["phase"] = 1
    else:
        last["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "-1"
    text = "---\n".join(to_yaml(p) for p in pods)
    remembered = _problems(text)
    assert len(remembered) == 1 and "pod-07999" in remembered[0]
    _slow(monkeypatch)
    assert _problems(text) == remembered


class _Text(str):
    """A string of another class: a value the key's marshal refuses."""


def _slice(index: int) -> dict:
    return {
        "apiVersion": "resource.k8s.io/v1alpha2",
        "kind": "NodeResourceSlice",
        "metadata": {"name": f"node-{index}-gpus"},
        "spec": {
            "nodeName": f"node-{index}",
            "driverName": "gpu.example.com",
            "namedResourcesWithAttributes": [
                {
                    "name": f"gpu-{device}",
                    "attributes": [
                        {"name": "model", "string": "A100"},
                        {"name": "index", "int": device},
                        {"name": "memory", "quantity": "40Gi"},
                    ],
                }
                for device in range(4)
            ],
        },
    }


@pytest.mark.parametrize("change", ["two types", "no type", "bad name", "bad quantity", "repeated"])
def test_a_bad_attribute_in_the_last_slice_is_reported_as_without_remembering(change, monkeypatch):
    slices = [_slice(i) for i in range(200)]
    attributes = slices[-1]["spec"]["namedResourcesWithAttributes"][3]["attributes"]
    if change == "two types":
        attributes[0]["int"] = 1
    elif change == "no type":
        del attributes[0]["string"]
    elif change == "bad name":
        attributes[0]["name"] = "9model"
    elif change == "bad quantity":
        attributes[2]["quantity"] = "40Gii"
    else:
        attributes.append({"name": "model", "string": "A100"})
    text = "---\n".join(to_yaml(s) for s in slices)
    remembered = _problems(text)
    assert len(remembered) == 1 and "node-199-gpus" in remembered[0]
    _slow(monkeypatch)
    assert _problems(text) == remembered


def test_values_that_print_alike_in_json_are_told_apart():
    schema = Remembered(Obj({"n": Int(), "s": Str(), "l": ListOf(Int())}))
    values = [
        {"n": 1},
        {"n": 1.0},
        {"n": True},
        {"n": "1"},
        {"n": 1.5},
        {"s": "1"},
        {"s": 1},
        {"l": [1]},
        {"l": (1,)},
        {"l": [True]},
        {"n": 1},
        {"n": None},
        {"n": float("nan")},
        {"n": float("inf")},
        {"n": -0.0},
        {"n": 2**70},
        {"x": 1},
        {"s": None},
        {"s": _Text("1")},  # marshal refuses subclasses: keyed by repr, as {"s": "1"} prints
        {"s": "1", "n": 1},
        {"n": 1, "s": "1"},
        {1: "1"},
    ]
    for value in values + values:
        problems = ProblemList()
        schema.inner.check(value, "", problems)
        assert schema.valid(value) == (not problems) == schema.inner.valid(value), value


def test_equal_values_read_apart_share_one_verdict():
    # Eight thousand pods read from text are distinct objects with equal specs: one key.
    schema = Remembered(Obj({"s": Str(), "l": ListOf(Str())}))
    for index in range(100):
        text = "".join(["ab", str(index % 2)])  # a new string object each time
        assert schema.valid({"s": text, "l": [text, "x" + text[2:]]})
    assert len(schema._verdicts) == 2


def test_at_most_so_many_verdicts_are_kept():
    schema = Remembered(Int(maximum=VERDICTS_KEPT))
    for number in range(VERDICTS_KEPT + 10):
        assert schema.valid(number) == (number <= VERDICTS_KEPT)
    assert len(schema._verdicts) == VERDICTS_KEPT
    assert not schema.valid(VERDICTS_KEPT + 5)

"""``requestCount``, ``handleData`` and their checks when manifests are loaded."""

from __future__ import annotations

from allocation.engine.controlplane.requests import (
    render_handle_data,
    request_count,
)
from allocation.engine.objects import DriverSimulation
from allocation.engine.templates import placeholders
from tests.allocation.engine.controlplane.cp_factories import driver_sim
from tests.factories import problems_of, to_yaml


def _sim(**kw) -> DriverSimulation:
    return DriverSimulation(driver_sim("d.example.com", [("p", 1, None)], **kw))


def test_request_count_defaults_to_one_and_evaluates_over_the_vendor_object():
    assert request_count(_sim(), None) == (1, None)
    sim = _sim(request_count="object.spec.gpus * 2")
    assert request_count(sim, {"spec": {"gpus": 3}}) == (6, None)


def test_request_count_failures_name_the_simulation_and_field():
    sim = _sim(request_count="object.spec.gpus - 5")
    count, error = request_count(sim, {"spec": {"gpus": 3}})
    assert count == 0
    assert error == "DriverSimulation d: spec.requestCount 'object.spec.gpus - 5' must not " \
        "be negative, got -2"
    _count, error = request_count(sim, None)
    assert error.startswith("DriverSimulation d: spec.requestCount 'object.spec.gpus - 5' "
                            "failed:")


def test_handle_data_renders_placeholders_as_text_or_json():
    sim = _sim(handle_data='pool={{ pool }} n={{count}} node={{ node }} spec={{ object.spec }}')
    data, error = render_handle_data(sim, {"object": {"spec": {"a": 1}}, "claim": {},
                                           "pool": "p", "count": 2, "node": "n1"})
    assert error is None
    assert data == 'pool=p n=2 node=n1 spec={"a": 1}'
    assert placeholders(sim.handle_data) == ["pool", "count", "node", "object.spec"]
    assert render_handle_data(_sim(), {}) == (None, None)


def test_handle_data_placeholder_that_fails_is_an_error():
    sim = _sim(handle_data="{{ object.spec.missing }}")
    data, error = render_handle_data(sim, {"object": {"spec": {}}, "claim": {}, "pool": "p",
                                           "count": 1, "node": ""})
    assert data is None
    assert error.startswith("DriverSimulation d: spec.handleData: placeholder "
                            "{{object.spec.missing}} failed:")


def test_invalid_expressions_are_reported_when_loading():
    doc = driver_sim("d.example.com", [("p", 1, None)], request_count="object.(",
                     handle_data="ok {{ pool }} bad {{ count + }}")
    problems = problems_of(to_yaml([doc]))
    assert len(problems) == 2
    assert problems[0].startswith("bad.yaml:1 (DriverSimulation d): spec.requestCount: "
                                  "invalid CEL expression:")
    assert problems[1].startswith("bad.yaml:1 (DriverSimulation d): spec.handleData: "
                                  "placeholder 2 {{count +}} is not valid CEL:")

"""``{{ expression }}`` templates: a placeholder's value as JSON text (templates.py), as
both templates (a DriverSimulation's handleData, a celTemplate) render it."""

from __future__ import annotations

import pytest

from allocation.engine.controlplane.requests import render_handle_data
from allocation.engine.models.counter_template import TemplateError, expand_template
from allocation.engine.objects import DriverSimulation
from allocation.engine.templates import json_text
from tests.allocation.engine.controlplane.cp_factories import driver_sim


def test_json_text_sorts_keys_and_keeps_json_values():
    assert json_text({"b": 1, "a": [1.5, True, None, "x"]}) == \
        '{"a": [1.5, true, null, "x"], "b": 1}'


@pytest.mark.parametrize(("source", "said"), [
    ('b"a"', "a bytes value has no JSON form"),
    ('duration("1s")', "a duration value has no JSON form"),
    ('timestamp("2020-01-01T00:00:00Z")', "a timestamp value has no JSON form"),
    ("type(1)", "a type value has no JSON form"),
    # the first key by its text: the map's own order is not the same on every run
    ('{2: 1, 1: 2, "a": 3}', "a map key 1 is not a string: JSON keys are strings"),
])
def test_a_placeholder_value_without_a_json_form_is_an_error_in_both_templates(source, said):
    sim = DriverSimulation(driver_sim("d.example.com", [("p", 1, None)],
                                       handle_data=f"data: {{{{ {source} }}}}"))
    data, error = render_handle_data(sim, {"object": {}, "claim": {}, "pool": "p",
                                           "count": 1, "node": ""})
    assert data is None
    assert error == f"DriverSimulation d: spec.handleData: placeholder {{{{{source}}}}} " \
        f"gave no JSON value: {said}"
    with pytest.raises(TemplateError) as raised:
        expand_template(f"Required: {{{{ {source} }}}}", {})
    assert str(raised.value) == f"placeholder {{{{{source}}}}} gave no JSON value: {said}"



"""console.api: the one exception handler of the REST API, and the API's mounting."""

from types import SimpleNamespace

from django.urls import reverse
from rest_framework.exceptions import NotFound

from allocation.api import urls as allocation_api
from allocation.engine.manifests import InvalidManifests
from allocation.services.objects import ObjectExists
from allocation.services.permissions import NotPermitted
from console.api import exception_handler
from scenarios import services as scenario_services
from scenarios.api import urls as scenarios_api


def _answer(exc):
    response = exception_handler(exc, {})
    return response.status_code, response.data


def test_invalid_manifests_are_a_400_listing_every_problem():
    problems = ["a.yaml:1 (Pod default/p): spec: required", "a.yaml:2 (Node n): x: bad"]
    assert _answer(InvalidManifests(problems)) == (400, {"problems": problems})


def test_not_permitted_is_a_403_naming_the_kinds():
    assert _answer(NotPermitted(["Node n1"])) == (403, {"detail": "only staff may write Node n1"})


def test_an_existing_object_is_a_409():
    row = SimpleNamespace(kind="Node", api_group="", ref="n1")
    exc = ObjectExists.__new__(ObjectExists)
    Exception.__init__(exc, "Node n1 already exists")
    exc.row = row
    assert _answer(exc) == (409, {"detail": "Node n1 already exists"})


def test_scenario_refusals():
    assert _answer(scenario_services.Invalid("selectors[0]: too costly")) == (
        400, {"refused": "selectors[0]: too costly"})
    assert _answer(scenario_services.Refused("node 'w' not found")) == (
        409, {"refused": "node 'w' not found"})
    conflict = scenario_services.Conflict.__new__(scenario_services.Conflict)
    Exception.__init__(conflict, "the baseline moved")
    conflict.changed = [{"kind": "Node", "name": "n1"}]
    assert _answer(conflict) == (409, {"refused": "the baseline moved",
                                       "changed": [{"kind": "Node", "name": "n1"}]})


def test_other_exceptions_go_to_drf_or_propagate():
    assert _answer(NotFound("gone")) == (404, {"detail": "gone"})
    assert exception_handler(RuntimeError("bug"), {}) is None


def test_each_app_mounts_its_own_api_routes_under_one_namespace():
    assert {prefix for prefix, _, _ in scenarios_api.router.registry} == {"scenarios"}
    assert "scenarios" not in {prefix for prefix, _, _ in allocation_api.router.registry}
    assert reverse("api:scenarios-list") == "/api/scenarios/"
    assert reverse("api:nodes-list") == "/api/nodes/"

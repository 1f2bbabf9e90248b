"""scenarios/collector.py: a scenario page's request runs with the cyclic collector paused
and runs the collection it owes once answered, which frees the evaluation the request
dropped from the cache (cyclic garbage) at once."""

from __future__ import annotations

import gc
import weakref

import pytest
from django.contrib.auth import get_user_model

from scenarios import collector, evaluation, services
from tests.scenarios.cluster import store

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice(client):
    user = get_user_model().objects.create_user("alice", password="pw")
    client.force_login(user)
    return user


@pytest.fixture(autouse=True)
def _collector_restored():
    yield
    gc.unfreeze()  # a baseline made "large" in a test is frozen
    gc.enable()


def test_a_drop_is_evaluated_and_drawn_with_the_collector_paused_then_resumed(
        client, alice, monkeypatch):
    import scenarios.views

    store()
    scenario = services.create(alice, "plan")
    seen = []
    drawn = scenarios.views.page

    def page(*args, **kwargs):
        seen.append(gc.isenabled())
        return drawn(*args, **kwargs)

    monkeypatch.setattr(scenarios.views, "page", page)
    answer = client.post(f"/scenarios/{scenario.pk}/changes/",
                         {"op": "remove-node", "node": "worker-2"}, HTTP_HX_REQUEST="true")
    assert answer.status_code == 200 and seen == [False]
    assert gc.isenabled() and not collector.owed()  # resumed once the answer was sent


def test_a_view_that_raises_resumes_the_collector_at_once():
    def broken(request):
        assert not gc.isenabled()
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        collector.collector_paused(broken)(None)
    assert gc.isenabled() and not collector.owed()


def test_the_owed_collection_resumes_the_collector_only_when_owed():
    gc.disable()
    collector.collect_owed()  # nothing owed: someone else's pause is left alone
    assert not gc.isenabled()
    gc.enable()


def test_an_evaluation_dropped_from_the_cache_is_freed_when_its_request_ends(
        client, alice, monkeypatch):
    monkeypatch.setattr(evaluation, "_FREEZE_FROM", 0)  # as if large: one evaluation kept
    store()
    scenario = services.create(alice, "plan")
    url = f"/scenarios/{scenario.pk}/changes/"
    client.get(f"/scenarios/{scenario.pk}/")
    # the page's evaluation, kept: its fork of the baseline's state is in reference cycles
    # (the state and its inventory index name each other), so refcounting cannot free it
    first = weakref.ref(services.evaluation(scenario)[0].state)
    gc.disable()  # no collection falls due on its own: only the one the request owes
    client.post(url, {"op": "remove-node", "node": "worker-2"}, HTTP_HX_REQUEST="true")
    assert first() is None  # dropped from the cache by the drop, and collected after it

"""allocation.engine.events: what makes Events one series, and folding a repeat into it."""

from allocation.engine.events import fold, series_key


def _event(**changes) -> dict:
    event = {"apiVersion": "v1", "kind": "Event", "type": "Warning",
             "reason": "FailedScheduling", "message": "0/4 nodes are available",
             "metadata": {"name": "p1.00000001", "namespace": "default"},
             "involvedObject": {"kind": "Pod", "namespace": "default", "name": "p1"},
             "firstTimestamp": "2026-01-01T00:00:00Z", "lastTimestamp": "2026-01-01T00:00:00Z",
             "count": 1, "source": {"component": "default-scheduler"}}
    event.update(changes)
    return event


def test_a_series_is_one_reason_about_one_object_from_one_component():
    key = series_key(_event())
    assert key == ("Pod", "default", "p1", "Warning", "FailedScheduling", "default-scheduler")
    assert series_key(_event(message="0/5 nodes are available")) == key  # the latest shows
    other_object = _event(involvedObject={"kind": "Pod", "namespace": "default", "name": "p2"})
    for different in (_event(reason="Scheduled"), _event(type="Normal"), other_object,
                      _event(source={"component": "cluster-autoscaler"})):
        assert series_key(different) != key


def test_series_key_takes_malformed_events():
    assert series_key({"involvedObject": "nope", "source": 3, "reason": 7}) == (
        "", "", "", "", "", "")
    assert series_key({"regarding": {"kind": "Pod", "name": "p"}, "reason": "R",
                       "reportingComponent": "c"})[::2] == ("Pod", "p", "R")


def test_fold_keeps_the_first_name_and_time_and_takes_the_latest_rest():
    first = _event(count=3)
    later = _event(message="0/5 nodes are available", lastTimestamp="2026-01-01T00:05:00Z",
                   metadata={"name": "p1.00000042", "namespace": "default"})
    folded = fold(first, later)
    assert folded["metadata"]["name"] == "p1.00000001"
    assert folded["firstTimestamp"] == "2026-01-01T00:00:00Z"
    assert folded["lastTimestamp"] == "2026-01-01T00:05:00Z"
    assert folded["message"] == "0/5 nodes are available" and folded["count"] == 4
    assert first["count"] == 3 and later["count"] == 1  # neither argument changes


def test_fold_counts_an_event_without_a_count_as_one():
    assert fold(_event(count=None), _event(count=True))["count"] == 2

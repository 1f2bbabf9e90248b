"""v1 naming rules (``manifests/v1_names.py``)."""

from __future__ import annotations

import pytest

from allocation.engine.manifests.problems import ProblemList
from allocation.engine.manifests.v1_names import (
    check_qualified_keys,
    qualified_keys,
    qualified_name_problem,
)


@pytest.mark.parametrize("name", ["model", "_x9", "a" * 32, "gpu.example.com/model",
                                  "d" * 59 + ".com/" + "a" * 32])
def test_valid_qualified_names(name):
    assert qualified_name_problem(name) is None


@pytest.mark.parametrize(("name", "fragment"), [
    ("a" * 33, "at most 32 characters"), ("9lives", "C identifier"),
    ("has-dash", "C identifier"), ("d" * 60 + ".com/x", "at most 63 characters"),
    ("/x", "DNS subdomain"), ("Example.com/x", "DNS subdomain"), ("example.com/", "C identifier"),
])
def test_invalid_qualified_names(name, fragment):
    assert fragment in qualified_name_problem(name)


def test_fully_qualified_names_need_the_domain():
    assert qualified_name_problem("model", full=True) == (
        "invalid name 'model': a fully qualified name must be <domain>/<id> (the domain is "
        "required)")
    assert qualified_name_problem("gpu.example.com/model", full=True) is None


@pytest.mark.parametrize("full", [False, True])
def test_a_remembered_answer_is_the_one_computed_afresh(full):
    names = ["model", "9lives", "gpu.example.com/model", "Example.com/x", "a" * 33, "model"]
    for name in names + names:
        assert qualified_name_problem(name, full) == \
            qualified_name_problem.__wrapped__(name, full)


@pytest.mark.parametrize("keys", [
    {}, {"memory": 1}, {"example.com/memory": 1}, {"memory": 1, "Bad-key": 2},
    {"bad_domain_/x": 1}, {"x" * 33: 1}, {"memory": 1, "memory2": 2}])
def test_qualified_keys_agrees_with_check_qualified_keys(keys):
    for _ in range(2):  # the second time from the keys remembered valid
        found = ProblemList()
        check_qualified_keys(keys, "m", found)
        assert qualified_keys(keys) is (not found)

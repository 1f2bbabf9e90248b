"""``Schema.valid`` agrees with ``Schema.check`` (manifests/schema.py).

The loader trusts ``valid`` to skip ``check`` on valid documents, so the two must give
the same verdict on every value: the documents of the examples and test data, and every
one of them with one value replaced by a value of another type or shape, or one unknown
field added.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from allocation.engine import kinds
from allocation.engine.manifests.kinds import schema_of
from allocation.engine.manifests.problems import ProblemList
from allocation.engine.manifests.schema import Int, Obj
from allocation.engine.manifests.v1_convert import is_v1_kind, prepare
from allocation.engine.v1.features import make_profile

ROOT = Path(__file__).resolve().parents[4]
FILES = [*sorted((ROOT / "examples").glob("*.yaml")),
         *sorted((ROOT / "tests/allocation/engine/manifests/data").glob("*.yaml")),
         *sorted((ROOT / "tests/allocation/engine/models/data").glob("*.yaml"))]
_PATHS_PER_DOCUMENT = 40  # a kubectl pod has hundreds of values: a stride through them
REPLACEMENTS = [None, -1, 2**70, 2.0, True, "", "Bad_Name", "16Gi", [], [{}], {}]


def _documents() -> list[dict]:
    profile = make_profile()
    found = []
    for path in FILES:
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if not isinstance(doc, dict) or kinds.lookup(doc.get("apiVersion"),
                                                         doc.get("kind")) is None:
                continue
            found.append(prepare(doc, profile).data if is_v1_kind(doc) else doc)
    return found


def _paths(value, path=()):
    """The path (keys and indexes) of every value below ``value``."""
    items = value.items() if isinstance(value, dict) else \
        enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        yield (*path, key)
        yield from _paths(item, (*path, key))


def _copy_at(doc: dict, path: tuple):
    """A copy of ``doc`` and the container of ``path`` in it."""
    changed = copy.deepcopy(doc)
    container = changed
    for key in path[:-1]:
        container = container[key]
    return changed, container


def _verdicts(doc: dict) -> tuple[bool, bool]:
    schema = schema_of(kinds.lookup(doc["apiVersion"], doc["kind"]))
    problems = ProblemList()
    schema.check(doc, "", problems)
    return schema.valid(doc), not problems


def _variants(doc: dict):
    yield doc
    paths = list(_paths(doc))
    for path in paths[::max(1, len(paths) // _PATHS_PER_DOCUMENT)]:
        if path in (("apiVersion",), ("kind",)):
            continue
        for replacement in REPLACEMENTS:
            changed, container = _copy_at(doc, path)
            container[path[-1]] = copy.deepcopy(replacement)
            yield changed
        changed, container = _copy_at(doc, path)
        if isinstance(container[path[-1]], dict):
            container[path[-1]]["unknownField"] = "x"
            yield changed


DOCUMENTS = _documents()


def test_the_documents_are_many_and_valid():
    assert len(DOCUMENTS) > 20
    assert all(_verdicts(doc) == (True, True) for doc in DOCUMENTS)


@pytest.mark.parametrize("index", range(len(DOCUMENTS)))
def test_valid_agrees_with_check_on_every_variant(index):
    seen_invalid = False
    for variant in _variants(DOCUMENTS[index]):
        valid, no_problem = _verdicts(variant)
        assert valid == no_problem, variant
        seen_invalid |= not valid
    assert seen_invalid


@pytest.mark.parametrize("value", [
    {}, {"a": 1}, {"b": 1}, {"a": None}, {"a": None, "b": 1}, {"a": 1, "b": None},
    {"a": None, "b": None}, {"a": 1, "b": 1}, {"a": 1, "b": 1, "c": 1},
    {"a": 1, "c": 1}, {"c": 1, "d": None}, {"a": 1, "b": None, "c": 1, "d": 1},
])
def test_groups_count_set_fields_only(value):
    # ``valid`` counts a group's fields by set intersection; a field given as null is not
    # set, as for ``check``.
    schema = Obj({name: Int() for name in "abcd"}, one_of=(("a", "b"),),
                 at_most_one=(("c", "d"),))
    problems = ProblemList()
    schema.check(value, "", problems)
    set_ab = sum(value.get(name) is not None for name in "ab")
    set_cd = sum(value.get(name) is not None for name in "cd")
    assert schema.valid(value) == (not problems) == (set_ab == 1 and set_cd <= 1)

"""The caches shared by seed and v1 selectors (allocation/engine/cel/_cache.py)."""

from __future__ import annotations

import pytest

from allocation.engine.cel import _cache
from allocation.engine.cel._cache import CompiledCache, ResultCache


def test_results_are_computed_once_per_key_and_counted() -> None:
    cache: ResultCache[tuple[bool, str]] = ResultCache()
    calls = []
    before = (_cache.STATS.lookups, _cache.STATS.evaluations)
    for key in ("a", "b", "a", "a"):
        assert cache.get(key, lambda key=key: (calls.append(key) or True, key)) == (True, key)
    assert calls == ["a", "b"]
    assert (_cache.STATS.lookups - before[0], _cache.STATS.evaluations - before[1]) == (4, 2)


def test_a_full_result_cache_is_cleared(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_cache, "CACHE_SIZE", 2)
    cache: ResultCache[int] = ResultCache()
    calls = []
    for key in (1, 2, 3, 1):
        cache.get(key, lambda key=key: calls.append(key) or key)
    assert calls == [1, 2, 3, 1]  # 3 cleared the cache holding 1 and 2


def test_compiled_entries_are_kept_but_failures_are_not() -> None:
    cache: CompiledCache[object] = CompiledCache()
    first = cache.get("x", object)
    assert cache.get("x", object) is first

    def fail() -> object:
        raise ValueError("bad")

    for _ in range(2):
        with pytest.raises(ValueError):
            cache.get("y", fail)

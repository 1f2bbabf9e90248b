"""Fixtures for the conversion tests: convert YAML text, get documents and warning lines."""

from __future__ import annotations

import textwrap

import pytest

from allocation.engine.convert import convert_loaded
from allocation.engine.manifests import load_texts


@pytest.fixture
def convert():
    """``convert(text, **options) -> (items, warnings, conversion)`` for ``in.yaml``."""
    def run(text: str, **options):
        loaded = load_texts([("in.yaml", textwrap.dedent(text))])
        result = convert_loaded(loaded, **options)
        return result.items, [str(w) for w in result.report.warnings], result
    return run

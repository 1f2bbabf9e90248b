from __future__ import annotations

import pytest

from allocation.engine.versions import parse_version


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("1.2.3", "1.2.3"),
        (" v12.0.0 ", "12.0.0"),
        ("v1.2", "1.2.0"),
        ("1", "1.0.0"),
        ("01.002.03", "1.2.3"),
        ("1.2.3-rc.1+build.5", "1.2.3-rc.1+build.5"),
        ("v1.0.0-alpha", "1.0.0-alpha"),
    ],
)
def test_tolerant_parsing(text: str, canonical: str) -> None:
    assert str(parse_version(text)) == canonical


@pytest.mark.parametrize("text", ["", "abc", "1.2.x", "1.2-rc", "1..2", "1.2.3.4"])
def test_invalid_versions_are_rejected(text: str) -> None:
    with pytest.raises(ValueError, match="not a valid semantic version"):
        parse_version(text)


def test_versions_order_semantically() -> None:
    assert parse_version("v12.0") > parse_version("9.10.0")
    assert parse_version("1.0.0-rc.1") < parse_version("1.0.0")

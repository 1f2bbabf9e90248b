from __future__ import annotations

import pytest

from allocation.engine.versions import parse_strict_version, parse_version


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


@pytest.mark.parametrize(("text", "normalize", "canonical"), [
    ("1.2.3", False, "1.2.3"),
    ("1.2.3-rc.1+build.05", False, "1.2.3-rc.1+build.05"),
    ("0.0.0-0a.x-y", False, "0.0.0-0a.x-y"),
    ("v1.2", True, "1.2.0"),
    ("01.01.01", True, "1.1.1"),
    ("v1", True, "1.0.0"),
    ("1.2.3", True, "1.2.3"),
])
def test_strict_versions(text: str, normalize: bool, canonical: str) -> None:
    assert str(parse_strict_version(text, normalize)) == canonical


@pytest.mark.parametrize(("text", "normalize"), [
    ("v1.2.3", False), ("1.2", False), ("01.2.3", False), ("1.2.3-01", False),
    ("1.2.3-", False), ("1.2.3+", False), (" 1.2.3", False), ("1.2.3\n", False),
    ("1.2.3-é", False), ("١.2.3", False), ("18446744073709551616.0.0", False),
    ("1.0.0-18446744073709551616", False), (" 1.2.3", True), ("1.0-rc", True),
    ("1.2.3-01", True), (123, False),
])
def test_strict_versions_refused(text: object, normalize: bool) -> None:
    with pytest.raises(ValueError):
        parse_strict_version(text, normalize)  # type: ignore[arg-type]

"""Which v1 device selectors a Kubernetes API server accepts as *new* expressions.

The API server compiles a selector of a DeviceClass, ResourceClaim or ResourceClaimTemplate
that is created (or updated with changed selectors) in its new-expressions environment: only
the CEL extensions Kubernetes had by its compatibility version, by default the release before
its own, so that a downgrade by one release still compiles every stored selector. A stored
selector, and the scheduler, use every extension the binary has, which is what
``compile_device_selector`` compiles with (k8s.io/apiserver pkg/cel/environment base.go and
environment.go, dynamic-resource-allocation cel/compile.go; docs/cel.md "Environments by
release"). So Kubernetes 1.34 (compatibility version 1.33) refuses a new selector that uses
the lists extension (``sort``, ``lists.range``, ...), which came with 1.34.
"""

from __future__ import annotations

import re
from functools import lru_cache

from allocation.engine.cel import _k8s
from allocation.engine.cel._errors import CelCompileError
from allocation.engine.cel._library import compile_device_program

__all__ = ["check_new_device_selector"]


def check_new_device_selector(expression: str, *, compatibility: tuple[int, int],
                              consumable_capacity: bool = True,
                              list_type_attributes: bool = False) -> None:
    """Refuse ``expression`` when the new-expressions environment of the API server's CEL
    ``compatibility`` version, (major, minor), does not compile it. Meant for an expression
    that ``compile_device_selector`` accepts: then the only possible cause is a function of
    an extension added later (or never) to Kubernetes.

    Raises:
        CelCompileError: cel-go's error at the function, as the API server reports it
            (``undeclared reference to 'sort' (in container '')``), followed by the
            extension and the compatibility version from which new selectors may use it.
    """
    refusal = _refusal(expression, compatibility, consumable_capacity, list_type_attributes)
    if refusal is not None:  # a fresh error: raising the cached one would grow its traceback
        raise CelCompileError(refusal.message, refusal.line, refusal.column)


@lru_cache(maxsize=4096)
def _refusal(expression: str, compatibility: tuple[int, int], consumable_capacity: bool,
             list_type_attributes: bool) -> CelCompileError | None:
    """The error for ``expression`` at ``compatibility``, None when it compiles (cached: a
    load compiles each selector of every claim of a template once per claim)."""
    later, names = _later(compatibility)
    if names is None or names.search(expression) is None:
        return None  # it names nothing the missing extensions declare: nothing to compile
    try:
        compile_device_program(expression, consumable_capacity, compatibility,
                               list_type_attributes)
    except CelCompileError as error:
        reason = _missing_extension(expression, later, compatibility, consumable_capacity,
                                    list_type_attributes)
        if reason is None:  # it does not compile with every extension either
            return error
        return CelCompileError(f"{error.message}: {reason}", error.line, error.column)
    return None


_Later = tuple[tuple[tuple[int, int] | None, tuple[str, ...]], ...]


@lru_cache(maxsize=8)
def _later(compatibility: tuple[int, int]) -> tuple[_Later, re.Pattern[str] | None]:
    """The extensions a new expression lacks at ``compatibility``, grouped by the release
    that added them, in release order, those of no release last; and a search for any
    identifier they declare as a whole word (also inside string literals: then the
    expression is compiled for nothing, never accepted wrongly), None if they declare none."""
    later: dict[tuple[int, int] | None, list[str]] = {}
    names: list[str] = []
    for name, _version, introduced, declares in sorted(
            _k8s.EXTENSIONS, key=lambda entry: entry[2] or (999, 0)):
        if introduced is None or introduced > compatibility:
            later.setdefault(introduced, []).append(name)
            names.extend(declares)
    search = re.compile(rf"\b(?:{'|'.join(names)})\b") if names else None
    return tuple((release, tuple(group)) for release, group in later.items()), search


def _missing_extension(expression: str, later: _Later, compatibility: tuple[int, int],
                       consumable_capacity: bool, list_type_attributes: bool) -> str | None:
    """Which extension the expression needs: those of the first later release whose
    new-expressions environment compiles it."""
    for introduced, names in later:
        try:
            compile_device_program(expression, consumable_capacity, introduced,
                                   list_type_attributes)
        except CelCompileError:
            continue
        extensions = f"CEL {' and '.join(names)} extension{'s' if len(names) > 1 else ''}"
        if introduced is None:
            return f"no Kubernetes release has the {extensions}"
        return (f"new selectors may use the {extensions} from compatibility version "
                f"{_dotted(introduced)} on, not at {_dotted(compatibility)}")
    return None


def _dotted(version: tuple[int, int]) -> str:
    return f"{version[0]}.{version[1]}"

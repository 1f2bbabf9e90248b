"""A probe on a quiet memo (``allocation/engine/quiet.py``) for tests that check which
kinds a controller asks it for."""

from __future__ import annotations

from allocation.engine.quiet import Quiet


def kinds_asked(quiet: Quiet) -> list[type]:
    """Record every class ``quiet.unknown_of`` is asked for from now on (its answers are
    unchanged).

    Returns:
        The list the classes are appended to, in the order asked.
    """
    asked: list[type] = []
    unknown_of = quiet.unknown_of
    quiet.unknown_of = lambda state, cls: asked.append(cls) or unknown_of(state, cls)
    return asked


def rounds_not_asking(controller, state, kind: type) -> list[type]:
    """Two rounds of ``controller`` (its memo at ``controller.quiet``) on ``state``, with
    the pod ``default/a`` touched between them (a touch the memo's first walk must not
    lose): neither changes anything or asks the memo for ``kind``.

    Returns:
        The classes asked for, as :func:`kinds_asked` keeps them (later rounds add to it).
    """
    asked = kinds_asked(controller.quiet)
    assert not controller.reconcile(state)
    state.writable(state.get("Pod", "default", "a"))
    assert not controller.reconcile(state)
    assert kind not in asked
    return asked

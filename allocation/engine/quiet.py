"""Objects a controller found nothing to do for, remembered until something they depend on
changes.

Every round of every pass visits every object of its kind in every controller. On a settled
cluster almost every one needs nothing (a bound pod whose claims are allocated and reserved,
a claim whose reservations are all of running pods), and checking each again was most of a
round: the worker's kept state (docs/console.md, "The kept state") settles one new pod among
thousands. A controller remembers such an object with the keys its answer read (the object
itself always), and skips it while none of them changed.

Changes are seen through ``ClusterState.touched`` (every change goes through ``writable``,
``add`` or ``remove``, which append the key there, repeats included): at the start of each
round the keys touched since the last look drop what depends on them. A key is a
dependency whether its object exists or not (one created later counts as a change). A state
whose ``touched`` is a new list (the worker's catch-up) is read from its start.

An answer is looked up by the object's identity (``id``), not its key: the memo holds every
object it knows, so no other live object can have that identity, and a pass of a settled
cluster asks once per object per controller (:meth:`Quiet.unknown` for a whole kind).

:meth:`Quiet.unknown_of` answers for a whole kind without asking per object: after one walk
of the kind, the objects not known are among the keys then not known, touched since or
forgotten since (``_maybe``), so a kept pass (docs/console.md, "The kept state") costs what
it touched and what still needs work, not every object, and gives the same objects in the
same (document) order.

:meth:`Quiet.remember_after` takes an answer that the caller's own changes made true (a pod
the scheduler has just bound, its claims allocated and reserved): it is known from the next
round unless its object or a dependency is touched after it was given, so that object is not
visited a second time only to find nothing to do.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, TypeVar, get_args

from allocation.engine.objects import KObject

if TYPE_CHECKING:
    from allocation.engine.objects import ObjectKey
    from allocation.engine.state import ClusterState

__all__ = ["Quiet"]

_KIND_NAME = KObject.kind_name  # the key's kind is the class's own ``kind`` (KObject.key)

_T = TypeVar("_T")


class Quiet:
    """The objects known to need nothing, and what each answer depends on."""

    def __init__(self) -> None:
        self._state: ClusterState | None = None
        self._touched: list | None = None
        self._read = 0  # how much of ``_touched`` was looked at
        self._known: dict[ObjectKey, KObject] = {}
        self._ids: dict[int, KObject] = {}  # id(obj) -> obj, for every obj in ``_known``
        self._deps: dict[ObjectKey, set[ObjectKey]] = {}
        # the keys of ``_deps`` whose set this memo may change; None: every one. After
        # ``fork_for`` both memos share the sets and copy one before changing it.
        self._own: set[ObjectKey] | None = None
        # for unknown_of: the classes walked once in this state, and a superset of the keys
        # of their objects not known (gathered from ``touched`` up to ``_seen``)
        self._walked: set[type] = set()
        # the key kinds their objects can have (``_kinds_of``), or None: any; a key of
        # another kind is not gathered (its object is of no walked class)
        self._kinds: set[str] | None = set()
        self._maybe: set[ObjectKey] = set()
        self._seen_list: list | None = None
        self._seen = 0
        # answers a pass made true by its own changes (remember_after): the object, its
        # dependencies and how long ``touched`` was when the answer held
        self._after: list[tuple[KObject, list[ObjectKey], int]] = []
        # answers given since the last observe whose dependencies are not in ``_deps`` yet
        # (remember): (the object's key, its dependencies)
        self._unfiled: list[tuple[ObjectKey, Iterable[ObjectKey]]] = []

    def observe(self, state: ClusterState) -> None:
        """Forget what depends on keys touched since the last call (call at the start of
        every round, before :meth:`known`)."""
        if state is not self._state:
            self._known.clear()
            self._ids.clear()
            self._deps.clear()
            self._own = None
            self._walked.clear()
            self._kinds = set()
            self._maybe.clear()
            self._unfiled = []
            # what was touched before is in the walk each kind gets first (unknown_of)
            self._seen_list, self._seen = state.touched, len(state.touched)
        if state is not self._state or state.touched is not self._touched:
            self._state, self._touched, self._read = state, state.touched, 0
            self._after.clear()  # their places are in a list no longer read
        if self._unfiled:
            self._file()
        touched, deps, known = state.touched, self._deps, self._known
        if deps or known:  # else no answer at all: a memo's first round, or one after a
            # round that remembered nothing, need not read the keys a large state touched
            for key in touched[self._read:]:
                if key in known:  # an answer depends on its own object (not in ``_deps``)
                    self._forget(key)
                for dependent in deps.pop(key, ()):
                    self._forget(dependent)
        self._read = len(touched)
        if self._after:
            if self._walked:  # first, so that what it remembers leaves ``_maybe``
                self._gather(state)
            self._remember_after(state)

    def _forget(self, key: ObjectKey) -> None:
        obj = self._known.pop(key, None)
        if obj is not None:
            del self._ids[id(obj)]
            self._maybe.add(key)

    def _gather(self, state: ClusterState) -> None:
        """Add the keys ``state`` touched since the last look to ``_maybe``. A new
        ``touched`` list (the worker's catch-up) is read from its start, after the rest of
        the list it replaced: a key touched there and not repeated would otherwise be lost."""
        maybe, touched, kinds = self._maybe, state.touched, self._kinds
        if touched is not self._seen_list:
            if self._seen_list is not None:
                maybe.update(_of_kinds(self._seen_list[self._seen:], kinds))
            self._seen_list, self._seen = touched, 0
        maybe.update(_of_kinds(touched[self._seen:], kinds))
        self._seen = len(touched)

    def fork_for(self, state: ClusterState) -> Quiet:
        """What this memo knows, for a fork of its state (``ClusterState.fork``): the fork
        shares every object, so what was quiet here is quiet there until the fork changes
        what it depends on.

        This memo first observes its own state (as :meth:`observe` would at its next round),
        dropping what depends on keys that state touched since this memo's last look. Those
        keys are not in the fork's ``touched`` (a fork starts with an empty list), so without
        that the copy would keep answers the changes made before the fork invalidated. The
        parent loses nothing it would have kept: its next :meth:`observe` would drop the same
        answers. The copy reads the fork's ``touched`` from its start.

        The dependency sets are shared, not copied (a large cluster's memo holds one per
        pod and claim; a scenario's fork changes a few): each memo copies a set before it
        first changes it (:meth:`remember`).

        Returns:
            A new memo for ``state``. This memo is brought up to date with its own state
            (changed as by :meth:`observe`), so callers that fork from several threads hold
            a lock (``Simulation.fork``).
        """
        twin = Quiet()
        if self._state is not None:
            self.observe(self._state)  # what this state touched since this memo's last look
            twin._known = dict(self._known)
            twin._ids = dict(self._ids)
            twin._deps = dict(self._deps)
            self._own, twin._own = set(), set()
            self._gather(self._state)
            twin._walked = set(self._walked)
            twin._kinds = None if self._kinds is None else set(self._kinds)
            twin._maybe = set(self._maybe)
        twin._state, twin._touched = state, state.touched
        twin._seen_list = state.touched
        return twin

    def known(self, obj: KObject) -> bool:
        """Whether ``obj`` is known to need nothing."""
        return id(obj) in self._ids

    def unknown(self, objects: Iterable[KObject]) -> list[KObject]:
        """The ``objects`` not known to need nothing, in their order."""
        ids = self._ids
        return [obj for obj in objects if id(obj) not in ids]

    def unknown_of(self, state: ClusterState, cls: type[_T]) -> list[_T]:
        """``unknown(state.of_kind(cls))``, found among the keys that may be unknown
        (``_maybe``) once the kind was walked in this state: its cost follows what was
        touched and what still needs work. Call after :meth:`observe` of ``state``.

        Returns:
            The objects of ``cls`` (a class or a union) not known to need nothing, in
            document order.
        """
        if state is not self._state:
            return self.unknown(state.of_kind(cls))
        self._gather(state)
        if cls not in self._walked:
            found = self.unknown(state.of_kind(cls))
            self._maybe.update([obj.key for obj in found])  # a list: no generator step each
            self._walked.add(cls)
            kinds = _kinds_of(cls)
            self._kinds = None if kinds is None or self._kinds is None else \
                self._kinds | kinds
            return found
        objects, ids, maybe = state.objects, self._ids, self._maybe
        walked = tuple(self._walked)
        keys = []
        for key in list(maybe):
            obj = objects.get(key)
            if obj is None or id(obj) in ids or not isinstance(obj, walked):
                # gone, known or of no kind asked for: it comes back when touched or
                # forgotten, and a kind first asked for later is walked then
                maybe.discard(key)
            elif isinstance(obj, cls):
                keys.append(key)
        return [objects[key] for key in state.in_order(keys)]

    def remember_after(self, state: ClusterState, obj: KObject, deps: list[ObjectKey]
                       ) -> None:
        """``obj`` needs nothing as things stand now, while it and ``deps`` do not change
        from now on: known from the next :meth:`observe` unless one of them is touched
        before it.

        For an answer the caller's own pass made true (the scheduler's pod bound just now,
        whose visit in the next round would find nothing to do): the touches of the
        changes that made it true come before it and do not forget it, as they would forget
        an answer given to :meth:`remember` in the same pass. Until that observe the object
        is not known, so the rest of the pass sees what it would have seen without it.
        Nothing is remembered for a state or ``touched`` list other than the last observed.
        """
        if state is self._state and state.touched is self._touched:
            self._after.append((obj, deps, len(state.touched)))

    def _remember_after(self, state: ClusterState) -> None:
        """Remember the answers of :meth:`remember_after` whose object and dependencies were
        not touched since (each key's last place in ``touched`` says), the object still
        being the state's."""
        after, self._after = self._after, []
        touched, objects = state.touched, state.objects
        start = min(mark for _obj, _deps, mark in after)
        # built in C (a dict comprehension ran a bytecode loop per key touched): a key met
        # again keeps its last place, as each later pair replaces the earlier
        last = dict(zip(touched[start:], range(start, len(touched)), strict=True))
        known, ids, maybe, unfiled = self._known, self._ids, self._maybe, self._unfiled
        for obj, deps, mark in after:
            key = obj.key
            if objects.get(key) is not obj or last.get(key, -1) >= mark:
                continue
            for dep in deps:  # a loop, not all() over a generator: asked per pod bound
                if last.get(dep, -1) >= mark:
                    break
            else:
                # remember(obj, deps) of an object that is the state's, inline: asked per
                # answer, thousands in a large cluster's second round
                old = known.get(key)
                if old is not obj:
                    if old is not None:
                        del ids[id(old)]
                    known[key] = obj
                    ids[id(obj)] = obj
                maybe.discard(key)
                unfiled.append((key, deps))

    def remember(self, obj: KObject, deps: Iterable[ObjectKey]) -> None:
        """``obj`` needs nothing while it and ``deps`` do not change."""
        key = obj.key
        known, ids = self._known, self._ids
        old = known.get(key)
        if old is not obj:
            if old is not None:  # _forget's work, inline: asked per object of a pass
                del ids[id(old)]
                self._maybe.add(key)
            known[key] = obj
            ids[id(obj)] = obj
        state = self._state
        if state is not None and state.objects.get(key) is obj:
            # known now rather than pruned by the next unknown_of (after a walk, every key
            # is there); an older copy than the state's leaves the key, as it is unknown
            self._maybe.discard(key)
        # filed in ``_deps`` at the next observe, before it reads what was touched: the
        # same answers are forgotten as if filed now, and a settle's last round (its
        # answers are every bound pod's and claim's: docs/architecture.md, "Speed") does
        # not file what only a later pass reads. The deps are not changed after the call
        # (every caller's list is its answer's own).
        self._unfiled.append((key, deps))

    def _file(self) -> None:
        """Enter the dependencies of the answers given since the last look in ``_deps``."""
        unfiled, self._unfiled = self._unfiled, []
        # the object itself is not entered in ``_deps``: observe forgets a known key that
        # is touched (a set per answer for its own key was most of a large pass's sets)
        deps_of, own = self._deps, self._own
        if own is None:  # no fork shares a set (fork_for): add in place, asked per object
            for key, deps in unfiled:
                for dep in deps:
                    found = deps_of.get(dep)  # not setdefault: no empty set per dependency
                    if found is None:
                        deps_of[dep] = {key}
                    else:
                        found.add(key)
            return
        for key, deps in unfiled:
            for dep in deps:
                found = deps_of.get(dep)
                if found is None:
                    deps_of[dep] = {key}
                    own.add(dep)
                elif dep in own:
                    found.add(key)
                elif key not in found:  # shared with a fork's memo (fork_for): copy, add
                    deps_of[dep] = {*found, key}
                    own.add(dep)


def _kinds_of(cls: type) -> set[str] | None:
    """The kinds of the keys of objects of ``cls`` (a class or a union): each class's and
    its subclasses' ``kind`` (``KObject.key``); None when one has none of its own (its
    objects' kind is their document's, so any)."""
    members, kinds = list(get_args(cls) or (cls,)), set()
    while members:
        member = members.pop()
        kind = getattr(member, "kind", None)
        if not isinstance(member, type) or not isinstance(kind, str) or not kind \
                or getattr(member, "kind_name", None) is not _KIND_NAME:
            return None
        kinds.add(kind)
        members.extend(member.__subclasses__())
    return kinds


def _of_kinds(keys: list, kinds: set[str] | None) -> list:
    """The ``keys`` (``ObjectKey``s) of one of ``kinds`` (None: every key)."""
    if kinds is None:
        return keys
    return [key for key in keys if key[0] in kinds]

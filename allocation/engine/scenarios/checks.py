"""The whole-cluster checks of a scenario's fork, judged on what the scenario changed.

A load of a scenario's documents refuses what is wrong with objects together (admin access
without the namespace's label, a ``metadata.uid`` two objects share:
``manifests.cluster_problems``; a pod mixing v1 and seed claims:
``simulation.refuse_unsimulated_v1``). Run over every object of a large cluster, these
checks cost more than the scenario's own simulation, on every drop. A fork is its settled
baseline with some objects removed and some put in; when the baseline itself passes the
checks (found once per baseline), only what a change can make wrong is checked, which
answers exactly what the whole-cluster checks would (docs/scenarios.md, "Evaluation, diff
and undo"):

- admin access: only a changed object can newly lack its namespace's label, unless a
  Namespace itself changed (then every object is checked again);
- uids: a new duplicate involves a changed object's uid;
- v1 and seed claims: only a changed pod can newly mix them, or a pod naming a claim or
  claim template that is new or changed dialect (a removed one cannot make a mix), unless
  a PodTemplate changed or names such a claim (then every object is checked again);
- the input's status (``input_status.check_input``: a pod bound to a missing node, a
  reservation a claim cannot hold): only a changed pod or claim can newly fail, unless a
  Node was removed (then every pod and claim is checked again).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from allocation.engine import kinds
from allocation.engine.input_status import check_input
from allocation.engine.manifests import InvalidManifests, LoadResult, cluster_problems
from allocation.engine.manifests.uids import duplicate_uids
from allocation.engine.objects import PodTemplate
from allocation.engine.simulation import refuse_unsimulated_v1

if TYPE_CHECKING:
    from allocation.engine.objects import KObject, ObjectKey
    from allocation.engine.state import ClusterState

__all__ = ["passes", "base_passes", "carried_passes", "fork_passes", "check_fork_input"]

_V1_CLAIM_KINDS = (kinds.RESOURCE_CLAIM_V1, kinds.RESOURCE_CLAIM_TEMPLATE_V1)
_CLAIM_KINDS = (*_V1_CLAIM_KINDS, kinds.RESOURCE_CLAIM, kinds.RESOURCE_CLAIM_TEMPLATE)
_WIDE = (kinds.NAMESPACE.name, kinds.POD_TEMPLATE.name)  # a change of these: check all
_clean: WeakKeyDictionary[ClusterState, bool] = WeakKeyDictionary()
_input_clean: WeakKeyDictionary[ClusterState, bool] = WeakKeyDictionary()
_indexes: WeakKeyDictionary[ClusterState, tuple[list[ObjectKey], dict[str, list[ObjectKey]]]] = (
    WeakKeyDictionary())


def passes(objects: list[KObject]) -> bool:
    """Whether ``objects`` pass every whole-cluster check (all of them are looked at)."""
    if cluster_problems(objects):
        return False
    try:
        refuse_unsimulated_v1(LoadResult(objects=objects))
    except InvalidManifests:
        return False
    return True


def base_passes(base: ClusterState) -> bool:
    """:func:`passes` of ``base``'s objects, found once per state: a settled baseline is
    only ever forked, never changed (its forks copy what they change). A console calls it
    when it builds a baseline, so no drop pays for it."""
    found = _clean.get(base)
    if found is None:
        found = _clean[base] = passes(list(base.objects.values()))
        _index(base)  # what fork_passes looks up, also made now rather than in a drop
        _input_passes(base)  # what check_fork_input asks, also now
    return found


def carried_passes(base: ClusterState, state: ClusterState) -> bool:
    """:func:`base_passes` of ``state``, a fork of ``base`` that took changes and settled
    (a console's baseline caught up from the change log), judged on the objects that
    differ from ``base``'s as a scenario's fork is (:func:`fork_passes`), with the indexes
    ``fork_passes`` looks up carried over from ``base``'s rather than made again.

    Returns:
        What ``base_passes(state)`` answers.
    """
    found = _clean.get(state)
    if found is not None:
        return found
    before, after = base.objects, state.objects
    fresh = [obj for key, obj in after.items() if before.get(key) is not obj]
    gone = [key for key in before if key not in after]
    found = _clean[state] = fork_passes(base, state, fresh, gone)
    namespaces, uids = _index(base)
    if any(o.kind_name == kinds.NAMESPACE.name for o in fresh) or any(
            k.kind == kinds.NAMESPACE.name for k in gone):
        namespaces = [k for k, o in after.items() if o.kind_name == kinds.NAMESPACE.name]
    uids = dict(uids)  # base's lists are shared until changed, then replaced
    for key in [*gone, *(o.key for o in fresh)]:
        old = before.get(key)
        if old is not None and old.meta.uid:
            left = [k for k in uids[old.meta.uid] if k != key]
            if left:
                uids[old.meta.uid] = left
            else:
                del uids[old.meta.uid]
    for obj in fresh:
        if obj.meta.uid:
            uids[obj.meta.uid] = [*uids.get(obj.meta.uid, ()), obj.key]
    _indexes[state] = (namespaces, uids)
    if _input_passes(base) and not any(key.kind == kinds.NODE.name for key in gone):
        probe = state.fork()
        problems = len(probe.problems)
        check_input(probe, fresh)
        _input_clean[state] = len(probe.problems) == problems
    return found


def check_fork_input(base: ClusterState, fork: ClusterState, fresh: Sequence[KObject],
                     gone: Sequence[ObjectKey]) -> None:
    """``check_input(fork)``: the problems of ``fork``'s input status, recorded in
    ``fork.problems``, looking only at ``fresh`` when nothing else can have one; ``fork``
    is a fork of ``base`` with ``gone`` removed and ``fresh`` put in. Whether any problem
    is recorded is what ``check_input`` of every object would say (their order aside)."""
    if not _input_passes(base) or any(key.kind == kinds.NODE.name for key in gone):
        check_input(fork)
    else:
        check_input(fork, fresh)


def _input_passes(base: ClusterState) -> bool:
    """Whether ``check_input`` finds nothing in ``base`` (once per state; looked at in a
    fork, as it records what it finds)."""
    found = _input_clean.get(base)
    if found is None:
        probe = base.fork()
        problems = len(probe.problems)
        check_input(probe)
        found = _input_clean[base] = len(probe.problems) == problems
    return found


def fork_passes(base: ClusterState, fork: ClusterState, fresh: Sequence[KObject],
                gone: Sequence[ObjectKey]) -> bool:
    """Whether ``fork``'s objects pass every whole-cluster check, as :func:`passes` of them
    would answer; ``fork`` is a fork of ``base`` with ``gone`` removed and ``fresh`` put in
    (new objects, or replacing ``base``'s of the same key).

    Returns:
        True when nothing would be refused.
    """
    if not base_passes(base) or _wide(base, fresh, gone):
        return passes(list(fork.objects.values()))
    uids = {obj.meta.uid for obj in fresh if obj.meta.uid}
    namespace_keys, uid_keys = _index(base)
    # No Namespace changed (else ``_wide``): the fork's are the baseline's. An object holding
    # one of ``uids`` is a fresh one or the baseline's (``uid_keys``), if the fork kept it.
    namespaces = [fork.objects[k] for k in namespace_keys if k in fork.objects]
    keys = dict.fromkeys(k for uid in uids for k in uid_keys.get(uid, ()))
    keys.update(dict.fromkeys(obj.key for obj in fresh))
    holders = [obj for obj in (fork.objects.get(k) for k in keys)
               if obj is not None and obj.meta.uid in uids]
    if cluster_problems([*namespaces, *fresh]) or duplicate_uids(holders):
        return False
    pods = [obj for obj in fresh if obj.kind_spec == kinds.POD]
    named = _redialected(base, fresh)
    if named:
        if any(_names(entry, template.namespace, named)
               for template in fork.of_kind(PodTemplate)
               for entry in _template_entries(template)):
            return passes(list(fork.objects.values()))
        pods = list({id(p): p for p in [*pods, *(
            pod for pod in fork.pods()
            if any(_names((c.template_name, c.claim_name), pod.namespace, named)
                   for c in pod.claims))]}.values())
    if not pods:
        return True
    try:
        refuse_unsimulated_v1(LoadResult(objects=[*_claims_of(fork, pods), *pods]))
    except InvalidManifests:
        return False
    return True


def _index(base: ClusterState) -> tuple[list[ObjectKey], dict[str, list[ObjectKey]]]:
    """``base``'s Namespaces, and its objects by ``metadata.uid`` (once per state)."""
    found = _indexes.get(base)
    if found is None:
        namespaces: list[ObjectKey] = []
        uids: dict[str, list[ObjectKey]] = {}
        for key, obj in base.objects.items():
            if obj.kind_name == kinds.NAMESPACE.name:
                namespaces.append(key)
            if obj.meta.uid:
                uids.setdefault(obj.meta.uid, []).append(key)
        found = _indexes[base] = (namespaces, uids)
    return found


def _wide(base: ClusterState, fresh: Sequence[KObject], gone: Sequence[ObjectKey]) -> bool:
    """Whether the change can make objects it did not touch fail a check."""
    return (any(key.kind in _WIDE for key in gone)
            or any(obj.kind_name in _WIDE for obj in fresh))


def _redialected(base: ClusterState, fresh: Sequence[KObject]) -> set[tuple]:
    """(kind, namespace, name) of the claims and claim templates among ``fresh`` that are
    new or of another dialect than ``base``'s: a pod naming one may newly mix dialects."""
    found = set()
    for obj in fresh:
        if obj.kind_spec in _CLAIM_KINDS:
            before = base.objects.get(obj.key)
            if before is None or (before.kind_spec in _V1_CLAIM_KINDS) != (
                    obj.kind_spec in _V1_CLAIM_KINDS):
                found.add((obj.kind_name, obj.namespace, obj.name))
    return found


def _names(entry: tuple, namespace: str | None, named: set[tuple]) -> bool:
    """Whether a pod's claim entry ``(template name, claim name)`` in ``namespace`` names
    one of ``named``, as ``refuse_unsimulated_v1`` looks its dialect up."""
    template, claim = entry
    key = (("ResourceClaimTemplate", namespace, template) if template
           else ("ResourceClaim", namespace, claim))
    return key in named


def _template_entries(template: KObject) -> list[tuple]:
    """A PodTemplate's pods' claim entries, as ``refuse_unsimulated_v1`` reads them."""
    spec = template.template.get("spec") or {}
    return [(e.get("resourceClaimTemplateName"), e.get("resourceClaimName"))
            for e in spec.get("resourceClaims") or () if isinstance(e, dict)]


def _claims_of(state: ClusterState, pods: Sequence[KObject]) -> list[KObject]:
    """The claims and claim templates ``pods`` name, as ``state`` has them."""
    found: dict[ObjectKey, KObject] = {}
    for pod in pods:
        for entry in pod.claims:
            for kind, name in (("ResourceClaim", entry.claim_name),
                               ("ResourceClaimTemplate", entry.template_name)):
                obj = state.get(kind, pod.namespace, name) if name else None
                if obj is not None:
                    found[obj.key] = obj
    return list(found.values())

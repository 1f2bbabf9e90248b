"""The read model: the rows pages and lists query, computed from a settled engine state.

The worker calls :func:`record` inside the transaction that saves its pass, so the rows
always describe a state that was committed with them. Only rows whose values changed are
written (a pass that settles nothing new writes nothing here either). Pages and API lists
read these rows instead of building a cluster state (docs/console-pages.md, "The read
model"); objects the pass left out (a row that cannot be loaded) have no read-model row.

The vocabulary lives here once: a pod's pending reason (:func:`pending_reason`), the unit
of each structured model (:data:`MODEL_UNITS`), what a claim holds (:func:`held`).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import NamedTuple

from django.db import models
from django.db.models import Max

from allocation.engine.constants import NODE_GROUP_LABEL
from allocation.engine.objects import ResourceClaim, ResourceClaimV1
from allocation.engine.scheduling import gates
from allocation.engine.state import ClusterState
from allocation.engine.v1.results import allocated_node_name
from allocation.models import (
    ClaimSummary,
    Cluster,
    DeviceUsage,
    NodeSummary,
    PodSummary,
    list_column,
)
from allocation.models.claim import claim_status
from allocation.models.pod import pod_status
from allocation.services.bulk import insert_rows, update_rows
from allocation.services.node_rows import (
    MODEL_UNITS,
    V1_MODEL,
    Pools,
    Spans,
    affected,
    label_items,
    node_rows,
    pool_nodes,
    spans_of,
)
from allocation.services.writes import commit_revision

__all__ = ["MODEL_UNITS", "V1_MODEL", "NOT_TRIED", "pending_reason", "held", "label_items",
           "rows_of", "sync", "record"]

NOT_TRIED = "not tried by the scheduler yet"

_BATCH = 500  # rows per bulk statement (SQLite's variable limit stays far away)

Key = tuple
Rows = dict[type[models.Model], dict[Key, dict]]


def pending_reason(pod) -> str:
    """The PodScheduled=False message, or why there is none (yet)."""
    condition = pod.condition("PodScheduled")
    if condition and condition.get("status") == "False":
        return str(condition.get("message") or condition.get("reason") or "Unschedulable")
    return gates.other_scheduler(pod) or NOT_TRIED


def held(claim) -> int:
    """Devices, partitions or units a claim's allocation holds (v1: its results)."""
    if claim.allocation is None:
        return 0
    if isinstance(claim, ResourceClaimV1):
        return len(claim.results)
    if claim.allocation.picks:
        return sum(candidate.amount for _inventory, candidate in claim.allocation.picks)
    return len(claim.allocation.handles)  # control-plane allocations: one per handle


def _position(obj) -> int:
    """The object's place in document order: its stored row's (the worker gives the objects
    it creates theirs when it saves them: services/reconcile.py)."""
    return obj.source.doc if obj.source is not None else 0


def _pod_row(state: ClusterState, pod) -> dict:
    node = pod.node_name or ""
    group = state.nodes[node].labels.get(NODE_GROUP_LABEL, "") if node in state.nodes else ""
    namespace = pod.namespace or "default"
    return {"position": _position(pod), "namespace": namespace, "name": pod.name,
            "status": pod_status(pod), "node": node, "node_group": group,
            "reason": pending_reason(pod) if not node and not pod.terminated else "",
            "labels": label_items(pod.meta.labels),
            "claims": list_column(pod.claim_name(c) for c in pod.claims)}


def _pod_rows(state: ClusterState) -> dict[Key, dict]:
    return {(pod.namespace or "default", pod.name): _pod_row(state, pod)
            for pod in state.pods()}


def _summary(claim) -> tuple[list[str], str, str]:
    """The allocation's drivers, node, and the allocation in one line."""
    if claim.allocation is None:
        return [], "", ""
    if isinstance(claim, ResourceClaimV1):
        drivers = sorted({str(r.get("driver", "")) for r in claim.results})
        node = allocated_node_name(claim.allocation) or ""
        devices = [f"{r.get('pool')}/{r.get('device')}" for r in claim.results]
        return drivers, node, ", ".join(devices)
    # The node as the stored document names it (structured handles): a control-plane
    # allocation's node is only known in memory while it is made, so it would flip.
    node = next((h["structuredData"].get("nodeName") for h in claim.allocation.handles
                 if h.get("structuredData")), None) or allocated_node_name(
        {"nodeSelector": claim.allocation.available_on_nodes}) or ""
    driver = claim.driver_name or ""
    amount = held(claim)
    where = f" on {node}" if node else " (network-attached)"
    return [driver], node, f"{driver}: {amount}{where}"


def _claim_row(claim) -> dict:
    drivers, node, summary = _summary(claim)
    namespace = claim.namespace or "default"
    if isinstance(claim, ResourceClaim):
        classes, pods = [claim.class_name], claim.reserved_pods()
    else:
        classes = claim.class_names
        pods = [r.get("name") for r in claim.reserved_for if r.get("resource") == "pods"]
    return {"position": _position(claim), "namespace": namespace, "name": claim.name,
            "api_version": claim.api_version, "state": claim_status(claim),
            "classes": list_column(classes), "drivers": list_column(drivers), "node": node,
            "held": held(claim), "summary": summary, "reserved_for": list_column(pods)}


def _claim_rows(state: ClusterState) -> dict[Key, dict]:
    claims: Iterable = [*state.claims(), *state.of_kind(ResourceClaimV1)]
    return {(claim.namespace or "default", claim.name): _claim_row(claim) for claim in claims}


def _touched_rows(state: ClusterState, touched: Iterable) -> tuple[dict, dict]:
    """The pod and claim rows of the objects at ``touched`` keys (None: the object is
    gone), or None per model when every row must be made again (a node touched: the pods'
    node groups may have changed)."""
    pods: dict[Key, dict | None] | None = {}
    claims: dict[Key, dict | None] = {}
    for key in set(touched):
        rows = pods if key.kind == "Pod" else claims if key.kind == "ResourceClaim" else None
        if key.kind == "Node":
            pods = None
        if rows is None:
            continue
        obj = state.objects.get(key)
        ident = (key.namespace or "default", key.name)
        if obj is None:
            rows[ident] = None
        elif key.kind == "Pod":
            rows[ident] = _pod_row(state, obj)
        elif isinstance(obj, ResourceClaim | ResourceClaimV1):
            rows[ident] = _claim_row(obj)
    return pods, claims


_KEYS: dict[type[models.Model], tuple[str, ...]] = {
    NodeSummary: ("name",), DeviceUsage: ("node", "driver", "model"),
    PodSummary: ("namespace", "name"), ClaimSummary: ("namespace", "name")}


def rows_of(state: ClusterState) -> Rows:
    """Every read-model row ``state`` implies, per model, keyed by the model's identity."""
    nodes, usage = node_rows(state)
    return {NodeSummary: nodes, DeviceUsage: usage, PodSummary: _pod_rows(state),
            ClaimSummary: _claim_rows(state)}


def _sync_model(model: type[models.Model], wanted: dict[Key, dict],
                stored: dict[Key, dict] | None) -> tuple[int, dict[Key, dict] | None]:
    """Write what differs between ``wanted`` and the stored rows (``stored``: what the last
    sync left, with ids; None: read them); the rows as stored now."""
    if stored is None:
        keys = _KEYS[model]
        fields = [f.name for f in model._meta.concrete_fields if f.name != "id"]
        stored = {tuple(v[k] for k in keys): v for v in model.objects.values("id", *fields)}
    now = dict(stored)
    dirty: dict[Key, dict | None] = {key: None for key in stored if key not in wanted}
    dirty.update(wanted)
    written = _sync_dirty(model, dirty, now)
    if any(v["id"] is None for v in now.values()):  # a backend that gives no ids back
        return written, None
    return written, now


class Known(NamedTuple):
    """What a worker wrote last: ``Cluster.read_model_token`` after its sync, the rows,
    and the nodes each claim's allocation counted on then (``node_rows.Spans``) with the
    nodes of each pool they were told from (``node_rows.Pools``)."""

    token: str
    rows: Rows
    spans: Spans
    pools: Pools


def _sync_dirty(model: type[models.Model], dirty: dict[Key, dict | None],
                stored: dict[Key, dict]) -> int:
    """:func:`_sync_model` for the rows at ``dirty``'s keys only (None: no row), the others
    being as stored; ``stored`` is brought up to date in place."""
    fields = [f.name for f in model._meta.concrete_fields if f.name != "id"]
    create, update, doomed = [], [], []
    for key, values in dirty.items():
        old = stored.get(key)
        if values is None:
            if old is not None:
                doomed.append(stored.pop(key)["id"])
            continue
        if old is None:
            create.append((key, values))
            continue
        if any(old[f] != values[f] for f in fields):
            update.append((old["id"], values))
            stored[key] = {"id": old["id"], **values}
    for start in range(0, len(doomed), _BATCH):
        model.objects.filter(id__in=doomed[start:start + _BATCH]).delete()
    # one prepared statement for all rows (a first pass makes one row per pod and claim)
    update_rows(model, update)
    floor = _last_id(model) if create else 0
    insert_rows(model, [values for _key, values in create])
    ids = _ids(model, [key for key, _values in create], floor)
    for key, values in create:
        stored[key] = {"id": ids.get(key), **values}
    return len(create) + len(update) + len(doomed)


def _last_id(model: type[models.Model]) -> int:
    """The highest id of ``model``'s rows (0: none): every row inserted after this is
    above it (SQLite's AUTOINCREMENT, PostgreSQL's sequence)."""
    return model.objects.aggregate(last=Max("id"))["last"] or 0


def _ids(model: type[models.Model], keys: list[Key], floor: int) -> dict[Key, int]:
    """The ids of the rows at ``keys``, inserted after ``floor`` was the highest id, read
    back (``insert_rows`` gives none) in one range of the primary key: looking them up by
    name, 500 at a time, was a quarter of a first pass's read model at 5,000 nodes."""
    if not keys:
        return {}
    names = _KEYS[model]
    wanted = set(keys)
    found: dict[Key, int] = {}
    for pk, *key in model.objects.filter(id__gt=floor).values_list("id", *names).iterator():
        if tuple(key) in wanted:
            found[tuple(key)] = pk
    return found


def sync(state: ClusterState, known: Known | None = None,
         touched: Iterable | None = None) -> tuple[int, Known | None]:
    """Make the read model describe ``state``, writing only rows that changed.

    Call inside a transaction (the one that saves ``state``'s objects). ``known`` is what
    the last sync returned; while ``Cluster.read_model_token`` is still its token nobody
    else wrote the rows, so they are compared with it instead of being read (the worker
    keeps it between passes); else they are read.

    Returns:
        The number of rows created, updated or deleted, and the new ``known`` (None when
        the rows cannot be known without reading them).
    """
    token = Cluster.objects.values_list("read_model_token", flat=True).filter(
        pk=Cluster.SINGLETON_ID).first()
    stored = known.rows if known is not None and token is not None and known.token == token \
        else None
    only, spans, pools = None, None, None
    if stored is not None and touched is not None:
        dirty = _touched_rows(state, touched)
        spans = dict(known.spans)
        # the pools stand while no slice is touched; when one is, every row is made again,
        # and the pools and spans with them (a walk of 5,000 slices is 0.02 CPU-s)
        only = affected(state, touched, stored[PodSummary], spans, known.pools)
        if only is None:
            spans = None
        else:
            pools = known.pools
    else:
        dirty = (None, None)
    if pools is None:
        pools = pool_nodes(state)
    nodes, usage = node_rows(state, only, spans)
    if only is not None:  # the other nodes' rows are as the last sync left them
        usage = {**{key: None for key in stored[DeviceUsage] if key[0] in only}, **usage}
        nodes = {**{(name,): None for name in only}, **nodes}
    count, now = 0, {}
    for model, wanted, touched_rows in (
            (NodeSummary, nodes, nodes if only is not None else None),
            (DeviceUsage, usage, usage if only is not None else None),
            (PodSummary, None, dirty[0]), (ClaimSummary, None, dirty[1])):
        if touched_rows is not None:  # the other rows are as the last sync left them
            count += _sync_dirty(model, touched_rows, stored[model])
            now[model] = stored[model]
            continue
        if wanted is None:
            wanted = _pod_rows(state) if model is PodSummary else _claim_rows(state)
        written, rows = _sync_model(model, wanted,
                                    None if stored is None else stored.get(model))
        count += written
        if rows is None or now is None:
            now = None
        else:
            now[model] = rows
    if count and token is not None:
        token = uuid.uuid4().hex
        Cluster.objects.filter(pk=Cluster.SINGLETON_ID).update(read_model_token=token)
    if now is None or token is None:
        return count, None
    return count, Known(token, now, spans if spans is not None else spans_of(state, pools),
                        pools)


def record(cluster, state: ClusterState, saved: bool, known: Known | None = None,
           touched: Iterable | None = None) -> tuple[bool, Known | None]:
    """The worker pass's hook: sync the read model to the state it settles.

    ``saved`` says whether the pass committed a new revision already. When only the read
    model changed (an import the engine had nothing to add to, say), the revision is bumped
    and announced all the same, so open pages re-read the rows. ``known`` as for
    :func:`sync`; ``touched``, the keys of the objects changed since that sync (the pass's
    ``ClusterState.touched``, caught up included), limits the pod and claim rows made to
    theirs.

    Returns:
        Whether a revision was committed for the read model alone, and the new ``known``
        (for the next pass).
    """
    written, known = sync(state, known, touched)
    if known is not None:
        cluster.read_model_token = known[0]  # the locked row is saved whole below
    if not written or saved:
        return False, known
    commit_revision(cluster, [])
    return True, known

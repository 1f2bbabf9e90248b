"""What the input's status may hold: allocated seed claims taken in the inventories they
name, pods bound to nodes that exist, reservations of allocated claims only.

``ClusterState.build`` refuses a state with a problem here (docs/manifests.md, "Input
status is honoured"); ``ClusterState.reindex`` takes the allocations again without
recording.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from allocation.engine.manifests.problems import Problem
from allocation.engine.models import registry
from allocation.engine.objects import Pod, ResourceClaim

if TYPE_CHECKING:
    from allocation.engine.objects import KObject
    from allocation.engine.state import ClusterState

__all__ = ["problem", "take_result", "check_input"]


def problem(state: ClusterState, obj: KObject, path: str, message: str) -> None:
    """Record a problem about ``obj`` (an input error: the build refuses the state)."""
    source = obj.source
    state.problems.append(Problem(source.file if source else "<generated>",
                                  source.doc if source else 0, obj.kind_name, obj.namespace,
                                  obj.name, path, message))


def take_result(state: ClusterState, claim: ResourceClaim, record: bool = True) -> None:
    """Take in the state's inventories what an allocated seed claim holds (its structured
    handles), recording a problem for what cannot be taken when ``record``."""
    assert claim.allocation is not None
    named: dict[tuple[int, str], str] = {}  # a device this claim names -> where
    for h_index, handle in enumerate(claim.allocation.handles):
        data = handle.get("structuredData")
        if not data:
            continue
        path = f"status.allocation.resourceHandles[{h_index}].structuredData"
        node, driver = data.get("nodeName"), handle.get("driverName")
        for model in registry.all_models():
            if data.get(model.name) is None:
                continue
            inventory = state.inventory_index.get((node, driver, model.name))
            if inventory is None:
                if record:
                    problem(state, claim, path, f"node {node!r} publishes no "
                            f"{model.name} resources of driver {driver!r}")
                continue
            for i_index, item in enumerate(model.result_items(data[model.name])):
                candidate = inventory.resolve(item)
                item_path = f"{path}.{model.name}[{i_index}]"
                if isinstance(candidate, str):
                    if record:
                        problem(state, claim, item_path, candidate)
                    continue
                key = (id(inventory), str(getattr(candidate, "id", candidate)))
                if key in named:
                    if record:
                        problem(state, claim, item_path, f"device {key[1]} of node "
                                f"{node!r} is listed twice in this allocation "
                                f"(also at {named[key]})")
                    continue
                named[key] = item_path
                try:
                    inventory.take(candidate, claim.ref)
                except ValueError as exc:
                    if record:
                        problem(state, claim, item_path, f"{exc}; a device may not be "
                                f"allocated to claim {claim.ref} as well")
                    continue
                claim.allocation.picks.append((inventory, candidate))


def check_input(state: ClusterState, among: Iterable[KObject] | None = None) -> None:
    """The input's pods and reservations that a cluster cannot hold, as problems.

    ``among``, when given, are the only objects looked at (in their order): a caller that
    knows every other pod and claim of ``state`` passes (a scenario's fork of a baseline
    that passed, ``scenarios/fork.py``) names what it changed.
    """
    if among is None:
        pods, claims = state.pods(), state.claims()
    else:
        among = list(among)
        pods = [obj for obj in among if isinstance(obj, Pod)]
        claims = [obj for obj in among if isinstance(obj, ResourceClaim)]
    for pod in pods:
        if pod.node_name and pod.node_name not in state.nodes:
            problem(state, pod, "spec.nodeName", f"node {pod.node_name!r} not found")
    for claim in claims:
        if len(claim.reserved_for) > 1 and not (claim.allocation and
                                                claim.allocation.shareable):
            problem(state, claim, "status.reservedFor", "a claim that is not shareable "
                    f"may be reserved for one pod, found {len(claim.reserved_for)}")
        if claim.reserved_for and claim.allocation is None:
            problem(state, claim, "status.reservedFor", "a claim must be allocated before "
                    "it is reserved")

"""Random small resource.k8s.io/v1 clusters for the allocator's property tests.

``clusters(release, gates)`` draws nodes, ResourceSlices (node-local pools, a network pool
with ``allNodes`` or a node selector, shared counters, an obsolete generation, an
incomplete pool), DeviceClasses and pods (lists of claims) with selectors from a small CEL
vocabulary, ExactCount/All, firstAvailable, matchAttribute/distinctAttribute, adminAccess,
tolerations, consumable capacity and list-type attributes. Fields whose feature gate is off
in the profile are dropped with ``gated.drop_disabled_fields``, as the loader does, so every
cluster is one the API server could hold.

``schedule(allocator, nodes, pods)`` runs the pods the way the planner's scheduler does:
nodes in name order, the first fit is committed claim by claim.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from hypothesis import strategies as st

from allocation.engine.v1 import AllocationError, Allocator, make_profile
from allocation.engine.v1.gated import drop_disabled_fields

__all__ = ["GPU", "NIC", "SELECTORS", "LIST_SELECTORS", "Cluster", "Trace", "clusters",
           "schedule"]

GPU = "gpu.example.com"
NIC = "nic.example.com"
NODES = ("node-a", "node-b")

# The selector vocabulary: guarded reads, an unknown domain (an empty map), versions and
# quantities through their library functions, and one unguarded read that is a runtime
# error on devices without the attribute (fatal for the scheduling attempt).
SELECTORS = (
    "true",
    f'device.attributes["{GPU}"].model == "a"',
    f'"numa" in device.attributes["{GPU}"] && device.attributes["{GPU}"].numa == 0',
    f'"mem" in device.capacity["{GPU}"] && '
    f'device.capacity["{GPU}"].mem.compareTo(quantity("16Gi")) >= 0',
    f'"ver" in device.attributes["{GPU}"] && '
    f'device.attributes["{GPU}"].ver.isGreaterThan(semver("1.2.0"))',
    'device.attributes["other.example.com"].size() == 0',
    f'device.attributes["{GPU}"].numa == 1',
)
# With list-type attributes (gate DRAListTypeAttributes): ``includes`` and a list's macros.
LIST_SELECTORS = (
    f'"numa" in device.attributes["{GPU}"] && device.attributes["{GPU}"].numa.includes(1)',
    f'device.attributes["{GPU}"].model.includes("a")',
    f'"numa" in device.attributes["{GPU}"] && '
    f'device.attributes["{GPU}"].numa.includes(0) == false',
)
CLASSES = {
    "gpu": f'device.driver == "{GPU}"',
    "nic": f'device.driver == "{NIC}"',
    "any": "true",
}
TOLERATIONS = (
    {"key": "k", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "k", "operator": "Equal", "value": "v"},
    {"operator": "Exists"},
    {"key": "other", "operator": "Exists"},
)
TAINTS = (
    {"key": "k", "value": "v", "effect": "NoSchedule"},
    {"key": "k", "value": "w", "effect": "NoExecute"},
    {"key": "k", "value": "v", "effect": "None"},
)


@dataclass
class Cluster:
    """One random cluster: v1 dicts, as the loader hands them to the allocator."""

    release: str
    gates: str
    nodes: list[dict]
    slices: list[dict]
    classes: list[dict]
    pods: list[list[dict]]
    # what the cluster uses, for deciding where the oracle applies
    uses: set[str] = field(default_factory=set)

    @property
    def profile(self):
        return make_profile(self.release, self.gates)


@dataclass
class Trace:
    """What ``schedule`` did: per pod the node it went to (or None), and per pod and node
    tried the outcome (``"fit"``, ``"no-fit"``, ``"fatal"``) with the book state before."""

    placements: list[str | None] = field(default_factory=list)
    attempts: list[list[tuple[str, str, str]]] = field(default_factory=list)
    allocations: dict[str, dict] = field(default_factory=dict)  # claim key -> allocation


def _quantity(draw, choices=("8Gi", "16Gi", "32Gi")) -> str:
    return draw(st.sampled_from(choices))


def _device(draw, name: str, driver: str, features: set[str], uses: set[str],
            counter_set: str | None) -> dict:
    d: dict = {"name": name, "attributes": {}}
    if driver == GPU:
        d["attributes"]["model"] = {"string": draw(st.sampled_from("ab"))}
        if "lists" in features and draw(st.integers(0, 2)) == 0:
            d["attributes"]["model"] = {"strings": sorted(draw(st.sets(
                st.sampled_from("abc"), min_size=1, max_size=2)))}
            uses.add("lists")
        if draw(st.integers(0, 3)):
            d["attributes"]["numa"] = {"int": draw(st.integers(0, 1))}
            if "lists" in features and draw(st.booleans()):
                d["attributes"]["numa"] = {"ints": sorted(draw(st.sets(
                    st.integers(0, 2), min_size=1, max_size=2)))}
                uses.add("lists")
        if draw(st.booleans()):
            d["attributes"][f"{GPU}/ver"] = {"version": draw(st.sampled_from(
                ["1.0.0", "1.2.0", "1.10.1"]))}
        d["capacity"] = {"mem": {"value": _quantity(draw)}}
    else:
        d["attributes"]["speed"] = {"int": draw(st.sampled_from([10, 100]))}
    if draw(st.integers(0, 4)) == 0:
        d["taints"] = [draw(st.sampled_from(TAINTS))]
        uses.add("taints")
    if counter_set and draw(st.integers(0, 3)):
        d["consumesCounters"] = [{"counterSet": counter_set, "counters": {
            "mem": {"value": draw(st.sampled_from(["4Gi", "8Gi"]))}}}]
        uses.add("counters")
    if "consumable" in features and draw(st.integers(0, 3)) == 0:
        d["allowMultipleAllocations"] = True
        cap = {"value": draw(st.sampled_from(["4", "10"]))}
        policy = draw(st.integers(0, 2))
        if policy == 1:
            cap["requestPolicy"] = {"default": "2", "validRange": {"min": "2", "step": "2"}}
        elif policy == 2:
            cap["requestPolicy"] = {"default": "1", "validValues": ["1", "3"]}
        d.setdefault("capacity", {})["bw"] = cap
        uses.add("multi")
    if "binding" in features and draw(st.integers(0, 6)) == 0:
        d["bindingConditions"] = ["ready"]
        d["bindingFailureConditions"] = ["failed"]
        uses.add("binding")
    return d


def _slice(name: str, driver: str, pool: str, devices: list[dict], *, count: int = 1,
           generation: int = 1, **spec) -> dict:
    body = {"driver": driver, "pool": {"name": pool, "generation": generation,
                                       "resourceSliceCount": count}, **spec}
    if devices:
        body["devices"] = devices
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": name}, "spec": body}


def _slices(draw, features: set[str], uses: set[str]) -> list[dict]:
    out = []
    for node_name in NODES:
        counters = "counters" in features and draw(st.booleans())
        devs = [_device(draw, f"gpu-{i}", GPU, features, uses,
                        "set" if counters else None)
                for i in range(draw(st.integers(0, 4)))]
        count = 2 if counters else 1
        if draw(st.integers(0, 9)) == 0:
            count += 1  # a slice that never arrives: the pool is incomplete
            uses.add("incomplete")
        split = len(devs) > 1 and draw(st.integers(0, 3)) == 0
        if split:  # the pool's devices in two slices, named against their order
            count += 1
            out.append(_slice(f"{node_name}-z", GPU, node_name, devs[:1], count=count,
                              nodeName=node_name))
            devs = devs[1:]
        out.append(_slice(f"{node_name}-gpu", GPU, node_name, devs, count=count,
                          nodeName=node_name))
        if counters:
            out.append(_slice(f"{node_name}-counters", GPU, node_name, [], count=count,
                              sharedCounters=[{"name": "set", "counters": {
                                  "mem": {"value": draw(st.sampled_from(["8Gi", "12Gi"]))}}}]))
        if draw(st.integers(0, 7)) == 0:  # an obsolete generation, never visible
            out.append(_slice(f"{node_name}-old", GPU, node_name,
                              [_device(draw, "gpu-old", GPU, set(), set(), None)],
                              generation=0, nodeName=node_name))
    if "counters" in features and draw(st.integers(0, 3)) == 0:
        # per-device node selection (KEP-4815): each device names its node, or all nodes
        devs = [_device(draw, f"pd-{i}", GPU, features, uses, None)
                for i in range(draw(st.integers(1, 3)))]
        for d in devs:
            where = draw(st.sampled_from([*NODES, "all"]))
            d.update({"allNodes": True} if where == "all" else {"nodeName": where})
        out.append(_slice("per-device", GPU, "per-device", devs, perDeviceNodeSelection=True))
        uses.add("per-device")
    if draw(st.booleans()):
        devs = [_device(draw, f"nic-{i}", NIC, features, uses, None)
                for i in range(draw(st.integers(1, 3)))]
        where = draw(st.sampled_from(["all", "selector"]))
        spec = ({"allNodes": True} if where == "all" else {"nodeSelector": {
            "nodeSelectorTerms": [{"matchExpressions": [
                {"key": "rack", "operator": "In", "values": ["r1"]}]}]}})
        out.append(_slice("fabric", NIC, "fabric", devs, **spec))
    return out


def _body(draw, features: set[str], uses: set[str], sub: bool) -> dict:
    cls = draw(st.sampled_from(sorted(CLASSES)))
    body: dict = {"deviceClassName": cls}
    if draw(st.integers(0, 14)) == 0:
        body["allocationMode"] = "All"
        uses.add("all")
    else:
        body["allocationMode"] = "ExactCount"
        body["count"] = draw(st.sampled_from([1, 1, 2]))
    if cls == "gpu" and draw(st.booleans()):
        vocabulary = SELECTORS + LIST_SELECTORS if "lists" in features else SELECTORS
        body["selectors"] = [{"cel": {"expression": draw(st.sampled_from(vocabulary))}}]
    if draw(st.integers(0, 3)) == 0:
        body["tolerations"] = [draw(st.sampled_from(TOLERATIONS))]
    if "consumable" in features and draw(st.integers(0, 5)) == 0:
        body["capacity"] = {"requests": {"bw": draw(st.sampled_from(["1", "3", "5"]))}}
        uses.add("capacity")
    if not sub and "admin" in features and draw(st.integers(0, 6)) == 0:
        body["adminAccess"] = True
        uses.add("admin")
    return body


def _claim(draw, name: str, features: set[str], uses: set[str]) -> dict:
    requests = []
    for r in range(draw(st.sampled_from([0, 1, 1, 1, 2, 2]))):
        if draw(st.integers(0, 3)) == 0:
            subs = [{"name": f"s{i}", **_body(draw, features, uses, True)}
                    for i in range(draw(st.integers(1, 2)))]
            requests.append({"name": f"r{r}", "firstAvailable": subs})
            uses.add("first-available")
        else:
            requests.append({"name": f"r{r}", "exactly": _body(draw, features, uses, False)})
    constraints = []
    if len(requests) and draw(st.integers(0, 2)) == 0:
        kind = "matchAttribute"
        if "consumable" in features and draw(st.integers(0, 3)) == 0:
            kind = "distinctAttribute"
            uses.add("distinct")
        uses.add("constraints")
        attr = draw(st.sampled_from([f"{GPU}/model", f"{GPU}/numa", f"{GPU}/ver"]))
        con: dict = {kind: attr}
        if draw(st.booleans()):
            con["requests"] = [requests[0]["name"]]
        constraints.append(con)
    devices: dict = {"requests": requests}
    if constraints:
        devices["constraints"] = constraints
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"devices": devices}}


@st.composite
def clusters(draw, release: str = "1.36", gates: str = "") -> Cluster:
    """A random small cluster under the profile ``release`` + ``gates``."""
    profile = make_profile(release, gates)
    features = {name for name, on in (
        ("counters", profile.partitionable_devices), ("taints", profile.device_taints),
        ("consumable", profile.consumable_capacity), ("admin", profile.admin_access),
        ("binding", profile.binding_and_status),
        ("lists", profile.list_type_attributes)) if on}
    uses: set[str] = set()
    nodes = [{"apiVersion": "v1", "kind": "Node", "metadata": {
        "name": n, "labels": {"rack": draw(st.sampled_from(["r1", "r2"]))}}} for n in NODES]
    slices = _slices(draw, features, uses)
    classes = [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                "metadata": {"name": n}, "spec": {"selectors": [{"cel": {"expression": e}}]}}
               for n, e in sorted(CLASSES.items())]
    pods = []
    for p in range(draw(st.integers(1, 3))):
        pods.append([_claim(draw, f"p{p}-c{c}", features, uses)
                     for c in range(draw(st.integers(1, 2)))])
    slices = [drop_disabled_fields(s, profile)[0] for s in slices]
    pods = [[drop_disabled_fields(c, profile)[0] for c in pod] for pod in pods]
    return Cluster(release, gates, nodes, slices, classes, pods, uses)


def schedule(alloc: Allocator, nodes: list[dict], pods: list[list[dict]],
             on_attempt=None, attempts: bool = False) -> Trace:
    """Place ``pods`` as the planner's scheduler does: nodes in name order, the first node
    whose ``allocate`` fits wins and its allocations are committed. A fatal
    ``AllocationError`` leaves the pod pending (upstream: SchedulerError).

    ``on_attempt(node, claims, outcome_or_error, committed)`` is called for every node tried,
    before anything of that pod is committed; ``committed`` maps claim keys to the
    allocations committed so far. ``attempts``: each pod's nodes through one
    ``Allocator.attempt`` (as the scheduler asks), not ``allocate`` per node.
    """
    trace = Trace()
    for pi, claims in enumerate(pods):
        claims = copy.deepcopy(claims)
        placed = None
        tried = []
        attempt = alloc.attempt(claims) if attempts else None
        for n in sorted(nodes, key=lambda n: n["metadata"]["name"]):
            try:
                outcome = alloc.allocate(n, claims) if attempt is None else attempt.allocate(n)
            except AllocationError as exc:
                if on_attempt:
                    on_attempt(n, claims, exc, trace.allocations)
                tried.append((pi, n["metadata"]["name"], "fatal"))
                break
            if on_attempt:
                on_attempt(n, claims, outcome, trace.allocations)
            if outcome.fits:
                tried.append((pi, n["metadata"]["name"], "fit"))
                for c, allocation in zip(claims, outcome.allocations, strict=True):
                    alloc.commit(c, allocation)
                    meta = c["metadata"]
                    trace.allocations[f"{meta['namespace']}/{meta['name']}"] = allocation
                placed = n["metadata"]["name"]
                break
            tried.append((pi, n["metadata"]["name"], "no-fit"))
        trace.placements.append(placed)
        trace.attempts.append(tried)
    return trace

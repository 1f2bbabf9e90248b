"""resource.k8s.io/v1 ResourceSlice specs in a NodeGroup's ``spec.resourceSlices``
(docs/autoscaling.md, "Node groups").

An entry with v1's ``driver`` (the seed's field is ``driverName``) is the spec of a v1
ResourceSlice that every new node of the group publishes, without ``nodeName`` and
``pool.name``: the autoscaler fills both in with the new node's name
(``objects.planner.v1_node_slices``). Such an entry is read as a ResourceSlice document
is: fields of disabled feature gates dropped with a warning and API-server defaults set
(:func:`prepare_node_group`, ``v1_convert``), then checked with the v1 slice schema and
rules under the same Kubernetes profile (:func:`check_v1_slices`), every problem naming
the NodeGroup and the field (``spec.resourceSlices[0].devices[1].name``).
"""

from __future__ import annotations

from allocation.engine import kinds
from allocation.engine.manifests.problems import ProblemList
from allocation.engine.manifests.schema import join
from allocation.engine.manifests.v1_convert import V1_API_VERSION, prepare
from allocation.engine.manifests.v1_rules import check_v1_document
from allocation.engine.manifests.v1_schema import v1_schemas
from allocation.engine.objects.planner import V1_NODE_FIELDS, is_v1_slice_spec, v1_node_slices
from allocation.engine.v1.features import Profile

__all__ = ["prepare_node_group", "check_v1_slices"]

_PATH = "spec.resourceSlices"
_PLACEHOLDER_NODE = "node"
"""The node name the entries are checked with: the real names (``<group>-<n>``) come
later, and a problem must be about what the user wrote."""


def _entries(data: object) -> list | None:
    spec = data.get("spec") if isinstance(data, dict) else None
    entries = spec.get("resourceSlices") if isinstance(spec, dict) else None
    return entries if isinstance(entries, list) else None


def _slice_doc(spec: dict) -> dict:
    return {"apiVersion": V1_API_VERSION, "kind": "ResourceSlice",
            "metadata": {"name": "slice"}, "spec": spec}


def _below(path: str, prefix: str) -> str:
    """``spec.devices[0]`` of a slice document as a path below ``prefix``."""
    rest = path[len("spec"):] if path.startswith("spec") else path
    return prefix + rest


def prepare_node_group(data: dict, profile: Profile) -> tuple[dict, list[tuple[str, str]]]:
    """``data`` with its v1 slice specs read as ResourceSlices are (gated fields dropped,
    defaults set), and the ``(path, gate)`` of every dropped field.

    Returns:
        ``data`` itself when it has no v1 slice spec, else a changed copy.
    """
    entries = _entries(data)
    if not entries or not any(is_v1_slice_spec(e) for e in entries):
        return data, []
    out = {**data, "spec": {**data["spec"], "resourceSlices": list(entries)}}
    dropped: list[tuple[str, str]] = []
    for index, entry in enumerate(entries):
        if not is_v1_slice_spec(entry):
            continue
        prepared = prepare(_slice_doc(entry), profile)
        out["spec"]["resourceSlices"][index] = prepared.data["spec"]
        dropped.extend((_below(path, join(_PATH, index)), gate)
                       for path, gate in prepared.dropped)
    return out, dropped


def check_v1_slices(data: dict, profile: Profile, problems: ProblemList) -> None:
    """Report what is wrong with the v1 slice specs of a NodeGroup ``data`` that passed its
    schema: fields the autoscaler fills in, a ``resourceSliceCount`` that is not the number
    of the group's specs of that driver, a device or counter-set name repeated in a driver's
    specs (each new node's pool would be invalid, docs/v1.md), and the v1 ResourceSlice
    schema and rules."""
    entries = [(i, e) for i, e in enumerate(_entries(data) or ()) if is_v1_slice_spec(e)]
    drivers = [e.get("driver") for _, e in entries]
    spec_schema = dict(v1_schemas())[kinds.RESOURCE_SLICE].fields["spec"]
    _repeated_names(entries, problems)
    for index, entry in entries:
        where = join(_PATH, index)
        for name in V1_NODE_FIELDS:
            if entry.get(name) not in (None, False):
                problems.add(join(where, name), "must not be set: each new node publishes "
                             "the group's slices, with nodeName set to the node's name")
        pool = entry.get("pool")
        if isinstance(pool, dict) and pool.get("name") is not None:
            problems.add(f"{where}.pool.name", "must not be set: the pool of each new node "
                         "is named after the node")
        count = pool.get("resourceSliceCount") if isinstance(pool, dict) else None
        same = drivers.count(entry.get("driver"))
        if isinstance(count, int) and not isinstance(count, bool) and count != same:
            problems.add(f"{where}.pool.resourceSliceCount", f"must be {same}, the number "
                         f"of this group's slices of driver {entry.get('driver')!r} (the "
                         f"pool of each new node), not {count}")
        body = {k: v for k, v in entry.items() if k not in V1_NODE_FIELDS}
        if isinstance(pool, dict):
            body["pool"] = {k: v for k, v in pool.items() if k != "name"}
        elif pool is not None:
            body["pool"] = pool  # the schema says why
        if isinstance(body.get("pool", {}), dict) and isinstance(body.get("driver"), str):
            [doc] = v1_node_slices([body], _PLACEHOLDER_NODE)
        else:
            doc = _slice_doc(body)
        before = len(problems)
        spec_schema.check(doc["spec"], where, problems)  # messages may name paths too
        if len(problems) == before:
            local = ProblemList()
            check_v1_document("ResourceSlice", doc, profile, local)
            for path, message in local.items:
                problems.add(_below(path, where), message)


def _repeated_names(entries: list[tuple[int, dict]], problems: ProblemList) -> None:
    """A device or counter-set name used in two of a driver's specs makes the pool of every
    new node invalid (never allocated from); within one spec the schema says so."""
    seen: dict[tuple, str] = {}
    for index, entry in entries:
        for field, what in (("devices", "device"), ("sharedCounters", "counter set")):
            items = entry.get(field)
            for position, item in enumerate(items if isinstance(items, list) else ()):
                name = item.get("name") if isinstance(item, dict) else None
                if not isinstance(name, str) or not isinstance(entry.get("driver"), str):
                    continue
                where = f"{join(_PATH, index)}.{field}[{position}]"
                first = seen.setdefault((entry["driver"], field, name), where)
                if first != where and not first.startswith(f"{join(_PATH, index)}."):
                    problems.add(f"{where}.name", f"{what} {name!r} is also at {first}: "
                                 "the pool of each new node would be invalid")

"""Live pages: which template and fragments each page has, and rendering them for a socket.

A page is a full template that includes its fragments (``templates/allocation/htmx/``).
After a change the page's consumer renders the same fragments again with ``oob`` set, so
each fragment's root element carries ``hx-swap-oob="true"`` and the htmx ws extension
swaps it into the open page by its ``id``. Views and consumers share :data:`PAGES`, so a
page and its live updates can never disagree about what the fragments are, and both routes
come from it: the page at ``<route>`` (``allocation/urls.py``, URL name = the page's name)
and its socket at ``/ws/pages/<route>`` (``console/routing.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from django.template.loader import render_to_string

from allocation.engine.state import ClusterState
from allocation.presenters.dashboard import dashboard
from allocation.presenters.manifest import manifest_view
from allocation.presenters.negotiation import timelines
from allocation.presenters.nodes import node_view
from allocation.presenters.v1_claims import v1_claim_view
from allocation.presenters.v1_devices import (
    device_class_list,
    device_class_view,
    slice_list,
    slice_view,
)
from allocation.presenters.workloads import claim_view, pod_view, provisioning_view

__all__ = ["LivePage", "PAGES", "STATUS_FRAGMENT", "snapshot", "node_snapshot", "pod_snapshot",
           "claim_snapshot", "page_source",
           "query_kwargs", "current_revision", "page_context", "render_fragments",
           "render_live"]

STATUS_FRAGMENT = "allocation/htmx/live_status.html"


@dataclass(frozen=True, slots=True)
class LivePage:
    """A page: its route, template, fragments, and how to build its context from a state.

    ``route`` is a Django path pattern relative to the site root; its parameters are the
    keyword arguments of ``build``, which returns the page's context, or None when the object
    it shows does not exist.
    """

    route: str
    template: str
    fragments: tuple[str, ...]
    build: Callable[[ClusterState | None, dict[str, str]], dict[str, Any] | None]
    reads_state: bool = True
    """False for a page built from the read model alone (``build`` gets None, not a
    state): no cluster state is built for it (docs/console-pages.md, "The read model")."""
    query: tuple[str, ...] = ()
    """Query parameters passed to ``build`` as keyword arguments (page and socket alike)."""
    source: Callable[[dict[str, str]], tuple[ClusterState, int]] | None = None
    """Where a page that reads a state gets it from, given the route's parameters: the
    state of the rows it shows and their revision (the node page:
    ``services/node_state.py``; the pod and claim pages: ``services/workload_state.py``);
    None for the whole baseline (:func:`snapshot`)."""


def _one(key: str, make: Callable) -> Callable[[ClusterState, dict[str, str]], dict | None]:
    def build(state: ClusterState, kwargs: dict[str, str]) -> dict | None:
        value = make(state, **kwargs)
        return None if value is None else {key: value}

    return build


def _with_manifest(kind: str, build: Callable[[ClusterState, dict[str, str]], dict | None]
                   ) -> Callable[[ClusterState, dict[str, str]], dict | None]:
    """``build`` plus ``manifest``: the page's object as YAML (fragment ``manifest_yaml``)."""
    def both(state: ClusterState, kwargs: dict[str, str]) -> dict | None:
        context = build(state, kwargs)
        if context is not None:
            context["manifest"] = manifest_view(state, kind, kwargs.get("namespace"),
                                                kwargs["name"])
        return context

    return both


def _fragments(*names: str) -> tuple[str, ...]:
    return tuple(f"allocation/htmx/{name}.html" for name in names)


PAGES: dict[str, LivePage] = {
    "dashboard": LivePage(
        "dashboard/", "allocation/dashboard.html",
        _fragments("dashboard_nodes", "dashboard_usage", "dashboard_pending",
                   "dashboard_provisioning", "dashboard_events"),
        _one("dashboard", lambda _state, group_by="": dashboard(group_by=group_by)),
        reads_state=False, query=("group_by",)),
    "node": LivePage("nodes/<str:name>/", "allocation/node.html",
                     _fragments("node_summary", "node_devices", "node_v1_devices",
                                "manifest_yaml"),
                     _with_manifest("Node", _one("node", lambda state, name: node_view(
                         state, name))),
                     source=lambda kwargs: node_snapshot(kwargs["name"])),
    # One page for both versions of a claim (one identity: docs/v1.md, "The console").
    "claim": LivePage("claims/<str:namespace>/<str:name>/", "allocation/claim.html",
                      _fragments("claim_detail", "manifest_yaml"),
                      _with_manifest("ResourceClaim", _one(
                          "claim", lambda state, namespace, name: claim_view(
                              state, namespace, name) or v1_claim_view(state, namespace,
                                                                       name))),
                      source=lambda kwargs: claim_snapshot(kwargs["namespace"],
                                                           kwargs["name"])),
    "pod": LivePage("pods/<str:namespace>/<str:name>/", "allocation/pod.html",
                    _fragments("pod_detail", "negotiation_timeline", "manifest_yaml"),
                    _with_manifest("Pod", _one("pod", pod_view)),
                    source=lambda kwargs: pod_snapshot(kwargs["namespace"], kwargs["name"])),
    "provisioning_request": LivePage("provisioningrequests/<str:namespace>/<str:name>/",
                                     "allocation/provisioning_request.html",
                                     _fragments("provisioning_detail", "manifest_yaml"),
                                     _with_manifest("ProvisioningRequest",
                                                    _one("pr", provisioning_view))),
    "device_classes": LivePage("deviceclasses/", "allocation/device_classes.html",
                               _fragments("device_class_list"),
                               _one("classes", lambda state: device_class_list(state))),
    "device_class": LivePage("deviceclasses/<str:name>/", "allocation/device_class.html",
                             _fragments("device_class_detail", "manifest_yaml"),
                             _with_manifest("DeviceClass",
                                            _one("device_class", device_class_view))),
    "resource_slices": LivePage("resourceslices/", "allocation/resource_slices.html",
                                _fragments("resource_slice_list"),
                                _one("slices", lambda state: slice_list(state))),
    "resource_slice": LivePage("resourceslices/<str:name>/", "allocation/resource_slice.html",
                               _fragments("resource_slice_detail", "manifest_yaml"),
                               _with_manifest("ResourceSlice",
                                              _one("resource_slice", slice_view))),
    "negotiations": LivePage("negotiations/", "allocation/negotiations.html",
                             _fragments("negotiation_timelines"),
                             _one("timelines", lambda state: timelines(state))),
}
"""Every live page by name (also its URL name); the consumer's route names one of them."""


def snapshot() -> tuple[ClusterState, int]:
    """The stored cluster's engine state and the revision it is at (read-only)."""
    from allocation.services import cluster

    # Revision first: if a write lands in between, the state is newer than the revision
    # and the write's own broadcast (a higher revision) still triggers a fresh render.
    revision = cluster.revision()
    return cluster.baseline_state(), revision


def node_snapshot(name: str) -> tuple[ClusterState, int]:
    """The state of node ``name``'s rows only and its revision: what the node page shows,
    without building the whole cluster (read-only)."""
    from allocation.services.node_state import node_state

    return node_state(name)


def pod_snapshot(namespace: str, name: str) -> tuple[ClusterState, int]:
    """The state of the rows pod ``namespace/name``'s page shows and its revision (the
    whole baseline when only it will do; read-only)."""
    from allocation.services.workload_state import pod_state

    return pod_state(namespace, name) or snapshot()


def claim_snapshot(namespace: str, name: str) -> tuple[ClusterState, int]:
    """As :func:`pod_snapshot`, for claim ``namespace/name``'s page."""
    from allocation.services.workload_state import claim_state

    return claim_state(namespace, name) or snapshot()


def query_kwargs(page: str, query: Mapping[str, str]) -> dict[str, str]:
    """The page's query parameters found in ``query`` (non-empty ones only)."""
    return {name: query[name] for name in PAGES[page].query if query.get(name)}


def page_source(page: str, kwargs: dict[str, str]) -> tuple[ClusterState | None, int]:
    """What ``page`` (with route parameters ``kwargs``) is built from: the state and its
    revision, or (None, revision) for a page that reads the read model only."""
    entry = PAGES[page]
    if not entry.reads_state:
        return None, current_revision()
    if entry.source is not None:
        return entry.source(kwargs)
    return snapshot()


def current_revision() -> int:
    from allocation.services import cluster

    return cluster.revision()


def page_context(page: str, state: ClusterState, kwargs: dict[str, str]) -> dict | None:
    """The context of ``page`` for ``state``; None when its object does not exist."""
    return PAGES[page].build(state, dict(kwargs))


def render_fragments(page: str, kwargs: dict[str, str], state: ClusterState,
                     revision: int) -> str:
    """Every fragment of ``page`` (and the live status) marked for an out-of-band swap."""
    context = page_context(page, state, kwargs)
    status = {"oob": True, "revision": revision, "gone": context is None}
    parts = [render_to_string(STATUS_FRAGMENT, status)]
    if context is not None:
        context.update(oob=True, revision=revision)
        parts.extend(render_to_string(name, context) for name in PAGES[page].fragments)
    return "\n".join(parts)


def render_live(page: str, kwargs: dict[str, str]) -> tuple[str, int]:
    """The fragments of ``page`` for the stored cluster now, and the revision they show."""
    state, revision = page_source(page, kwargs)
    return render_fragments(page, kwargs, state, revision), revision

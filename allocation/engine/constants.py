"""The engine's vocabulary: API groups, labels, annotations, component names.

One home for every string the engine, the console and the scenarios compare or write, so
a literal is never repeated (``docs/architecture.md``). Kinds and their API versions are
declared in :mod:`allocation.engine.kinds`; the limits below come from the API types of
``resource.k8s.io/v1alpha2`` (KEP-3063).
"""

from __future__ import annotations

__all__ = [
    "RESOURCE_GROUP", "PLANNER_GROUP", "PROVISIONING_GROUP", "OWN_GROUPS", "NODE_GROUP_LABEL",
    "EXPLAIN_ANNOTATION", "POD_CLAIM_NAME_ANNOTATION", "CLAIMS_COMPONENT", "SCHEDULER_COMPONENT",
    "AUTOSCALER_COMPONENT",
    "STRUCTURED_FINALIZER", "V1_CLAIM_FINALIZER", "HANDLE_DATA_MAX", "NODE_LIST_MAX",
    "COUNTER_GROUP",
    "COUNTER_API_VERSIONS", "ADMIN_ACCESS_LABEL", "CANNOT_ALLOCATE", "COUNTER_MODES",
    "DEFAULT_SCHEDULER",
]

CANNOT_ALLOCATE = "cannot allocate all claims"
"""DynamicResources Filter's refusal, upstream verbatim: the v1 allocator's reason and the
scheduler's node reason (docs/v1.md, "Texts and upstream")."""

RESOURCE_GROUP = "resource.k8s.io"
PLANNER_GROUP = "draplanner.io"
PROVISIONING_GROUP = "autoscaling.x-k8s.io"
COUNTER_GROUP = "counter.dra.config.k8s.io"
COUNTER_API_VERSIONS = (f"{COUNTER_GROUP}/v1alpha1", f"{COUNTER_GROUP}/v1beta1")
"""The counter model's Capacity and Parameters types (seed 000, ``docs/models.md``)."""
OWN_GROUPS = (RESOURCE_GROUP, PLANNER_GROUP)
"""Groups whose kinds the planner knows completely: an unknown kind there is a typo."""

NODE_GROUP_LABEL = f"{PLANNER_GROUP}/node-group"
"""The label on every node a NodeGroup made (``docs/autoscaling.md``)."""
EXPLAIN_ANNOTATION = f"{PLANNER_GROUP}/explain"
"""The JSON explanation the scheduler writes on a pod it cannot place."""
POD_CLAIM_NAME_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
"""On a claim made from a template: the pod's claim entry it was made for."""
ADMIN_ACCESS_LABEL = "resource.kubernetes.io/admin-access"
"""The Namespace label (value ``"true"``) that lets v1 claims there ask for adminAccess
(KEP-5018; docs/v1.md, reading v1 manifests)."""
CLAIMS_COMPONENT = "draplanner-claims"
"""The Event source component of the claim controller."""
SCHEDULER_COMPONENT = "draplanner-scheduler"
"""The Event source component of the scheduler (the default of ``EventRecorder.record``)."""
AUTOSCALER_COMPONENT = "draplanner-autoscaler"
"""The Event source component of the autoscaler's ProvisioningRequest controller."""
STRUCTURED_FINALIZER = "structured.dra.k8s.io/delete-protection"
"""The finalizer of a structured allocation (KEP-4381) when no model names its own."""
V1_CLAIM_FINALIZER = "resource.kubernetes.io/delete-protection"
"""The finalizer kube-scheduler puts on a resource.k8s.io/v1 claim it allocates (KEP-4381)."""

HANDLE_DATA_MAX = 16 * 1024
"""Bytes of ``resourceHandles[].data`` (the API's limit)."""
NODE_LIST_MAX = 128
"""Entries of ``potentialNodes`` and ``unsuitableNodes`` (the API's limit)."""
COUNTER_MODES = ("units", "consumable")
"""How ``convert`` writes counter instances (``--counters``); here, so the command line
offers them without importing the converter (``draplanner simulate`` never needs it)."""
DEFAULT_SCHEDULER = "default-scheduler"
"""``spec.schedulerName`` as the API server defaults it: kube-scheduler's profile, the one
the planner simulates (``scheduling/gates.py``)."""

"""Cluster Autoscaler simulation: node groups, ProvisioningRequests, what-if snapshots.

See ``docs/autoscaling.md``. The public API: :class:`AutoscalerSimulation` (the seeds'
ClusterAutoScalerPlugin over a ``ClusterState.fork()``), :class:`ProvisioningController`
(the controller ``simulate`` runs) and the node-group helpers.
"""

from __future__ import annotations

from allocation.engine.autoscaler.nodegroups import blueprints, group_size, grow
from allocation.engine.autoscaler.plugin import AutoscalerSimulation, Status, pod_from_template
from allocation.engine.autoscaler.provisioning import ProvisioningController, consumes

__all__ = ["AutoscalerSimulation", "Status", "pod_from_template", "ProvisioningController",
           "consumes", "blueprints", "group_size", "grow"]

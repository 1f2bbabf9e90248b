"""The read model: what pages and lists show, as indexed rows the worker keeps up to date.

The worker writes these rows in the same transaction as the state it settles
(``allocation/services/read_model.py``), rewriting only the rows that changed. Pages and API
lists query them, so no page has to build a cluster state to list, count, filter or sort
(docs/console-pages.md, "The read model"). They are derived data: never edited on their own,
and a full pass on an empty read model rebuilds them.

Several values in one column (labels, drivers, classes) use :func:`list_column`
(``,a,b,``, filtered with ``contains=",a,"``), as the stored objects' filter columns do.
"""

from __future__ import annotations

from django.db import models

__all__ = ["NodeSummary", "DeviceUsage", "PodSummary", "ClaimSummary", "READ_MODELS"]


class NodeSummary(models.Model):
    """One node: group, labels, pods, CPU and devices in use (all drivers together)."""

    position = models.BigIntegerField(db_index=True, help_text="The node's document order.")
    name = models.CharField(max_length=253, unique=True)
    node_group = models.CharField(max_length=253, blank=True, db_index=True)
    labels = models.TextField(blank=True, help_text="Labels as ,key=value,...,")
    unschedulable = models.BooleanField(default=False)
    pods = models.IntegerField(default=0, db_index=True)
    cpu_used_milli = models.BigIntegerField(default=0)
    cpu_total_milli = models.BigIntegerField(default=0)
    devices_used = models.IntegerField(default=0)
    devices_total = models.IntegerField(default=0)
    in_use_percent = models.IntegerField(
        default=0, db_index=True, help_text="Devices, partitions and units in use, in percent.")
    drivers = models.TextField(blank=True, help_text="Drivers with devices here, as ,a,b,")

    class Meta:
        ordering = ["position"]

    def __str__(self) -> str:
        return self.name


class DeviceUsage(models.Model):
    """Per node, driver and model: devices, partitions or units in use and in total."""

    node = models.CharField(max_length=253, db_index=True)
    driver = models.CharField(max_length=253, db_index=True)
    model = models.CharField(max_length=128)
    unit = models.CharField(max_length=32)
    used = models.IntegerField(default=0)
    total = models.IntegerField(default=0)

    class Meta:
        ordering = ["node", "driver", "model"]
        constraints = [models.UniqueConstraint(fields=["node", "driver", "model"],
                                               name="allocation_deviceusage_unique")]

    def __str__(self) -> str:
        return f"{self.node} {self.driver} {self.used}/{self.total} {self.unit}"


class PodSummary(models.Model):
    """One pod: status (``allocation.models.pod.pod_status``), node and pending reason."""

    position = models.BigIntegerField(db_index=True)
    namespace = models.CharField(max_length=253, db_index=True)
    name = models.CharField(max_length=253, db_index=True)
    status = models.CharField(max_length=32, db_index=True)
    node = models.CharField(max_length=253, blank=True, db_index=True)
    node_group = models.CharField(max_length=253, blank=True, db_index=True)
    reason = models.TextField(blank=True, help_text="Why it is pending; empty once bound.")
    labels = models.TextField(blank=True, help_text="Labels as ,key=value,...,")
    claims = models.TextField(blank=True, help_text="Claim names as ,a,b,")

    class Meta:
        ordering = ["position"]
        constraints = [models.UniqueConstraint(fields=["namespace", "name"],
                                               name="allocation_podsummary_unique")]
        indexes = [models.Index(fields=["status", "reason"], name="allocation_pod_reason")]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


class ClaimSummary(models.Model):
    """One claim (seed or resource.k8s.io/v1): state, classes, drivers, node, what it holds."""

    position = models.BigIntegerField(db_index=True)
    namespace = models.CharField(max_length=253, db_index=True)
    name = models.CharField(max_length=253, db_index=True)
    api_version = models.CharField(max_length=64)
    state = models.CharField(max_length=32, db_index=True)
    classes = models.TextField(blank=True, help_text="Class names as ,a,b,")
    drivers = models.TextField(blank=True, help_text="Drivers of the allocation as ,a,b,")
    node = models.CharField(max_length=253, blank=True, db_index=True)
    held = models.IntegerField(default=0, help_text="Devices, partitions or units held.")
    summary = models.TextField(blank=True, help_text="The allocation in one line.")
    reserved_for = models.TextField(blank=True, help_text="Pods as ,a,b,")

    class Meta:
        ordering = ["position"]
        constraints = [models.UniqueConstraint(fields=["namespace", "name"],
                                               name="allocation_claimsummary_unique")]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


READ_MODELS: tuple[type[models.Model], ...] = (NodeSummary, DeviceUsage, PodSummary,
                                               ClaimSummary)
"""Every read-model table, in the order the worker writes them."""

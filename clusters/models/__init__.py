"""The live cluster source's tables: its status and the identities it mirrors."""

from clusters.models.source import ClusterSource, MirroredObject

__all__ = ["ClusterSource", "MirroredObject"]

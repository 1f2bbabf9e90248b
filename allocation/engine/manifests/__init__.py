"""Manifests: reading, validating and writing the planner's documents (spec sections 1-2)."""

from __future__ import annotations

from allocation.engine.manifests.loader import (
    LoadResult,
    build_object,
    cluster_problems,
    load_documents,
    load_files,
    load_texts,
)
from allocation.engine.manifests.problems import InvalidManifests, Problem

__all__ = ["LoadResult", "build_object", "cluster_problems", "load_documents", "load_files",
           "load_texts", "InvalidManifests", "Problem"]

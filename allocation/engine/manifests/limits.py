"""The bounds every document is read and validated within (spec section 1, docs/manifests.md).

One home for the numbers, so the reader, the schema and the error messages agree. They keep a
hostile or mistaken input from crashing, hanging or exhausting the planner: each is far above
what a real Kubernetes object needs.
"""

from __future__ import annotations

__all__ = [
    "MAX_DOCUMENT_BYTES", "MAX_EXPANDED_NODES", "MAX_NESTING_DEPTH", "INT64_MIN", "INT64_MAX",
    "MAX_FILE_BYTES",
]

#: A document's size, as written and (for YAML with aliases) once every alias is expanded;
#: kube-apiserver refuses request bodies over 3 MiB, etcd values over 1.5 MiB.
MAX_DOCUMENT_BYTES = 4 * 1024 * 1024

#: Nodes (scalars, lists, objects) one document may hold once aliases are expanded.
MAX_EXPANDED_NODES = 1_000_000

#: Lists and objects nested in one another. Kubernetes objects need well under this (a Pod's
#: deepest field, a node-affinity term's values, sits at depth 9); checked while parsing,
#: before anything recursive can see the document.
MAX_NESTING_DEPTH = 64

#: A whole file or request body (many documents, or one JSON ``List``).
MAX_FILE_BYTES = 64 * MAX_DOCUMENT_BYTES

#: Integers are Kubernetes' int64.
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

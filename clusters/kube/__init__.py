"""Reading a live Kubernetes cluster, strictly read-only (docs/live-cluster.md).

Django-free: the connection (``client``), which kinds and versions to read (``resources``,
``discovery``), paginated lists (``listing``) and resumable watches (``watching``). The
Django side (``clusters.services``) stores what these return.
"""

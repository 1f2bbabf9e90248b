"""Scheduling one pod, as the scheduler, the negotiation and the autoscaler all do it.

One module per concern, each used by all three (``docs/architecture.md``):

- ``reasons``: why a node refuses a pod, the ``0/N nodes are available`` summary, the
  explain annotation's body;
- ``needs``: what a pod needs (:class:`~.needs.PodNeeds`), with per-pass claim plans;
- ``fit``: fitting a pod on a node, a search that keeps its picks, a dry run that
  releases them, and a node's explanation;
- ``binding``: allocate, reserve, bind, mark unschedulable or waiting;
- ``cache``: the placement cache (cursor and failure per pod signature).

Nothing here imports a controller; the negotiation (``controlplane/negotiation.py``) is
handed to the scheduler (``scheduler.py``) by whoever builds it (``simulation.py``).
"""

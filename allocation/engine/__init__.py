"""DRA Planner's engine: a pure-Python model of Kubernetes Dynamic Resource Allocation.

Nothing in this package imports Django; the console and the worker are thin layers over it.
The main entry points are :func:`allocation.engine.manifests.load_files` (read and validate
manifests), :class:`allocation.engine.state.ClusterState` (the objects of one cluster) and
:func:`allocation.engine.simulation.simulate` (run every controller to a fixed point).
"""

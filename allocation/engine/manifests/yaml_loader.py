"""The PyYAML loader both YAML readers resolve scalars with (``yaml_fast``, the line
reader, and ``yaml_documents``, libyaml's events): SafeLoader's YAML 1.1 types, except a
timestamp, which stays text as kubectl keeps it."""

from __future__ import annotations

__all__ = ["kube_loader"]


def kube_loader(base: type) -> type:
    """``base`` (PyYAML's SafeLoader or CSafeLoader) reading a timestamp as its text, as
    kubectl's YAML reader (go-yaml into an untyped value) does: ``lastTimestamp:
    2025-01-01T00:00:00Z`` unquoted is the string a typed field checks, and a value passed
    through (opaque parameters, an Event) is written back as it was, not as a datetime.

    Returns:
        The loader class.
    """
    loader = type(f"Kube{base.__name__}", (base,), {})
    loader.add_constructor("tag:yaml.org,2002:timestamp",
                           lambda self, node: self.construct_scalar(node))
    return loader

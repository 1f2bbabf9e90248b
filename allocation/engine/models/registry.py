"""The registry of structured models the engine knows (the numeric seed's builtin controllers).

Models register once at import; the manifest schemas and the allocator consult the registry,
so a new model needs no change anywhere else::

    from allocation.engine.models import registry
    registry.register(MyModel())
"""

from __future__ import annotations

from allocation.engine.models.base import StructuredModel

__all__ = ["register", "unregister", "get", "all_models", "slice_models", "by_finalizer",
           "generation", "numeric_model"]

_MODELS: dict[str, StructuredModel] = {}
_generation = 0


def register(model: StructuredModel) -> None:
    """Add ``model``; its ``name`` must be new."""
    global _generation
    if model.name in _MODELS:
        raise ValueError(f"a structured model named {model.name!r} is already registered")
    _MODELS[model.name] = model
    _generation += 1


def unregister(name: str) -> None:
    """Remove a model (tests register toy models and take them away again)."""
    global _generation
    _MODELS.pop(name, None)
    _generation += 1


def generation() -> int:
    """Changes whenever the set of models changes, so cached schemas can be rebuilt."""
    return _generation


def get(name: str) -> StructuredModel | None:
    return _MODELS.get(name)


def all_models() -> list[StructuredModel]:
    return list(_MODELS.values())


def slice_models() -> list[StructuredModel]:
    return [m for m in _MODELS.values() if m.source == "slice"]


def numeric_model() -> StructuredModel | None:
    """The model that plans claims of ``numericParameters`` classes, if one is registered."""
    return next((m for m in _MODELS.values() if m.plans_numeric), None)


def by_finalizer() -> dict[str, StructuredModel]:
    return {m.finalizer: m for m in _MODELS.values()}

"""Core kinds checked against the Kubernetes schema (docs/manifests.md, "Core kinds").

Pod, Node, PodTemplate and Namespace are validated against the field declarations the
``kubernetes`` Python package carries for every API model (``openapi_types`` and
``attribute_map`` of ``V1Pod``, ``V1PodSpec``, ``V1Container``, ...). Every field of the real
API is therefore known: a typo such as ``spec.nodeSelecter`` is an unknown field with a
did-you-mean, as ``kubectl apply --validate=strict`` reports it, and every real field is
accepted and kept as written.

The declarations are converted into this project's schema nodes (``schema.py``) once per
model and cached, so problems read like every other kind's. The planner's own, stricter rules
for the fields it reads (the overlay ``kinds.py`` passes per kind: requests never negative,
label keys, DNS names, timestamps, one source per pod claim, ...) are merged into the
converted tree rather than written a second time, so they keep applying.

The declarations are read from the package's model files, not imported: importing
``kubernetes.client.models`` runs the package's ``__init__`` (config loaders, requests, OAuth)
and builds a pydantic class for each of the ~160 models a Pod reaches, about 0.5 CPU seconds,
as much as validating the whole 9,000-object benchmark input; reading the two dictionary
literals of those files takes about 25 ms. A file that cannot be read that way (another
generator's layout) falls back to importing its class.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import re
import threading
from pathlib import Path
from typing import Any

from allocation.engine.manifests.common import timestamp_str
from allocation.engine.manifests.problems import ProblemList
from allocation.engine.manifests.remembered import Remembered
from allocation.engine.manifests.schema import (
    AnyValue,
    Bool,
    Check,
    Int,
    ListOf,
    MapOf,
    Obj,
    QuantityStr,
    Schema,
    Str,
    type_name,
)

__all__ = ["CORE_MODELS", "QUANTITY_FIELDS", "INT_OR_STRING_FIELDS", "REMEMBERED_MODELS",
           "core_kind_schema", "model_schema", "model_fields"]

#: The Kubernetes model of each core kind validated against the Kubernetes schema.
CORE_MODELS = {"Pod": "V1Pod", "Node": "V1Node", "PodTemplate": "V1PodTemplate",
               "Namespace": "V1Namespace"}

#: Fields whose Go type is resource.Quantity or a ResourceList (k8s.io/api core/v1
#: types.go). The Python client declares them "str", but the API server also takes a JSON
#: number (`cpu: 1`).
QUANTITY_FIELDS = {
    "V1ResourceRequirements": ("limits", "requests"),
    "V1VolumeResourceRequirements": ("limits", "requests"),
    "V1PodSpec": ("overhead",),
    "V1PodStatus": ("allocatedResources",),
    "V1ContainerStatus": ("allocatedResources",),
    "V1NodeStatus": ("allocatable", "capacity"),
    "V1NodeAllocatableMappedResources": ("quantity",),
    "V1NodeAllocatableOverheadResources": ("perContainer", "perPod"),
    "V1EmptyDirVolumeSource": ("sizeLimit",),
    "V1ResourceFieldSelector": ("divisor",),
    "V1PersistentVolumeSpec": ("capacity",),
    "V1PersistentVolumeClaimStatus": ("allocatedResources", "capacity"),
    "V1LimitRangeItem": ("default", "defaultRequest", "max", "maxLimitRequestRatio", "min"),
    "V1ResourceQuotaSpec": ("hard",),
    "V1ResourceQuotaStatus": ("hard", "used"),
}
#: intstr.IntOrString fields, which the Python client declares "object".
INT_OR_STRING_FIELDS = {
    "V1HTTPGetAction": ("port",),
    "V1TCPSocketAction": ("port",),
    "V1ServicePort": ("targetPort",),
}

#: Models whose values a cluster repeats whole across its pods (every pod of a workload has
#: the same containers and status, often the same spec): their verdicts are remembered
#: (``remembered.py``).
REMEMBERED_MODELS = frozenset({"V1PodSpec", "V1PodStatus", "V1Container"})

_LIST = re.compile(r"^(?:List|list)\[(.+)\]$")
_MAP = re.compile(r"^(?:Dict\[str, (.+)\]|dict\(str, (.+)\))$")
_MODEL = re.compile(r"^[A-Z][A-Za-z0-9]*$")
_IMPORT = re.compile(r"from kubernetes\.client\.models\.(\w+) import (\w+)")
_LITERALS = {name: re.compile(rf"^    {name}(?:: [^=\n]+)? = (\{{.*?^    \}})", re.S | re.M)
             for name in ("openapi_types", "attribute_map")}


class _IntOrString(Schema):
    """intstr.IntOrString: an integer (an int64) or a string such as a port name."""

    _int = Int()

    def check(self, value: Any, path: str, problems: ProblemList) -> None:
        if isinstance(value, str):
            return
        if isinstance(value, bool) or not isinstance(value, int | float):
            problems.add(path, f"must be an integer or a string, not {type_name(value)}")
            return
        self._int.check(value, path, problems)

    def valid(self, value: Any) -> bool:
        if isinstance(value, str):
            return True
        return not isinstance(value, bool) and isinstance(value, int | float) \
            and self._int.valid(value)


# Loose where Kubernetes accepts more than one JSON form: "object" is a RawExtension,
# FieldsV1 or IntOrString; "float" and any type this table does not know accept anything.
_SCALARS: dict[str, Schema] = {"str": Str(), "int": Int(), "bool": Bool(),
                               "datetime": timestamp_str, "date": Str(), "object": AnyValue()}
_QUANTITY = QuantityStr()
_INT_OR_STRING = _IntOrString()
_ANY = AnyValue()


@functools.cache
def _models_dir() -> Path:
    spec = importlib.util.find_spec("kubernetes")  # locates the package without running it
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("the kubernetes package is not installed")
    return Path(list(spec.submodule_search_locations)[0]) / "client" / "models"


@functools.cache
def _module_names() -> dict[str, str]:
    text = (_models_dir() / "__init__.py").read_text(encoding="utf-8")
    return {cls: module for module, cls in _IMPORT.findall(text)}


def _literal(name: str, text: str) -> dict:
    match = _LITERALS[name].search(text)
    if match is None:
        raise ValueError(f"no {name} literal")
    value = ast.literal_eval(match.group(1))
    if not isinstance(value, dict):
        raise ValueError(f"{name} is not a dict")
    return value


def _read_fields(model: str) -> dict[str, str]:
    text = (_models_dir() / f"{_module_names()[model]}.py").read_text(encoding="utf-8")
    types, names = _literal("openapi_types", text), _literal("attribute_map", text)
    return {names[attr]: types[attr] for attr in types}


def _imported_fields(model: str) -> dict[str, str]:
    from kubernetes.client import models

    cls = getattr(models, model)
    return {cls.attribute_map[attr]: kind for attr, kind in cls.openapi_types.items()}


@functools.cache
def model_fields(model: str) -> dict[str, str]:
    """The JSON field names of Kubernetes model ``model`` (``V1PodSpec``) and their declared
    types as the Python client writes them (``List[V1Container]``, ``Dict[str, str]``).

    Raises:
        AttributeError: ``model`` is not a model of the installed ``kubernetes`` package.
        ImportError: the ``kubernetes`` package (a dependency) is not installed.
    """
    try:
        return _read_fields(model)
    except (OSError, KeyError, ValueError, SyntaxError, TypeError):
        return _imported_fields(model)


_built: dict[str, Obj] = {}
_remembered: dict[str, Remembered] = {}
_lock = threading.RLock()


def model_schema(model: str) -> Obj:
    """The schema node of Kubernetes model ``model``: a closed object with every field of
    the model, converted once and cached.

    Raises:
        AttributeError: ``model`` is not a model of the installed ``kubernetes`` package.
    """
    with _lock:
        schema = _built.get(model)
        if schema is None:
            schema = _built[model] = Obj({})  # registered first: a model may refer to itself
            try:
                quantities = QUANTITY_FIELDS.get(model, ())
                int_or_string = INT_OR_STRING_FIELDS.get(model, ())
                schema.fields.update(
                    (name, _INT_OR_STRING if name in int_or_string
                     else _convert(declared, name in quantities))
                    for name, declared in model_fields(model).items())
            except BaseException:
                del _built[model]
                raise
        return schema


def _convert(declared: str, quantity: bool) -> Schema:
    """The schema node of one declared type (``List[V1Toleration]``, ``Dict[str, str]``)."""
    match = _LIST.match(declared)
    if match:
        return ListOf(_convert(match.group(1), quantity))
    match = _MAP.match(declared)
    if match:
        return MapOf(_convert(match.group(1) or match.group(2), quantity))
    if quantity and declared == "str":
        return _QUANTITY
    if declared in _SCALARS:
        return _SCALARS[declared]
    if not _MODEL.match(declared):
        return _ANY
    if declared not in REMEMBERED_MODELS:
        return model_schema(declared)
    remembered = _remembered.get(declared)
    if remembered is None:  # one node per model, so its verdicts serve every field of it
        remembered = _remembered[declared] = Remembered(model_schema(declared))
    return remembered


def _merge(base: Schema, overlay: Schema) -> Schema:
    """``base`` (the Kubernetes model's node) with the planner's rules of ``overlay``.

    Objects get the union of both field sets (the planner still accepts fields upstream
    removed, such as a pod claim's ``source``), merged field by field, and are closed: the
    model knows every real field. Required fields and one-of groups add up. A leaf is the
    planner's, whose rule is the stricter one, unless it only names the JSON type (a plain
    ``Str()``) or is an ``AnyValue``: then it says nothing the model's node does not.
    """
    if isinstance(overlay, AnyValue) and (overlay.kind is None or isinstance(base, Obj | MapOf)):
        return base
    if _plain(overlay) and not isinstance(base, AnyValue):
        return base  # the model's node checks as much (a time is a time), or more
    if isinstance(overlay, Check):
        return Check(_merge(base, overlay.inner), overlay.fn)
    if isinstance(base, Remembered):
        merged = _merge(base.inner, overlay)
        return Remembered(merged) if isinstance(merged, Obj) else merged
    if isinstance(base, Obj) and isinstance(overlay, Obj):
        fields = dict(base.fields)
        for name, schema in overlay.fields.items():
            fields[name] = _merge(fields[name], schema) if name in fields else schema
        required = base.required + tuple(r for r in overlay.required if r not in base.required)
        return Obj(fields, required=required, one_of=base.one_of + overlay.one_of,
                   at_most_one=base.at_most_one + overlay.at_most_one, what=overlay.what)
    if isinstance(base, ListOf) and isinstance(overlay, ListOf):
        return ListOf(_merge(base.item, overlay.item), overlay.min_items, overlay.max_items,
                      overlay.unique_key)
    if isinstance(base, MapOf) and isinstance(overlay, MapOf):
        return MapOf(_merge(base.value, overlay.value), overlay.key)
    return overlay


_PLAIN = (Str(), Int(), Bool())


def _plain(schema: Schema) -> bool:
    """Whether ``schema`` checks the JSON type and nothing else."""
    return any(type(schema) is type(p) and vars(schema) == vars(p) for p in _PLAIN)


class _CoreKind(Schema):
    """A core kind's document: converted and merged on its first check, so the model files
    are read only by a process that validates that kind."""

    def __init__(self, model: str, overlay: Schema) -> None:
        self.model = model
        self.overlay = overlay

    def _build(self) -> Schema:
        with _lock:
            schema = _merge(model_schema(self.model), self.overlay)
        # Later documents go straight to the built schema: no cost per document.
        self.check = schema.check  # type: ignore[method-assign]
        self.valid = schema.valid  # type: ignore[method-assign]
        return schema

    def check(self, value: Any, path: str, problems: ProblemList) -> None:
        self._build().check(value, path, problems)

    def valid(self, value: Any) -> bool:
        return self._build().valid(value)


def core_kind_schema(kind: str, overlay: Schema) -> Schema:
    """The schema of core ``kind``: its Kubernetes model (:data:`CORE_MODELS`) with the
    planner's rules of ``overlay`` merged in, built on first use. A kind without a model
    here (Event) keeps ``overlay`` as it is."""
    model = CORE_MODELS.get(kind)
    return overlay if model is None else _CoreKind(model, overlay)

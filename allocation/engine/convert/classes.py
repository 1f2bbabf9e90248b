"""ResourceClass (+ ResourceClassParameters) as a v1 DeviceClass (spec ``v1.md`` section 5).

The class selects its driver (``device.driver == "d"``); the parameters' filters for that
driver become rewritten selectors, ``vendorParameters`` become ``config[].opaque``.
``suitableNodes`` and ``controllerName`` have no v1 form.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping

from allocation.engine.cel import CelCompileError, compile_device_selector
from allocation.engine.cel.syntax import string_literal
from allocation.engine.convert.selectors import RewriteError, rewrite_selector
from allocation.engine.convert.slices import V1
from allocation.engine.objects import ResourceClass, ResourceClassParameters
from allocation.engine.parameters import class_parameters, vendor_snapshot

__all__ = ["device_class", "opaque_config", "driver_selector", "MAX_PARAMETERS"]

MAX_PARAMETERS = 10 * 1024
_Warn = Callable[..., None]


def driver_selector(driver: str) -> dict:
    """The selector of one driver's devices."""
    return {"cel": {"expression": f"device.driver == {string_literal(driver)}"}}


def opaque_config(driver: str, parameters, path: str, warn: _Warn) -> list[dict]:
    """``[{opaque: {driver, parameters}}]`` for vendor parameters (none: ``[]``)."""
    if parameters is None:
        return []
    if not isinstance(parameters, dict):
        warn(path, "vendor parameters that are not a JSON object cannot be v1 opaque "
             "parameters", impossible=True)
        return []
    size = len(json.dumps(parameters, sort_keys=True, separators=(",", ":")))
    if size > MAX_PARAMETERS:
        warn(path, f"vendor parameters are {size} bytes, more than v1's {MAX_PARAMETERS}",
             impossible=True)
    return [{"opaque": {"driver": driver, "parameters": parameters}}]


def _filters(rc: ResourceClass, filters: list[dict], types: Mapping[str, Mapping[str, str]],
             warn: _Warn) -> list[dict]:
    selectors = []
    for index, entry in enumerate(filters):
        path, what = "parametersRef", f"filters[{index}]"
        if entry.get("driverName") != rc.driver_name:
            warn(path, f"{what} is for driver {entry.get('driverName')!r}, whose devices a v1 "
                 f"class of driver {rc.driver_name!r} never selects: dropped")
            continue
        model = next(value for key, value in entry.items() if key != "driverName")
        try:
            rewritten = rewrite_selector(model["selector"], rc.driver_name,
                                         types.get(rc.driver_name, {}))
        except RewriteError as error:
            warn(path, f"{what}.selector: {error}", impossible=True)
            continue
        for note in rewritten.notes:
            warn(path, f"{what}.selector: {note}")
        selectors.append({"cel": {"expression": rewritten.expression}})
    return selectors


def device_class(state, rc: ResourceClass, types: Mapping[str, Mapping[str, str]],
                 warn: _Warn) -> dict:
    """The v1 DeviceClass for ``rc``; ``warn(path, message, impossible=...)`` reports."""
    selectors = [driver_selector(rc.driver_name)]
    config: list[dict] = []
    if rc.suitable_nodes is not None:
        warn("suitableNodes", "removed in v1 (1.32): dropped, the class matches devices on "
             "every node")
    if rc.mode == "controller":
        warn("controllerName", "control-plane controllers were removed in v1 (1.32); the "
             "class selects the devices of its DriverSimulation's approximation",
             impossible=True)
    elif rc.mode == "numeric":
        found, error = class_parameters(state, rc)
        parameters = vendor_snapshot(found)
        if error:
            warn("parametersRef", error, impossible=True)
        config = opaque_config(rc.driver_name, parameters, "parametersRef", warn)
        for index, entry in enumerate(rc.numeric_parameters):
            if not entry.get("shareable"):
                warn(f"numericParameters[{index}].shareable", "every v1 claim is "
                     "shareable (up to 256 pods); not shareable is dropped")
    else:
        filters, parameters, error = _structured_parameters(state, rc)
        if error:
            warn("parametersRef", error, impossible=True)
        selectors.extend(_filters(rc, filters, types, warn))
        config = opaque_config(rc.driver_name, parameters, "parametersRef", warn)
    try:
        compile_device_selector(selectors[0]["cel"]["expression"])
    except CelCompileError as error:  # filters were compiled when rewritten
        warn("driverName", f"the v1 driver selector does not compile: {error}",
             impossible=True)
    spec: dict = {"selectors": selectors}
    if config:
        spec["config"] = config
    return {"apiVersion": V1, "kind": "DeviceClass", "metadata": _metadata(rc.raw),
            "spec": spec}


def _metadata(raw: dict) -> dict:
    meta = raw.get("metadata") or {}
    return {key: meta[key] for key in ("name", "namespace", "labels", "annotations")
            if meta.get(key)}


def _structured_parameters(state, rc) -> tuple[list[dict], object, str | None]:
    """(filters, vendor parameters, error) of a structured class's ``parametersRef``."""
    found, error = class_parameters(state, rc)
    if found is None:
        return [], None, error
    if isinstance(found, ResourceClassParameters):
        return found.filters, found.vendor_parameters, None
    ref = rc.parameters_ref
    return [], None, (f"class parameters {ref['kind']} {ref['name']!r} of class {rc.name!r} "
                      "have no ResourceClassParameters generated from them yet")

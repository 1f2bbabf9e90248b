"""Warnings for selectors that read an attribute no device in the cluster has.

A selector naming an attribute that exists nowhere (``strings["prodName"]`` for
``productName``, ``device.attributes["gpu.example.com"].prodName``) is valid CEL and
selects nothing, silently. It is not an error (the devices may be published later, as
drivers do), so it is reported as a **warning** when an object is written: upload, import,
the YAML editor and the admin (docs/console.md, "Warnings").

Device attributes come from the stored documents: seed slices' attribute lists (named
resources, partitionable common attributes and instances: every ``attributes`` list of
``{name, <type>: value}`` entries) and resource.k8s.io/v1 ResourceSlices'
``spec.devices[].attributes`` and ``capacity`` maps (``domain/id`` keys, or ``id`` in the
slice driver's domain).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass, field

from allocation.engine.cel import CelCompileError, compile_device_selector, compile_selector
from allocation.engine.manifests.cel_sources import cel_sources
from allocation.engine.manifests.problems import Problem
from allocation.engine.objects import KObject

__all__ = ["KnownAttributes", "known_attributes", "unknown_attribute_warnings"]


@dataclass
class KnownAttributes:
    """Attribute names found on devices: seed names, and v1 ``domain/id`` names per map
    (``attributes``, ``capacity``)."""

    seed: set[str] = field(default_factory=set)
    v1: dict[str, set[str]] = field(default_factory=lambda: {"attributes": set(),
                                                             "capacity": set()})

    def add_document(self, kind: str, doc: dict) -> None:
        """Take the device attributes of one stored or written document."""
        spec = doc.get("spec") if isinstance(doc.get("spec"), dict) else {}
        if kind == "NodeResourceSlice":
            _seed_names(spec, self.seed)
        elif kind == "ResourceSlice":
            driver = spec.get("driver") if isinstance(spec.get("driver"), str) else ""
            for device in spec.get("devices") or ():
                for map_name, names in self.v1.items():
                    entries = device.get(map_name) if isinstance(device, dict) else None
                    for key in entries if isinstance(entries, dict) else ():
                        names.add(key if "/" in key else f"{driver}/{key}")


def _seed_names(value, names: set[str]) -> None:
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key, child in node.items():
                if key == "attributes" and isinstance(child, list):
                    names.update(a["name"] for a in child
                                 if isinstance(a, dict) and isinstance(a.get("name"), str))
                else:
                    stack.append(child)
        elif isinstance(node, list):
            stack.extend(node)


def known_attributes(documents: Iterable[tuple[str, dict]]) -> KnownAttributes:
    """The device attributes of ``(kind, document)`` pairs (other kinds are ignored)."""
    known = KnownAttributes()
    for kind, doc in documents:
        known.add_document(kind, doc)
    return known


def _hint(name: str, names: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, sorted(names), n=1)
    return f" (did you mean {close[0]}?)" if close else ""


def _seed_unknown(source: str, known: KnownAttributes) -> list[str]:
    reads = compile_selector(source).reads
    return [f"no device in the cluster has an attribute {name!r}{_hint(name, known.seed)}"
            for name in sorted(reads or ()) if name not in known.seed]


def _v1_unknown(source: str, known: KnownAttributes) -> list[str]:
    out = []
    for read in compile_device_selector(source).reads or ():
        if len(read) != 3 or read[0] not in known.v1 or read[2] is None:
            continue
        map_name, domain, ident = read
        names = known.v1[map_name]
        word = "an attribute" if map_name == "attributes" else "a capacity"
        if domain is None:  # device.attributes[device.driver]: any driver's domain
            if not any(n.rsplit("/", 1)[-1] == ident for n in names):
                out.append(f"no device in the cluster has {word} {ident!r}"
                           f"{_hint(ident, {n.rsplit('/', 1)[-1] for n in names})}")
        elif f"{domain}/{ident}" not in names:
            full = f"{domain}/{ident}"
            out.append(f"no device in the cluster has {word} {full!r}{_hint(full, names)}")
    return out


def unknown_attribute_warnings(objects: Iterable[KObject], known: KnownAttributes
                               ) -> list[Problem]:
    """A warning per attribute that a selector of ``objects`` reads and no device in
    ``known`` has, in the problem format, at the selector's field. Selectors that do not
    compile are skipped (validation reports them); so are reads the analysis cannot follow.
    """
    warnings: list[Problem] = []
    for obj in objects:
        for item in cel_sources(obj.kind_name, obj.raw):
            check = {"selector": _seed_unknown, "device selector": _v1_unknown}.get(item.kind)
            if check is None:
                continue
            try:
                messages = check(item.source, known)
            except CelCompileError:
                continue
            source = obj.source
            warnings += [Problem(source.file if source else "", source.doc if source else 1,
                                 obj.kind_name, obj.namespace, obj.name, item.path, message)
                         for message in messages]
    return warnings

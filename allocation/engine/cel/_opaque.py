"""Kubernetes' opaque CEL types as protobuf messages: Quantity, Semver, URL, NamedFormat,
net.IP and net.CIDR.

The CEL library declares object types only as protobuf messages, so each opaque type is a
message with one string field holding the value's canonical text (``_k8s``, ``_net``,
``_url``, ``_format``) and, for a quantity, the form upstream holds it in (``_qform``), for
a URL whether its text drops its empty authority (``_url.URLText``). Messages have no
ordering operators, so ``q < q2`` fails to type-check as upstream, and message equality is
equality of the canonical text, i.e. of the values: a form is signed zeros, equal to each
other, of one length per type. This module makes the message types and converts
between them and (kind, text); ``_library`` declares them to the CEL library.
"""

from __future__ import annotations

import math
from functools import lru_cache

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from allocation.engine.cel import _format, _k8s, _net, _qform, _url

__all__ = ["OPAQUE_FIELD", "FORM_FIELD", "OPAQUE_NAMES", "OPAQUE_KINDS",
           "descriptor_pool_of_opaque_types", "message_classes", "opaque_value",
           "opaque_text", "url_value", "url_text_of"]

#: The message fields holding the canonical text and the form (±0.0 floats, equality-neutral);
#: selectors must not name them (``device``). They are longer than any attribute or capacity
#: id (32 characters), so refusing them refuses no name.
OPAQUE_FIELD = "draplanner_canonical_text_of_the_value"
FORM_FIELD = "draplanner_form_of_the_value"
OPAQUE_NAMES = {_k8s.QUANTITY: "kubernetes.Quantity", _k8s.SEMVER: "kubernetes.Semver",
                _net.IP: "net.IP", _net.CIDR: "net.CIDR", _url.URL: "kubernetes.URL",
                _format.FORMAT: "kubernetes.NamedFormat"}
OPAQUE_KINDS: dict[type, str] = {}  # message class -> kind, filled by _protobuf()


@lru_cache(maxsize=1)
def _protobuf() -> tuple[descriptor_pool.DescriptorPool, dict[str, type]]:
    pool = descriptor_pool.DescriptorPool()
    for package in dict.fromkeys(name.split(".")[0] for name in OPAQUE_NAMES.values()):
        file = descriptor_pb2.FileDescriptorProto(name=f"draplanner/{package}_cel.proto",
                                                  package=package, syntax="proto3")
        for full_name in OPAQUE_NAMES.values():
            if full_name.startswith(package + "."):
                message = file.message_type.add(name=full_name.split(".")[1])
                message.field.add(name=OPAQUE_FIELD, number=1,
                                  type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
                                  label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
                if full_name in (OPAQUE_NAMES[_k8s.QUANTITY], OPAQUE_NAMES[_url.URL]):
                    message.field.add(name=FORM_FIELD, number=2,
                                      type=descriptor_pb2.FieldDescriptorProto.TYPE_FLOAT,
                                      label=descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED)
        pool.Add(file)
    classes = {kind: message_factory.GetMessageClass(pool.FindMessageTypeByName(name))
               for kind, name in OPAQUE_NAMES.items()}
    OPAQUE_KINDS.update({cls: kind for kind, cls in classes.items()})
    return pool, classes


def opaque_value(kind: str, text: str, form: _qform.Form | None = None) -> object:
    """The CEL value of a quantity or semver (``_k8s.QUANTITY``/``SEMVER``) with this
    canonical text; a quantity with its ``form`` for a program with ``quantity_forms``."""
    if form is None:
        return _protobuf()[1][kind](**{OPAQUE_FIELD: text})
    return _protobuf()[1][kind](**{OPAQUE_FIELD: text, FORM_FIELD: _qform.encode(form)})


def url_value(text: _url.URLText) -> object:
    """The CEL value of a URL: its text, and one float of form, -0.0 when the text drops
    the URL's authority."""
    return _protobuf()[1][_url.URL](**{OPAQUE_FIELD: text,
                                       FORM_FIELD: (-0.0 if text.drops_authority else 0.0,)})


def url_text_of(value: object) -> _url.URLText:
    """The URL value :func:`url_value` made."""
    form = getattr(value, FORM_FIELD)
    return _url.URLText(getattr(value, OPAQUE_FIELD),
                        bool(form) and math.copysign(1.0, form[0]) < 0)


def opaque_text(value: object) -> tuple[str, str] | None:
    """(kind, canonical text) of an opaque value, None for anything else."""
    kind = OPAQUE_KINDS.get(type(value))
    return None if kind is None else (kind, getattr(value, OPAQUE_FIELD))


def descriptor_pool_of_opaque_types() -> descriptor_pool.DescriptorPool:
    """The descriptor pool declaring every opaque message type (made once)."""
    return _protobuf()[0]


def message_classes() -> dict[str, type]:
    """The message class of each opaque kind (``_k8s.QUANTITY`` ...)."""
    return _protobuf()[1]

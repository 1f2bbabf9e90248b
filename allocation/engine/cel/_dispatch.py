"""Run-time dispatch of the Kubernetes CEL library's overloads (docs/cel.md): the CEL
library tells overloads apart by kind only, and both opaque types (quantity, semver) are
messages to it, so one Python implementation per kind signature picks the overload by the
values' opaque types. ``_library`` declares the overloads and hands it these; this module
does not import the CEL library itself.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from google.protobuf.duration_pb2 import Duration
from google.protobuf.timestamp_pb2 import Timestamp

from allocation.engine.cel import _k8s, _qform, _url
from allocation.engine.cel._opaque import (
    FORM_FIELD,
    OPAQUE_FIELD,
    OPAQUE_KINDS,
    OPAQUE_NAMES,
    message_classes,
    opaque_value,
    url_text_of,
    url_value,
)

__all__ = ["dispatcher"]


def dispatcher(group: list[_k8s.Overload], forms: bool) -> Callable[..., object]:
    """The one implementation of the overloads ``group`` (one function and kind signature
    at run time, where both opaque types are messages and every list is a list): it calls
    the overload whose declared kinds the arguments' values have, their opaque texts
    unwrapped (with their forms when ``forms``), and wraps the result back.

    Raises:
        ValueError: no overload of the group takes the arguments (``no such overload``).
    """
    classes = message_classes()

    def call(*args: object) -> object:
        kinds = tuple(OPAQUE_KINDS.get(type(arg)) for arg in args)
        for overload in group:
            if all(have == want or (have is None and want not in OPAQUE_NAMES)
                   for have, want in zip(kinds, overload.params, strict=True)):
                plain = [url_text_of(a) if k == _url.URL else getattr(a, OPAQUE_FIELD) if k
                         else a for a, k in zip(args, kinds, strict=True)]
                if forms and overload.function in _qform.FORM_FUNCTIONS:
                    plain = [_qform.Formed(p, _qform.decode(getattr(a, FORM_FIELD)))
                             if k == _k8s.QUANTITY else p
                             for p, a, k in zip(plain, args, kinds, strict=True)]
                result = overload.impl(*plain)
                if overload.result in OPAQUE_NAMES:
                    if forms and overload.result == _k8s.QUANTITY:
                        return opaque_value(_k8s.QUANTITY, str(result), result.form)
                    if overload.result == _url.URL:
                        return url_value(result)
                    return classes[overload.result](**{OPAQUE_FIELD: result})
                if overload.result.removeprefix("map:") in OPAQUE_NAMES:  # format.named
                    kind = overload.result.removeprefix("map:")
                    return {k: classes[kind](**{OPAQUE_FIELD: v}) for k, v in result.items()}
                return _as_dyn(result)
        names = ", ".join(OPAQUE_NAMES.get(k, type(a).__name__) if k else type(a).__name__
                          for a, k in zip(args, kinds, strict=True))
        raise ValueError(f"no such overload: {group[0].function}({names})")

    return call


def _as_dyn(value: object) -> object:
    """A result as the library takes it: a datetime or timedelta ``dyn`` result only as its
    message."""
    message: Timestamp | Duration
    if isinstance(value, datetime):
        (message := Timestamp()).FromDatetime(value)
    elif isinstance(value, timedelta):
        (message := Duration()).FromTimedelta(value)
    else:
        return value
    return message

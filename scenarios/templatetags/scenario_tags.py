"""``{{ values|options }}``: a datalist's ``<option>`` elements, drawn in one go.

The scenario page offers every pod and node of the cluster to its Move forms; at thousands
of pods a template loop over them was a large part of every drop's render. The output is
the loop's, byte for byte (each value escaped as the template escapes it). The page's lists
are made once per baseline and shared by its scenarios' pages while a scenario leaves its
pods and nodes as they are (``scenarios/presenters.py``), so the text of the last few lists
is remembered by the list itself: 40,000 pods are drawn once per baseline, not per drop.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from html import escape

from django import template
from django.utils.safestring import SafeString, mark_safe

__all__ = ["options"]

register = template.Library()

_REMEMBERED = 4  # lists: a baseline's pods and nodes, and a scenario's own
_drawn: OrderedDict[int, tuple[list, SafeString]] = OrderedDict()
_lock = threading.Lock()


@register.filter
def options(values: Iterable[str]) -> SafeString:
    """``<option value="VALUE">`` for each of ``values``, escaped, in order.

    A list's text is remembered while the list is among the last few drawn (the entry
    holds the list, so its ``id`` is not reused meanwhile): a list given here must not be
    changed afterwards, as the page's are not.
    """
    if isinstance(values, list):
        with _lock:
            hit = _drawn.get(id(values))
            if hit is not None and hit[0] is values:
                _drawn.move_to_end(id(values))
                return hit[1]
    # the standard library's escape is what ``django.utils.html.escape`` calls, without
    # its lazy-string wrapper and a SafeString per value (thousands per page)
    html = mark_safe("".join(f'<option value="{escape(str(value))}">' for value in values))
    if isinstance(values, list):
        with _lock:
            _drawn[id(values)] = (values, html)
            while len(_drawn) > _REMEMBERED:
                _drawn.popitem(last=False)
    return html

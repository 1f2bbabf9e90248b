"""``{{ values|options }}``: a datalist's ``<option>`` elements, drawn in one go;
``{% pod_chip pod editable change_url %}``: one pod's chip, drawn once per look.

The scenario page offers every pod and node of the cluster to its Move forms; at thousands
of pods a template loop over them was a large part of every drop's render. The output is
the loop's, byte for byte (each value escaped as the template escapes it). The page's lists
are made once per baseline and shared by its scenarios' pages while a scenario leaves its
pods and nodes as they are (``scenarios/presenters.py``), so the text of the last few lists
is remembered by the list itself: 40,000 pods are drawn once per baseline, not per drop.

A page draws hundreds of pod chips (the shown nodes' pods and the queue's first ones), and
an include of ``scenarios/htmx/pod_chip.html`` for each was most of a drop's render; a
drop changes a few of them. So a chip's text is remembered by what it shows (the chip's
fields, whether it is editable, the change URL): the template stays the chip's one home,
drawn again only for a chip not drawn lately, and the page is the same byte for byte.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from html import escape
from typing import TYPE_CHECKING

from django import template
from django.template.loader import get_template
from django.utils.safestring import SafeString, mark_safe

if TYPE_CHECKING:
    from scenarios.presenters import PodChip

__all__ = ["options", "pod_chip", "CHIP_TEMPLATE"]

register = template.Library()

_REMEMBERED = 4  # lists: a baseline's pods and nodes, and a scenario's own
_drawn: OrderedDict[int, tuple[list, SafeString]] = OrderedDict()
_lock = threading.Lock()

CHIP_TEMPLATE = "scenarios/htmx/pod_chip.html"
"""The pod chip's markup (context: ``pod``, ``editable``, ``change_url``)."""
_CHIPS = 4096  # a page draws several hundred; a few pages' worth, a few MB
_chips: OrderedDict[tuple, SafeString] = OrderedDict()


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


@register.simple_tag
def pod_chip(pod: PodChip, editable: bool, change_url: str) -> SafeString:
    """The chip of ``pod`` as :data:`CHIP_TEMPLATE` draws it, remembered by what it shows
    (the last few thousand chips drawn).

    Returns:
        The chip's HTML.
    """
    # the chip's fields are plain values: its own dict's values, not ``astuple``'s deep copy
    # (10 us against 0.4 a chip: some 6 ms of a drop at 5,000 nodes, 600 chips drawn)
    key = (*vars(pod).values(), bool(editable), change_url)
    with _lock:
        hit = _chips.get(key)
        if hit is not None:
            _chips.move_to_end(key)
            return hit
    html = get_template(CHIP_TEMPLATE).render(
        {"pod": pod, "editable": editable, "change_url": change_url})
    with _lock:
        _chips[key] = html
        while len(_chips) > _CHIPS:
            _chips.popitem(last=False)
    return html

"""``{% status kind word %}``: a state as a badge, in the one vocabulary of
``allocation/presenters/status.py``."""

from __future__ import annotations

from django import template
from django.utils.html import format_html

from allocation.presenters.status import status as lookup

register = template.Library()


@register.simple_tag(name="status")
def status_badge(kind: str, word: str) -> str:
    """``<span class="badge TONE" data-status="KIND:WORD" title="MEANING">WORD</span>``."""
    found = lookup(kind, str(word))
    return format_html('<span class="badge {}" data-status="{}:{}" title="{}">{}</span>',
                       found.tone, kind, found.word, found.meaning, found.word)

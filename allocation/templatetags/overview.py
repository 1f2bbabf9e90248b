"""``{{ group.cells|overview_cells }}``: the cluster overview's cells, one link per node.

A cluster of thousands of nodes has thousands of cells; joined here in one pass they cost
milliseconds, where a template loop over them cost most of the dashboard's time
(docs/console-pages.md, "Dashboard"). The markup is the same as a loop would write.
"""

from __future__ import annotations

from django import template
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

register = template.Library()


@register.filter(name="overview_cells")
def overview_cells(cells) -> SafeString:
    """``<a href="URL" class="uSTEP[ cordoned]" title="NAME: P% in use"></a>`` per cell."""
    return mark_safe("".join(
        f'<a href="{escape(c.url)}" class="u{c.step:d}{" cordoned" if c.cordoned else ""}" '
        f'title="{escape(c.name)}: {c.percent:d}% in use"></a>' for c in cells))

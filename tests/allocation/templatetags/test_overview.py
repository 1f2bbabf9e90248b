"""allocation.templatetags.overview: the overview's cells as one string, as a loop wrote them."""

from __future__ import annotations

from django.template import Context, Template

from allocation.presenters.dashboard import OverviewCell


def test_cells_are_links_with_step_outline_and_title_escaped() -> None:
    cells = [OverviewCell("n1", "/nodes/n1/", 3, 57, False),
             OverviewCell('a"<b', "/nodes/a/", 0, 0, True)]

    html = Template("{% load overview %}{{ cells|overview_cells }}").render(
        Context({"cells": cells}))

    assert html == ('<a href="/nodes/n1/" class="u3" title="n1: 57% in use"></a>'
                    '<a href="/nodes/a/" class="u0 cordoned" title="a&quot;&lt;b: 0% in use">'
                    '</a>')

"""scenarios.templatetags.scenario_tags: a datalist's options as one string, as a loop
wrote them, and a pod chip as its include drew it."""

from __future__ import annotations

import pytest
from django.template import Context, Template

from scenarios.presenters import PodChip
from scenarios.templatetags.scenario_tags import options, pod_chip

VALUES = ["default/pod-1", 'team/a"<b>&\'c', "node-0999"]


def test_options_equal_the_template_loop_they_replace() -> None:
    loop = Template('{% for v in values %}<option value="{{ v }}">{% endfor %}').render(
        Context({"values": VALUES}))

    html = Template("{% load scenario_tags %}{{ values|options }}").render(
        Context({"values": VALUES}))

    assert html == loop
    assert '<option value="team/a&quot;&lt;b&gt;&amp;&#x27;c">' in html


def test_no_values_no_options() -> None:
    assert Template("{% load scenario_tags %}{{ values|options }}").render(
        Context({"values": []})) == ""


def test_a_list_drawn_again_is_its_text_remembered_and_the_same() -> None:
    values = [f"default/pod-{i}" for i in range(5)]
    first = options(values)
    assert options(values) is first  # remembered by the list itself
    for other in range(5):  # enough other lists to push it out
        options([f"n-{other}"])
    again = options(values)
    assert again == first and again is not first
    assert options(tuple(values)) == first  # anything else is drawn each time


CHIPS = [PodChip("default/p0", "node-1", False, state="bound"),
         PodChip('team/a"<b>&\'c', None, True, reason='0/3 nodes: "x" < y & z', new=True),
         PodChip("default/p1", "node-2", True, new=True, state="bound")]


@pytest.mark.parametrize("editable", [True, False])
def test_a_pod_chip_equals_the_include_it_replaces(editable) -> None:
    context = {"chips": CHIPS, "editable": editable, "change_url": "/scenarios/7/changes/"}
    included = Template('{% for pod in chips %}{% include "scenarios/htmx/pod_chip.html" %}'
                        '{% endfor %}').render(Context(context))
    tagged = Template("{% load scenario_tags %}{% for pod in chips %}"
                      "{% pod_chip pod editable change_url %}{% endfor %}")
    assert tagged.render(Context(context)) == included
    assert tagged.render(Context(context)) == included  # remembered, the same
    assert ("Move…" in included) is editable
    assert "&quot;x&quot; &lt; y &amp; z" in included


def test_a_pod_chip_is_remembered_by_what_it_shows() -> None:
    chip = PodChip("default/p9", "node-1", False, state="bound")
    first = pod_chip(chip, True, "/scenarios/1/changes/")
    assert pod_chip(PodChip("default/p9", "node-1", False, state="bound"), True,
                    "/scenarios/1/changes/") is first
    moved = pod_chip(PodChip("default/p9", "node-2", True, state="bound"), True,
                     "/scenarios/1/changes/")
    assert 'class="chip pod pinned"' in moved and 'class="chip pod pinned"' not in first
    assert pod_chip(chip, True, "/scenarios/2/changes/") == first.replace(
        "/scenarios/1/", "/scenarios/2/")
    assert "Move…" not in pod_chip(chip, False, "/scenarios/1/changes/")

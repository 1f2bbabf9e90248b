"""scenarios.templatetags.scenario_tags: a datalist's options as one string, as a loop
wrote them."""

from __future__ import annotations

from django.template import Context, Template

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

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


def test_a_list_drawn_again_is_its_text_remembered_and_the_same() -> None:
    from scenarios.templatetags.scenario_tags import options

    values = [f"default/pod-{i}" for i in range(5)]
    first = options(values)
    assert options(values) is first  # remembered by the list itself
    for other in range(5):  # enough other lists to push it out
        options([f"n-{other}"])
    again = options(values)
    assert again == first and again is not first
    assert options(tuple(values)) == first  # anything else is drawn each time

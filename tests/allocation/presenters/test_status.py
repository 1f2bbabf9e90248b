"""The one status vocabulary (``allocation/presenters/status.py``): every state of every
kind rendered on every page that shows that kind, with the same word and tone."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace as NS

import pytest
from django.template.loader import render_to_string

from allocation.presenters.status import VOCABULARY, pod_state, status

TEMPLATES = Path(__file__).resolve().parents[3] / "templates"

# (template, the kind it shows, a context showing ``word``)
PAGES = [
    ("allocation/htmx/pod_detail.html", "pod",
     lambda w: {"pod": NS(state=w, phase="Pending", claims=[], conditions=[], events=[])}),
    ("allocation/htmx/pod_detail.html", "claim",
     lambda w: {"pod": NS(state="bound", claims=[NS(pod_claim="gpu", claim="c", state=w)],
                          conditions=[], events=[])}),
    ("allocation/htmx/claim_detail.html", "claim",
     lambda w: {"claim": NS(v1=False, state=w, items=[], events=[])}),
    ("allocation/htmx/claim_v1_detail.html", "claim",
     lambda w: {"claim": NS(state=w, requests=[], results=[], events=[])}),
    ("allocation/htmx/v1_device_table.html", "device",
     lambda w: {"devices": [NS(name="gpu-0", state=w, holders=[])]}),
    ("scenarios/htmx/pod_chip.html", "pod",
     lambda w: {"pod": NS(ref="default/p", state=w, node=None, pinned=False)}),
]
SHOWN = {"pod_detail.html": {"pod", "claim"}, "claim_detail.html": {"claim"},
         "claim_v1_detail.html": {"claim"}, "v1_device_table.html": {"device"},
         "pod_chip.html": {"pod"}}


@pytest.mark.parametrize(("template", "kind", "context"), PAGES,
                         ids=[f"{t.rsplit('/', 1)[1]}:{k}" for t, k, _ in PAGES])
def test_each_state_is_said_the_same_way_on_each_page(template, kind, context) -> None:
    for word, said in VOCABULARY[kind].items():
        html = render_to_string(template, context(word))
        badge = re.search(rf'<span class="badge ([a-z]*)" data-status="{kind}:{word}"'
                          rf' title="[^"]*">([^<]*)</span>', html)
        assert badge, (template, word)
        assert badge.groups() == (said.tone, word)


def test_a_bound_pod_is_never_a_green_pending() -> None:
    bound = NS(phase="Pending", node_name="worker-1", terminated=False)
    assert pod_state(bound) == "bound"
    html = render_to_string("allocation/htmx/pod_detail.html", {"pod": NS(
        state=pod_state(bound), phase="Pending", claims=[], conditions=[], events=[])})
    assert 'data-status="pod:bound"' in html
    assert not re.search(r'class="badge ok"[^>]*>Pending<', html)
    assert pod_state(NS(phase=None, node_name=None, terminated=False)) == "pending"
    assert pod_state(NS(phase="Failed", node_name="n", terminated=True)) == "failed"
    assert pod_state(NS(phase="Running", node_name="n", terminated=True)) == "terminating"


def test_no_template_picks_a_state_colour_by_hand() -> None:
    by_hand = re.compile(r'class="badge \{% if [^%]*(state|node|phase)')
    offenders = [str(p.relative_to(TEMPLATES)) for p in TEMPLATES.rglob("*.html")
                 if by_hand.search(p.read_text())]
    assert offenders == []


def test_every_page_showing_a_kind_is_in_the_table() -> None:
    uses = {}
    for path in TEMPLATES.rglob("*.html"):
        kinds = set(re.findall(r'\{% status "(\w+)"', path.read_text()))
        if kinds:
            uses[path.name] = kinds
    node_summary = uses.pop("node_summary.html")  # a node's pods, all bound: one word
    assert node_summary == {"pod"}
    assert uses == SHOWN


def test_an_unknown_state_is_refused() -> None:
    with pytest.raises(KeyError, match="not in the status vocabulary"):
        status("pod", "running")
    assert status("claim", "deallocationrequested").word == "deallocating"

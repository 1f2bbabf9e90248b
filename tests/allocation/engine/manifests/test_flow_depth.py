from hypothesis import given
from hypothesis import strategies as st

from allocation.engine.manifests.flow_depth import cap_flow_depth
from allocation.engine.manifests.yaml_documents import iter_yaml_documents

POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"


def test_a_text_within_the_limit_is_returned_as_it_is():
    text = POD + 'spec: {x: [[1, 2], {a: "[[["}]}\n'
    # brackets are counted naively, quoted ones too: the quoted "[[[" opens three more
    assert cap_flow_depth(text, 6) is text
    assert cap_flow_depth(text, 5) != text


def test_a_deep_document_is_closed_at_the_limit_and_keeps_its_line_count():
    text = "a: " + "[" * 10 + "1" + "]" * 10 + "\nb: 2\n---\nc: 3\n"
    capped = cap_flow_depth(text, 4)
    assert capped == "a: [[[[]]]]\n\n---\nc: 3\n"
    assert capped.count("\n") == text.count("\n")


def test_closing_brackets_match_the_open_ones():
    assert cap_flow_depth("x: [{a: [{b: [", 4) == "x: [{a: [{b: }]}]"


@given(st.text(alphabet="[]{}ab,:\n-", max_size=60), st.integers(min_value=1, max_value=6))
def test_the_cut_text_never_nests_deeper_than_the_limit_and_keeps_every_line(text, limit):
    capped = cap_flow_depth(text, limit)
    assert capped.count("\n") == text.count("\n")
    depth = deepest = 0
    for char in capped:
        depth = depth + 1 if char in "[{" else max(depth - 1, 0) if char in "]}" else depth
        deepest = max(deepest, depth)
    assert deepest <= limit


def test_100000_levels_are_refused_at_once_and_the_next_document_is_read():
    text = (POD + "spec:\n  x: " + "[" * 100_000 + "]" * 100_000 + "\n---\n" + POD
            + "spec: {a: 1, a: 2}\n")
    first, second = list(iter_yaml_documents(text))
    assert first.fatal and "nested more than 64 levels" in first.fatal
    assert second.doc == 2 and second.data["metadata"] == {"name": "p"}
    # the later document's problem keeps its own line (the cut kept every line break)
    assert any("line 10" in message for _, message in second.problems)

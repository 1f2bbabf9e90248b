"""An explain annotation rendered once and renamed for identical pods
(``scheduling/renaming.py``): the new names are written as the annotation's JSON writes
them, and substitution replaces every name at once. The scheduler's use of it is tested
with each dialect (``test_scheduler.py``, ``test_v1_explain_memo.py``)."""

from __future__ import annotations

import random
import re

from allocation.engine.scheduling import renaming


def test_substitute_with_one_name_is_the_general_substitution():
    """``substitute``'s one-name path (``str.replace``) against its general path (one
    regular expression) on texts where names repeat, overlap and abut."""
    def general(text: str, quoted: dict[str, str]) -> str:
        pattern = re.compile("|".join(re.escape(old) for old in quoted))
        return pattern.sub(lambda match: quoted[match.group(0)], text)

    rng = random.Random(7)
    for _ in range(500):
        old = "".join(rng.choice('ab"/') for _ in range(rng.randint(1, 4)))
        new = "".join(rng.choice('ab"/x') for _ in range(rng.randint(0, 5)))
        text = "".join(rng.choice('ab"/ ') for _ in range(rng.randint(0, 30)))
        assert renaming.substitute(text, {old: new}) == general(text, {old: new})
    two = {'"a"': '"b"', '"b"': '"a"'}  # swapped at once, not one after the other
    assert renaming.substitute('["a", "b"]', two) == '["b", "a"]'


def test_renaming_writes_any_claim_name_as_the_annotations_json_does():
    """``renamed`` quotes the new name itself (API names between plain quotes) but must
    write every name as ``json.dumps`` would: escapes, non-ASCII and control characters
    included."""
    def body(ref: str) -> dict:
        return {"nodes": [{"node": "n", "reason": "cannot allocate all claims",
                           "requests": [{"claim": ref, "request": "gpu"}]}]}

    rendered = renaming.render("0/1 nodes are available", body("default/c1"),
                                 ["default/c1"])
    for ref in ("default/c2", "a b/c.d-e", 'ns/a"b', "ns/a\\b", "ns/\u00e9", "ns/\u2603",
                "ns/a\tb", "ns/a\x7fb", "ns/a\x00b", "ns/\U0001f600"):
        assert renaming.renamed(rendered, [ref]) == renaming.render(
            "0/1 nodes are available", body(ref), [ref]).text

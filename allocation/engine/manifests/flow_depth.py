"""Cutting absurdly deep flow collections out of a YAML text before libyaml reads it.

libyaml's scanner keeps one possible simple key per flow level and checks them all at
every token, so a document of 100,000 nested ``[`` costs it about 30 CPU-seconds before
the builder can refuse it for breaking the 64-level bound (``limits.MAX_NESTING_DEPTH``).
This linear pre-pass finds a flow collection opened deeper than ``limit`` (counting
brackets naively, quotes included: a legitimate text never leaves hundreds of brackets
open), closes the collections open there and drops the rest of that document, keeping its
line breaks so that every later line keeps its number. The builder then refuses the
document as it would have, at once.
"""

from __future__ import annotations

import re

__all__ = ["cap_flow_depth"]

_BRACKET = re.compile(r"[\[\]{}]")
_NEXT_DOCUMENT = re.compile(r"^(?:---|\.\.\.)", re.MULTILINE)
_CLOSER = {"[": "]", "{": "}"}


def cap_flow_depth(text: str, limit: int) -> str:
    """``text`` with every document whose brackets nest deeper than ``limit`` cut there.

    Returns:
        ``text`` itself when no bracket nests deeper than ``limit`` (the common case, found
        with two counts when the text holds few brackets), else a text with the same line
        numbers whose deep documents are closed at depth ``limit``.
    """
    if text.count("[") + text.count("{") <= limit:
        return text
    pieces: list[str] = []
    stack: list[str] = []
    start = 0  # where the text not yet copied begins
    position = 0
    while True:
        match = _BRACKET.search(text, position)
        if match is None:
            break
        char, at = match.group(), match.start()
        position = at + 1
        if char in _CLOSER:
            if len(stack) < limit:
                stack.append(char)
                continue
            # too deep: close what is open, keep the line breaks up to the next document
            nxt = _NEXT_DOCUMENT.search(text, at)
            end = nxt.start() if nxt is not None else len(text)
            pieces.append(text[start:at])
            pieces.append("".join(_CLOSER[c] for c in reversed(stack)))
            pieces.append("\n" * text.count("\n", at, end))
            start = position = end
            stack.clear()
        elif stack:
            stack.pop()
    if not pieces:
        return text
    pieces.append(text[start:])
    return "".join(pieces)

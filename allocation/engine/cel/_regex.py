"""Kubernetes' CEL regex library (``find``, ``findAll``) with Go's ``regexp`` semantics.

resource.k8s.io/v1 selectors compile in Kubernetes' base environment, which has had
``k8s.io/apiserver/pkg/cel/library/regex.go`` since 1.0: ``s.find(re)`` is Go's
``Regexp.FindString`` ("" when nothing matches) and ``s.findAll(re[, n])`` is
``Regexp.FindAllString(s, n)`` (n < 0: every match, n == 0: none). Python's ``re`` is not
RE2 (other syntax, backtracking) and neither Python's ``re.findall`` nor RE2's own
``findall`` follows Go's rule for empty matches (no empty match right after a previous
match: ``"aab"`` with ``a*`` is ``["aa", ""]`` in Go, ``["aa", "", ""]`` in both), so
matching is RE2 (``google-re2``, the same engine Go's ``regexp`` was written after) and the
loop over matches is Go's ``allMatches``, rewritten here over UTF-8 byte offsets as Go works.

Go's parser and RE2's differ in a few places; where Go refuses what RE2 accepts (``\\C``)
the pattern is refused here too. Error texts are Go's (``error parsing regexp: missing
closing ): `(```), mapped from RE2's; docs/cel.md ("Regex") lists what was compared.

:data:`FUNCTIONS` lists the overloads in ``_k8s.Overload``'s terms; implementations raise
ValueError with upstream's message.
"""

from __future__ import annotations

from functools import lru_cache

import re2

from allocation.engine.cel._k8s import Overload

__all__ = ["FUNCTIONS", "compile_go", "find", "find_all"]

# RE2's error descriptions (re2/regexp.cc, RE2::ErrorPatternTooLarge) and Go's codes for the
# same errors (regexp/syntax ErrorCode); both report the same argument.
_GO_CODES = {
    "invalid escape sequence": "invalid escape sequence",
    "invalid character class": "invalid character class",
    "invalid character class range": "invalid character class range",
    "missing ]": "missing closing ]",
    "missing )": "missing closing )",
    "unexpected )": "unexpected )",
    "trailing \\": "trailing backslash at end of expression",
    "no argument for repetition operator": "missing argument to repetition operator",
    "invalid repetition size": "invalid repeat count",
    "bad repetition operator": "invalid nested repetition operator",
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "invalid UTF-8": "invalid UTF-8",
    "invalid named capture group": "invalid named capture",
    "pattern too large - compile failed": "expression too large",
}


def _options() -> re2.Options:
    # RE2's defaults are Go's ``regexp.Compile`` (syntax.Perl): leftmost-first, ``.`` not
    # matching a newline, ``^``/``$`` at the text's ends, Perl classes, UTF-8.
    options = re2.Options()
    options.log_errors = False  # RE2 would print every refused pattern on stderr
    return options


_OPTIONS = _options()


def _go_error(code: str, argument: str) -> ValueError:
    """Go's ``*syntax.Error`` text."""
    return ValueError(f"error parsing regexp: {code}: `{argument}`")


def _go_only_refusal(pattern: str) -> int:
    """Where Go's parser refuses what RE2's accepts: the first ``\\C`` (any byte) outside
    ``\\Q...\\E``; -1 for none."""
    index = 0
    while index < len(pattern) - 1:
        if pattern[index] != "\\":
            index += 1
            continue
        escape = pattern[index + 1]
        if escape == "Q":
            end = pattern.find("\\E", index + 2)
            index = len(pattern) if end < 0 else end + 2
            continue
        if escape == "C":
            return index
        index += 2
    return -1


def _re2(pattern: str) -> re2._Regexp:
    try:
        return re2.compile(pattern.encode(), _OPTIONS)
    except re2.error as error:
        text = error.args[0].decode(errors="replace") if error.args else ""
        raise _translated(text) from None


@lru_cache(maxsize=512)
def compile_go(pattern: str) -> re2._Regexp:
    """The RE2 program of ``pattern`` as Go's ``regexp.Compile`` accepts it (on UTF-8 bytes).

    Raises:
        ValueError: the pattern does not compile: Go's message (``error parsing regexp: ...``).
    """
    refused = _go_only_refusal(pattern)
    if refused >= 0:
        # Go parses left to right: an error before the \C comes first, except those only
        # the end of the text shows, which cutting the pattern there would make up.
        try:
            _re2(pattern[:refused])
        except ValueError as error:
            if "unexpected )" in str(error):  # whose argument is the whole pattern
                raise _go_error("unexpected )", pattern) from None
            if not any(f"closing {c}" in str(error) for c in ")]"):
                raise
        raise _go_error("invalid escape sequence", "\\C")
    _re2(pattern)
    # Go looks for a match at character boundaries only; RE2's unanchored search on UTF-8
    # also tries the bytes inside a character, where \B matches: so search anchored, after
    # a lazy run of whole characters, and take the pattern's group.
    return _re2(f"(?s:.)*?({pattern})")


def _translated(text: str) -> ValueError:
    for description in sorted(_GO_CODES, key=len, reverse=True):
        if text == description or text.startswith(description + ": "):
            return _go_error(_GO_CODES[description], text[len(description) + 2 :])
    return _go_error("invalid regular expression", text)  # not seen from RE2 so far


def _illegal(pattern: str) -> re2._Regexp:
    """upstream's ``regexp.Compile`` at run time, whose error is wrapped as "Illegal regex"."""
    try:
        return compile_go(pattern)
    except ValueError as error:
        raise ValueError(f"Illegal regex: {error}") from None


def _rune_width(data: bytes, pos: int) -> int:
    """The byte length of the UTF-8 character starting at ``pos`` (0 at the end)."""
    if pos >= len(data):
        return 0
    lead = data[pos]
    return 1 if lead < 0xC0 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4


def _search(regexp: re2._Regexp, data: bytes, pos: int) -> tuple[int, int] | None:
    """The span of the leftmost-first match at or after ``pos`` (a character boundary)."""
    match = regexp.match(data, pos)
    return None if match is None else match.span(1)


def find(text: str, pattern: str) -> str:
    """``text.find(pattern)``: Go's ``FindString``, the leftmost-first match or "".

    Raises:
        ValueError: the pattern does not compile: ``Illegal regex: error parsing regexp: ...``.
    """
    data = text.encode()
    span = _search(_illegal(pattern), data, 0)
    return "" if span is None else data[span[0] : span[1]].decode()


def find_all(text: str, pattern: str, limit: int = -1) -> list[str]:
    """``text.findAll(pattern[, limit])``: Go's ``FindAllString(text, limit)``.

    Go's loop (regexp.go ``allMatches``): search from ``pos``; an empty match that ends
    where the previous match ended is skipped; after an empty match move on one character.

    Raises:
        ValueError: the pattern does not compile: ``Illegal regex: error parsing regexp: ...``.
    """
    regexp = _illegal(pattern)
    data = text.encode()
    end = len(data)
    wanted = end + 1 if limit < 0 else limit
    found: list[str] = []
    pos, previous_end = 0, -1
    while len(found) < wanted and pos <= end:
        span = _search(regexp, data, pos)
        if span is None:
            break
        start, stop = span
        accept = True
        if stop == pos:  # an empty match at pos
            accept = start != previous_end
            width = _rune_width(data, pos)
            pos = pos + width if width else end + 1
        else:
            pos = stop
        previous_end = stop
        if accept:
            found.append(data[start:stop].decode())
    return found


#: Every overload of the library (k8s.io/apiserver pkg/cel/library/regex.go).
FUNCTIONS: tuple[Overload, ...] = (
    Overload("find", "string_find_string", ("string", "string"), "string", True, find),
    Overload("findAll", "string_find_all_string", ("string", "string"), "list:string", True,
             find_all),
    Overload("findAll", "string_find_all_string_int", ("string", "string", "int"),
             "list:string", True, find_all),
)

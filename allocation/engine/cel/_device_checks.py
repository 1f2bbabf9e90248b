"""The compile-time checks of a v1 device selector beyond the library's type check
(``device.compile_device_selector`` runs them): upstream's unknown attribute type, the
names of Kubernetes' opaque types, and literal arguments Kubernetes validates.
"""

from __future__ import annotations

import re

from allocation.engine.cel._analysis import tokenize
from allocation.engine.cel._errors import CelCompileError
from allocation.engine.cel._library import compile_device_program
from allocation.engine.cel._opaque import FORM_FIELD, OPAQUE_FIELD

__all__ = ["COMPREHENSIONS", "check_unknown_attributes", "refuse_internals", "check_literals"]

# cel-go's comprehension macros (and the extensions'), whose range an attribute could be
COMPREHENSIONS = re.compile(r"\b(?:all|exists|exists_one|existsOne|map|filter|transformList|"
                             r"transformMap|transformMapEntry|sortBy)\s*\(")


def check_unknown_attributes(source: str, consumable_capacity: bool) -> None:
    """Without list-type attributes upstream declares an attribute value as the unknown
    type, not ``dyn`` (docs/cel.md, "resource.k8s.io/v1 device selectors"): a comprehension
    over one does not compile, and a ``dyn`` result (``dyn(true)``) is refused. The
    selector's own program keeps ``dyn`` (the library cannot run the unknown type), so the
    expression is checked once more with the unknown type; only those two verdicts are
    taken from that check."""
    try:
        checked = compile_device_program(source, consumable_capacity, unknown_attributes=True)
    except CelCompileError as error:
        if "cannot be the range of a comprehension" not in error.message:
            return
        raise CelCompileError(error.message.replace("'any'", "'google.protobuf.Any'"),
                              error.line, error.column) from None
    if checked.result_type == "dyn":
        raise CelCompileError("must evaluate to bool or the unknown type, not dyn")


def refuse_internals(source: str) -> None:
    """Quantity, Semver, URL, NamedFormat, IP and CIDR are messages underneath: refuse
    naming their field, the type of the first four (``kubernetes.Quantity{}``; upstream's
    object types that no type provider knows), or a literal of the others, which
    Kubernetes' opaque types do not have."""
    tokens = tokenize(source)
    for index, token in enumerate(tokens):
        typed = [t.text for t in tokens[index : index + 3]] in (
            ["kubernetes", ".", "Quantity"], ["kubernetes", ".", "Semver"],
            ["kubernetes", ".", "URL"], ["kubernetes", ".", "NamedFormat"])
        # A root name, not a field (x.kubernetes.Quantity; a leading dot is the root scope).
        before = tokens[max(index - 2, 0) : index]
        field = bool(before) and before[-1].text == "." and len(before) == 2 and (
            before[0].kind in ("ident", "string", "number") or before[0].text in ")]}")
        if token.kind == "ident" and typed and not field:
            # cel-go's words: the qualified name at a message literal's brace, else the
            # first name where it stands.
            brace = tokens[index + 3] if index + 3 < len(tokens) else None
            if brace is not None and brace.text == "{":
                root = "." if index and tokens[index - 1].text == "." else ""
                name = root + "".join(t.text for t in tokens[index : index + 3])
                raise CelCompileError.at(
                    f"undeclared reference to '{name}' (in container '')", source, brace.start)
            raise CelCompileError.at("undeclared reference to 'kubernetes' (in container '')",
                                     source, token.start)
        if token.kind == "ident" and token.text in (OPAQUE_FIELD, FORM_FIELD):
            raise CelCompileError.at(f"undeclared reference to '{token.text}'", source,
                                     token.start)
        # net.IP and net.CIDR are types a selector may name (``type(x) == net.IP``), but
        # opaque ones: no message literal (``net.IP{}``), with cel-go's error at the brace.
        after = [t.text for t in tokens[index : index + 4]]
        if after in (["net", ".", "IP", "{"], ["net", ".", "CIDR", "{"]) and not field:
            raise CelCompileError.at(f"'net.{after[2]}' is not a message type", source,
                                     tokens[index + 3].start)


#: Functions whose literal argument Kubernetes validates at compile time (its AST validators
#: for regex, duration and timestamp literals), with a probe that uses the literal.
_LITERAL_PROBES = {"matches": '"".matches({})', "duration": "duration({})",
                   "timestamp": "timestamp({})", "find": '"".find({})',
                   "findAll": '"".findAll({})'}
#: Those upstream checks when it makes the program (regex.go's cel.OptimizeRegex), not
#: with a validator, so its message is the program's, with Go's own text.
_AT_PROGRAM = ("find", "findAll")
#: What may follow the literal: findAll(re, limit); matches(text, re) is the global form.
_LITERAL_ENDS = {"findAll": (")", ",")}


def check_literals(source: str) -> None:
    """A literal regular expression, duration or timestamp that cannot be parsed is a compile
    error, as in Kubernetes, not an error of every evaluation."""
    tokens = tokenize(source)
    for index, token in enumerate(tokens[:-3]):
        if token.kind != "ident" or token.text not in _LITERAL_PROBES:
            continue
        literal = tokens[index + 2]
        if tokens[index + 1].text != "(" or literal.kind != "string" \
                or tokens[index + 3].text not in _LITERAL_ENDS.get(token.text, (")",)):
            continue
        probe = _LITERAL_PROBES[token.text].format(literal.text)
        ok, message = compile_device_program(probe, False).run({})
        if not ok:
            text = (f"program instantiation failed: {message}".replace("Illegal regex: ", "")
                    if token.text in _AT_PROGRAM else f"invalid {token.text} argument: {message}")
            raise CelCompileError.at(text, source, literal.start)

"""The CEL library's messages in cel-go's and the planner's words (cel/_messages.py)."""

from __future__ import annotations

import pytest

from allocation.engine.cel._messages import clean, go_message, library_compile_error


@pytest.mark.parametrize(("library", "cel_go"), [
    ('Key not found in map : "cores"', "no such key: cores"),
    ("Index error: index=3 size=2", "index out of bounds: 3"),
    ("cannot convert string to int", "type conversion error from 'string' to 'int'"),
    ("divide by zero", "division by zero"),
    ("No matching overloads found : size(int)", "no such overload: size"),
    ("No matching overloads found : _+_(int, string)", "no such overload"),
    ("something else", "something else"),
])
def test_run_time_errors_read_as_cel_go_words_them(library, cel_go):
    assert go_message(library) == cel_go


def test_a_status_code_is_not_part_of_the_message():
    assert clean("INVALID_ARGUMENT: no such key [INVALID_ARGUMENT]") == "no such key"


def test_a_compile_error_keeps_its_place_and_an_undeclared_call_goes_first():
    # cel-go reports an undeclared function at its call's "(" before other errors there.
    text = ("ERROR: <input>:1:1: undeclared reference to 'x'\n"
            "ERROR: <input>:1:6: undeclared reference to 'f'\n")
    first = library_compile_error(text)
    at_call = library_compile_error(text, calls_in="x + f(y)")
    assert (first.line, first.column, first.message) == (1, 1, "undeclared reference to 'x'")
    assert (at_call.line, at_call.column, at_call.message) == (1, 6, "undeclared reference to 'f'")


def test_a_message_without_a_place_is_cleaned():
    error = library_compile_error("INVALID_ARGUMENT: bad things")
    assert (error.line, error.message) == (None, "bad things")

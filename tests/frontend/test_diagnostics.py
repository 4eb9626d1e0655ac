"""Rendering of front-end errors: `FILE:LINE:COL: error: MESSAGE`, the line, a caret."""

import pytest

from compiler.frontend.diagnostics import Diagnostic, SourceError, SourceFile, Span, decode_source
from runtime.errors import ExecutionError, FusecError, InputError
from runtime.reference.interpreter import EvaluationError

SOURCE = SourceFile("prog.tdsl", "fn f(x: f32) -> f32 {\n    return x + y\n}\n")


def test_one_character_span_gets_a_caret():
    d = Diagnostic(Span(2, 16, 2, 17), "unknown name 'y'")
    assert d.format(SOURCE) == (
        "prog.tdsl:2:16: error: unknown name 'y'\n"
        "    return x + y\n"
        "               ^"
    )


def test_longer_span_is_underlined_with_tildes():
    d = Diagnostic(Span(2, 12, 2, 17), "bad sum")
    assert d.format(SOURCE).splitlines()[2] == "           ^~~~~"


def test_span_past_the_end_of_the_line_is_clipped():
    d = Diagnostic(Span(2, 12, 2, 40), "clipped")
    assert d.format(SOURCE).splitlines()[2] == "           ^~~~~"


def test_multi_line_span_underlines_to_the_end_of_its_first_line():
    d = Diagnostic(Span(1, 17, 3, 2), "whole function")
    assert d.format(SOURCE).splitlines()[1:] == ["fn f(x: f32) -> f32 {", "                ^~~~~"]


def test_tabs_in_the_line_are_kept_in_the_caret_padding():
    source = SourceFile("t.tdsl", "fn f() -> f32 {\n\treturn z\n}")
    lines = Diagnostic(Span(2, 9, 2, 10), "unknown name 'z'").format(source).splitlines()
    assert lines[1] == "\treturn z"
    assert lines[2] == "\t       ^"


def test_position_past_the_last_line_shows_an_empty_line():
    source = SourceFile("empty.tdsl", "")
    assert Diagnostic(Span(1, 1, 1, 2), "empty").format(source) == "empty.tdsl:1:1: error: empty\n\n^"


def test_error_lists_diagnostics_first_first_and_once():
    later = Diagnostic(Span(2, 16, 2, 17), "second")
    earlier = Diagnostic(Span(1, 4, 1, 5), "first")
    error = SourceError([later, earlier, later], SOURCE)
    assert [d.message for d in error.diagnostics] == ["first", "second"]
    text = error.format()
    assert text.index("prog.tdsl:1:4: error: first") < text.index("prog.tdsl:2:16: error: second")
    assert text.count("second") == 1
    assert str(error) == text


def test_span_head_covers_a_leading_name():
    assert Span(3, 5, 3, 30).head(4) == Span(3, 5, 3, 9)


def test_one_family_of_errors():
    """One `except FusecError` catches program, input and execution errors
    (docs/reference.md, "The Python API")."""
    for error in (SourceError, InputError, ExecutionError, EvaluationError):
        assert issubclass(error, FusecError)
    assert not issubclass(InputError, SourceError) and not issubclass(ExecutionError, InputError)
    assert not issubclass(ExecutionError, ValueError)  # not caught by accident with NumPy's


def test_lines_end_at_newlines_only_as_the_parser_counts_them():
    source = SourceFile("ff.tdsl", "fn f() -> f32 {\x0c return z\n}")
    assert source.line(1) == "fn f() -> f32 {\x0c return z"
    assert SourceFile("crlf.tdsl", "a\r\nb\r\n").line(1) == "a"


def test_utf8_source_decodes():
    assert decode_source("fn é".encode(), "u.tdsl") == "fn é"


def test_non_utf8_source_is_an_error_at_its_first_bad_byte():
    data = "fn f() -> f32 {\n    return é \xff\n}".encode("latin-1").replace(b"\xe9", "é".encode())
    with pytest.raises(SourceError) as info:
        decode_source(data, "bad.tdsl")
    assert info.value.format().splitlines() == [
        "bad.tdsl:2:14: error: the file is not UTF-8 text (invalid start byte: byte 0xff)",
        "    return é \ufffd",
        "             ^",
    ]

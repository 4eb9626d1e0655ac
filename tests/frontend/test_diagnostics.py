"""Rendering of front-end errors: `FILE:LINE:COL: error: MESSAGE`, the line, a caret."""

import pytest

from compiler.frontend.diagnostics import CUT, LINE_WINDOW, Diagnostic, SourceError, SourceFile, Span, decode_source
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


def test_a_long_line_is_cut_to_a_window_around_the_column():
    """A 1 MB line gives a message of a few lines, not of a megabyte (issue 46, item 17):
    at most LINE_WINDOW characters of it, each cut side marked, the caret under its
    character."""
    line = "    return " + " + ".join(["x"] * 250_000) + " + y" + " + x" * 10
    assert len(line) > 1_000_000
    column = line.index("y") + 1
    text = Diagnostic(Span(1, column, 1, column + 1), "unknown name 'y'").format(SourceFile("t.tdsl", line))
    header, shown_line, caret = text.splitlines()
    assert header == f"t.tdsl:1:{column}: error: unknown name 'y'"
    assert len(shown_line) <= LINE_WINDOW + 2 * len(CUT) and shown_line.startswith(CUT)
    assert shown_line[len(caret) - 1] == "y" and caret.strip() == "^"
    assert not shown_line.endswith(CUT)  # the line's end is inside the window: not cut there
    start = Diagnostic(Span(1, 5, 1, 11), "at the start").format(SourceFile("t.tdsl", line)).splitlines()
    assert start[1] == line[:LINE_WINDOW] + CUT and start[2] == "    ^~~~~~"  # `return`


def test_a_window_keeps_tabs_in_the_padding_and_clips_the_underline():
    line = "\t" * 200 + "abc" + "z" * 300
    column = 201 + 1  # the "b"
    lines = Diagnostic(Span(1, column, 1, 1000), "long span").format(SourceFile("t.tdsl", line)).splitlines()
    shown_line, caret = lines[1], lines[2]
    assert shown_line.startswith(CUT + "\t") and shown_line.endswith(CUT)
    assert caret.startswith(" " * len(CUT) + "\t")
    assert shown_line[caret.index("^")] == "b"
    # the underline runs to the window's last character, not past the cut
    assert caret.lstrip(" \t") == "^" + "~" * (len(shown_line) - len(CUT) - caret.index("^") - 1)

"""Error reporting for the front end: source positions and compiler-style messages.

An error in a program is reported as `FILE:LINE:COL: error: MESSAGE`, followed by the source
line (of a long one, a window around the column) and a caret under the column, with no
Python traceback (docs/reference.md, "The `fusec` command"). Every error of a pass may be listed, the first one first.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

from runtime.errors import FusecError


@dataclass(frozen=True, order=True)
class Span:
    """A region of the source, 1-based; `end_column` is one past the last character,
    as Lark reports it, so a one-character token at column 5 has end_column 6."""

    line: int
    column: int
    end_line: int
    end_column: int

    def head(self, length: int) -> Span:
        """The first `length` characters of this span (a name at the start of a node)."""
        return Span(self.line, self.column, self.line, self.column + length)


@dataclass(frozen=True)
class SourceFile:
    path: str
    text: str

    def line(self, number: int) -> str:
        """Line `number` (1-based) without its newline; "" past the end of the file. Lines
        end at "\n" only, as the parser counts them (`splitlines` would also break at form
        feeds and other separators, and show the wrong line)."""
        lines = self.text.split("\n")
        return lines[number - 1].removesuffix("\r") if 1 <= number <= len(lines) else ""


def shown(line: str) -> str:
    """`line` as it is safe to print: each control character but a tab (an escape
    sequence a terminal would obey, a bell) as one U+FFFD, so the caret still lines up."""
    return "".join("\ufffd" if unicodedata.category(ch) == "Cc" and ch != "\t" else ch for ch in line)


#: the most characters of a source line a diagnostic shows: of a longer line, a window
#: of this many around the column, each side that is cut marked by `CUT`
LINE_WINDOW = 120
CUT = "..."


def window(length: int, column: int) -> tuple[int, int]:
    """The characters `[start, stop)` of a line of `length` a diagnostic at `column`
    (0-based; at most `length`, just past the end) shows: all of a short line, else
    `LINE_WINDOW` of them with the column in the middle where the line allows."""
    if length <= LINE_WINDOW:
        return 0, length
    start = min(max(0, column - LINE_WINDOW // 2), length - LINE_WINDOW)
    return start, start + LINE_WINDOW


@dataclass(frozen=True)
class Diagnostic:
    span: Span
    message: str

    def format(self, source: SourceFile) -> str:
        line = source.line(self.span.line)
        column = min(self.span.column - 1, len(line))  # 0-based, at most just past the end
        end = min(self.span.end_column - 1, len(line)) if self.span.end_line == self.span.line else len(line)
        start, stop = window(len(line), column)
        before, after = CUT * (start > 0), CUT * (stop < len(line))
        text = shown(line[start:stop])
        # Keep tabs in the padding so the caret lines up however the terminal renders them.
        pad = " " * len(before) + "".join("\t" if ch == "\t" else " " for ch in text[: column - start])
        underline = "^" + "~" * max(0, min(end, stop) - column - 1)
        header = f"{source.path}:{self.span.line}:{self.span.column}: error: {self.message}"
        return f"{header}\n{before}{text}{after}\n{pad}{underline}"


class SourceError(FusecError):
    """Errors in a program: one or more diagnostics against one source file."""

    def __init__(self, diagnostics: list[Diagnostic], source: SourceFile):
        # First error first; the same message at the same place is reported once.
        unique = {(d.span, d.message): d for d in diagnostics}
        self.diagnostics = sorted(unique.values(), key=lambda d: (d.span, d.message))
        self.source = source
        super().__init__(self.format())

    def format(self) -> str:
        return "\n".join(d.format(self.source) for d in self.diagnostics)

    def __reduce__(self):
        # rebuilt from what it was made of (a worker process sends it back pickled)
        return type(self), (self.diagnostics, self.source)


def decode_source(data: bytes, path: str) -> str:
    """The text of a source file read as bytes; a file that is not UTF-8 is an error at
    its first bad byte, shown in the line it breaks."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        before = data[: error.start]
        line = before.count(b"\n") + 1
        column = len(before[before.rfind(b"\n") + 1 :].decode("utf-8")) + 1
        message = f"the file is not UTF-8 text ({error.reason}: byte 0x{data[error.start]:02x})"
        source = SourceFile(path, data.decode("utf-8", "replace"))
        raise SourceError([Diagnostic(Span(line, column, line, column + 1), message)], source) from None

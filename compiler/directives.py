"""What a program's comments say of the inputs drawn for it: `# dims:` and `# draw:` lines
(docs/reference.md, "Drawn inputs").

    # dims: N=8, H=56, W=56
    # draw: var1, var2 ~ uniform(0.5, 1.5)
    # draw: ids ~ integers(0, V)

They are comments to the language (the program means the same without them) and
settings to a run that draws its inputs: the sizes a size name takes where no input
and no `--dims` binds it, and the distribution of a parameter drawn at random. `fusec`
plans for the sizes it draws at (`compiler.api.Program.plan_for_inputs`). A line that
starts with `# dims:` or `# draw:` is read as one; a mistake in it is an error of the
program, at its line.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from compiler.frontend.diagnostics import Diagnostic, SourceError, SourceFile, Span
from dialects.sizes import MAX_SIZE, Size
from dialects.tensor_types import NUMPY_DTYPES, dtype_kind, dtype_of, shape_of
from runtime.inputs import DISTRIBUTIONS, Draw, InputDefaults, Param

_DIRECTIVE = re.compile(r"[ \t]*#[ \t]*(dims|draw)[ \t]*:(.*)")
#: a whole number written in ASCII digits (a size, a seed)
WHOLE_NUMBER = re.compile(r"[0-9]+")
_NUMBER = r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"
_BOUND = rf"{_NUMBER}|[^\W\d]\w*"
_DRAW = re.compile(rf"\s*(.+?)\s*~\s*(\w+)\s*\(\s*({_BOUND})\s*,\s*({_BOUND})\s*\)\s*")


def parse_sizes(text: str) -> dict[str, int]:
    """`NAME=SIZE` pairs separated by commas (`N=1024, D=768`), as `--dims` and a
    `# dims:` line give them; `ValueError` saying what is wrong."""
    dims: dict[str, int] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, value = (part.strip() for part in item.partition("="))
        if not sep or not name.isidentifier() or not WHOLE_NUMBER.fullmatch(value):
            raise ValueError(f"expected NAME=SIZE pairs like N=1024,D=768, got {item!r}")
        # length first: int() refuses more than 4300 digits
        if len(value) > len(str(MAX_SIZE)) or int(value) > MAX_SIZE:
            raise ValueError(f"size {name} is too large (at most {MAX_SIZE})")
        if name in dims:
            raise ValueError(f"size {name} is given twice ({name}={dims[name]} and {name}={value})")
        dims[name] = int(value)
    return dims


def params_of(function: func.FuncOp) -> list[Param]:
    """A function's parameters as the inputs drawn for it see them."""
    return [
        Param(arg.name_hint or f"arg{i}", dtype_of(arg.type), shape_of(arg.type))
        for i, arg in enumerate(function.body.block.args)
    ]


def read_directives(text: str, path: str, module: ModuleOp) -> InputDefaults:
    """The `# dims:` and `# draw:` lines of a program's source, checked against its
    functions' parameters: a size or a parameter that no function has, a distribution
    that does not draw a parameter's dtype, is a `SourceError` at its line."""
    functions = [params_of(op) for op in module.body.block.ops if isinstance(op, func.FuncOp)]
    source = SourceFile(path, text)
    reader = _Reader(source, functions)
    diagnostics: list[Diagnostic] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if match := _DIRECTIVE.fullmatch(line.removesuffix("\r")):
            try:
                reader.read(match.group(1), match.group(2), number, match.start(2) + 1)
            except SourceError as error:  # the line is left out; the others are still read
                diagnostics += error.diagnostics
    if diagnostics:
        raise SourceError(diagnostics, source)
    return InputDefaults(reader.dims, reader.draws)


class _Reader:
    def __init__(self, source: SourceFile, functions: Sequence[list[Param]]):
        self.source = source
        self.functions = functions
        self.dims: dict[str, int] = {}
        self.draws: dict[str, Draw] = {}

    def error(self, line: int, column: int, length: int, message: str) -> SourceError:
        return SourceError([Diagnostic(Span(line, column, line, column + max(1, length)), message)], self.source)

    def find(self, body: str, word: str) -> int:
        """The column offset of `word` in `body` (its first whole-word occurrence)."""
        found = re.search(rf"(?<!\w){re.escape(word)}(?!\w)", body)
        return found.start() if found else 0

    def read(self, kind: str, body: str, line: int, column: int) -> None:
        if kind == "dims":
            self.read_dims(body, line, column)
        else:
            self.read_draw(body, line, column)

    def read_dims(self, body: str, line: int, column: int) -> None:
        try:
            dims = parse_sizes(body)
        except ValueError as error:
            raise self.error(line, column, len(body), f"# dims: {error}") from None
        known = {n for params in self.functions for p in params for d in p.shape if isinstance(d, str) for n in Size.of(d).names}
        for name in dims:
            at = column + self.find(body, name)
            if name not in known:
                sizes = f"its sizes are {', '.join(sorted(known))}" if known else "it has no symbolic sizes"
                raise self.error(line, at, len(name), f"# dims: no function of the program has a size {name} ({sizes})")
            if name in self.dims:
                raise self.error(line, at, len(name), f"# dims: size {name} is given twice")
        self.dims.update(dims)

    def read_draw(self, body: str, line: int, column: int) -> None:
        match = _DRAW.fullmatch(body)
        if match is None:
            raise self.error(
                line, column, len(body), "# draw: expected NAME, ... ~ DISTRIBUTION(A, B), such as var ~ uniform(0.5, 1.5)"
            )
        names, distribution, *bounds = match.groups()
        at = column + match.start(2)
        if distribution not in DISTRIBUTIONS:
            raise self.error(
                line, at, len(distribution),
                f"# draw: unknown distribution {distribution!r} (distributions: {', '.join(DISTRIBUTIONS)})",
            )  # fmt: skip
        first, second = (self.bound(b, line, column + match.start(3 + i), distribution) for i, b in enumerate(bounds))
        numbers = [b for b in (first, second) if not isinstance(b, str)]
        if len(numbers) == 2 and (why := DISTRIBUTIONS[distribution].refuses(*numbers)) is not None:
            raise self.error(line, at, len(distribution), f"# draw: {distribution}({first}, {second}): {why}")
        draw = Draw(distribution, first, second)
        for name in (n.strip() for n in names.split(",")):
            self.draw_param(name, draw, line, column + self.find(body, name))

    def bound(self, text: str, line: int, column: int, distribution: str) -> int | float | str:
        if text[0].isalpha() or text[0] == "_":
            return text
        integral = re.fullmatch(r"[-+]?[0-9]+", text) is not None
        if DISTRIBUTIONS[distribution].kinds == "i" and not integral:
            raise self.error(line, column, len(text), f"# draw: {distribution} takes whole numbers, not {text}")
        value = int(text) if integral else float(text)
        if not math.isfinite(value):
            raise self.error(line, column, len(text), f"# draw: {text} is not a finite number")
        return value

    def draw_param(self, name: str, draw: Draw, line: int, column: int) -> None:
        if not name.isidentifier():
            raise self.error(line, column, len(name), f"# draw: expected a parameter name, got {name!r}")
        having = [params for params in self.functions if any(p.name == name for p in params)]
        if not having:
            raise self.error(line, column, len(name), f"# draw: no function of the program has a parameter {name}")
        if name in self.draws:
            raise self.error(line, column, len(name), f"# draw: parameter {name} is given twice")
        distribution = DISTRIBUTIONS[draw.distribution]
        for params in having:
            param = next(p for p in params if p.name == name)
            if dtype_kind(NUMPY_DTYPES[param.dtype]) not in distribution.kinds:
                raise self.error(
                    line, column, len(name),
                    f"# draw: {draw.distribution} does not draw {param.dtype} values ({name}: {param.describe()})",
                )  # fmt: skip
            sizes = {n for p in params for d in p.shape if isinstance(d, str) for n in Size.of(d).names}
            for bound in (draw.first, draw.second):
                if isinstance(bound, str) and bound not in sizes:
                    raise self.error(
                        line, column, len(name),
                        f"# draw: {bound} is no size of the parameters of a function taking {name}",
                    )  # fmt: skip
        self.draws[name] = draw

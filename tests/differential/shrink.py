"""Shrink a failing generated program to a small one that fails the same way.

    python tests/differential/shrink.py SEED [--fused | --unfused] [--statements N]

runs the seed's program on the reference and on the CPU backend, and if they disagree (or the
backend raises), greedily applies edits that keep the program well-typed and the failure
alive: return one result or an earlier value, delete statements and unused parameters,
replace an expression by one of its operands, drop optional arguments (keepdims, eps, axis),
and shrink each size name to 2 or 3. It prints the smallest program found and its inputs.
Each try compiles with Numba, so a shrink takes a few minutes (less with a warm kernel cache).
"""

from __future__ import annotations

import re
import sys
import traceback
from collections.abc import Callable
from pathlib import Path

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import fusec
from compiler.frontend import ast
from compiler.frontend.check import check
from compiler.frontend.diagnostics import SourceError, SourceFile
from compiler.frontend.parse import parse
from tests.differential.generator import MAX_STATEMENTS, NP_DTYPES, generate
from compiler.tolerance import computed_dtypes
from tests.differential.test_differential import TOLERANCES

_RESULT_ERRORS = re.compile(r"^(result \d+ has type|function '\w+' declares \d+ results?)")


def _offset(text: str, line: int, column: int) -> int:
    lines = text.split("\n")
    return sum(len(line_) + 1 for line_ in lines[: line - 1]) + column - 1


def _span_text(text: str, span) -> tuple[int, int]:
    return _offset(text, span.line, span.column), _offset(text, span.end_line, span.end_column)


def retyped(text: str) -> str | None:
    """`text` if it checks; else, where only its declared results are wrong, `text` with the
    result types the checker infers; else None."""
    try:
        module = parse(text, "<shrink>")
    except SourceError:
        return None
    try:
        check(module, SourceFile("<shrink>", text))
        return text
    except SourceError as error:
        if not all(_RESULT_ERRORS.match(d.message) for d in error.diagnostics):
            return None
    (fn,) = module.functions
    ret = fn.body[-1]
    types = []
    for v in ret.values:
        if v.ty is None or not hasattr(v.ty, "dtype"):
            return None
        types.append(str(v.ty))
    header = types[0] if len(types) == 1 else "(" + ", ".join(types) + ")"
    new = re.sub(r"->\s*(\([^{]*\)|[^{]*?)\s*\{", lambda m: f"-> {header} {{", text, count=1)
    try:
        check(parse(new, "<shrink>"), SourceFile("<shrink>", new))
    except SourceError:
        return None
    return new


def _walk(e: ast.Expr):
    yield e
    children = []
    if isinstance(e, ast.Unary):
        children = [e.operand]
    elif isinstance(e, ast.Binary):
        children = [e.lhs, e.rhs]
    elif isinstance(e, ast.Call):
        children = list(e.args)
    for c in children:
        yield from _walk(c)


def candidates(text: str):
    """Smaller variants of `text` (not all well-typed), most promising first."""
    module = parse(text, "<shrink>")
    (fn,) = module.functions
    ret = fn.body[-1]
    lines = text.split("\n")
    # One result, or an earlier value returned instead.
    r0, r1 = _span_text(text, ret.span)
    if len(ret.values) > 1:
        for v in ret.values:
            a, b = _span_text(text, v.span)
            yield text[:r0] + "return " + text[a:b] + text[r1:]
    names = [s.name for s in fn.body if isinstance(s, ast.Assign)]
    for name in dict.fromkeys(reversed(names)):
        yield text[:r0] + "return " + name + text[r1:]
    # Parentheses around a name; a copy `a = b` propagated.
    yield re.sub(r"(?<![\w)])\((\w+)\)", r"\1", text)
    for s in fn.body[:-1]:
        if isinstance(s.value, ast.Name):
            i = s.span.line - 1
            rest = "\n".join(lines[i + 1 :])
            yield "\n".join(lines[:i] + [re.sub(rf"\b{s.name}\b", s.value.name, rest)])
    # Delete a statement.
    for s in fn.body[:-1]:
        i = s.span.line - 1
        yield "\n".join(lines[:i] + lines[i + 1 :])
    # Delete a parameter.
    for p in fn.params:
        if not re.search(rf"\b{p.name}\b", text[_offset(text, fn.body[0].span.line, 1) :]):
            a, b = _span_text(text, p.span)
            rest = text[b:]
            head = text[:a]
            if rest.startswith(", "):
                rest = rest[2:]
            elif head.endswith(", "):
                head = head[:-2]
            yield head + rest
    # Replace an expression by one of its operands; drop optional keyword arguments.
    for s in fn.body:
        for root in [s.value] if isinstance(s, ast.Assign) else s.values:
            for e in _walk(root):
                a, b = _span_text(text, e.span)
                kids = [e.operand] if isinstance(e, ast.Unary) else [e.lhs, e.rhs] if isinstance(e, ast.Binary) else []
                if isinstance(e, ast.Call):
                    kids = [x for x in e.args if not isinstance(x, ast.TupleLit)]
                for k in kids:
                    ka, kb = _span_text(text, k.span)
                    yield text[:a] + text[ka:kb] + text[b:]
                    yield text[:a] + "(" + text[ka:kb] + ")" + text[b:]
                if isinstance(e, ast.Call):
                    for kw in e.kwargs:
                        ka, kb = _span_text(text, kw.span)
                        head = text[:ka].rstrip()
                        if head.endswith(","):
                            yield head[:-1] + text[kb:]


def _sizes_of(text: str) -> list[str]:
    fn = parse(text, "<shrink>").functions[0]
    return list(dict.fromkeys(d for p in fn.params for d in p.type.dims if isinstance(d, str)))


def inputs_for(text: str, sizes: dict[str, int], given: dict[str, np.ndarray], seed: int) -> dict[str, np.ndarray]:
    """The given arrays where they still fit the signature, fresh ones (seeded) elsewhere."""
    program = fusec.compile(text, target="numpy")
    rng = np.random.default_rng(seed)
    out = {}
    for name, dtype, shape in program.signature("main"):
        concrete = tuple(sizes[d] if isinstance(d, str) else d for d in shape)
        old = given.get(name)
        if old is not None and old.shape == concrete:
            out[name] = old
        elif dtype in ("f32", "f64"):
            out[name] = rng.uniform(-2, 2, size=concrete).astype(NP_DTYPES[dtype])
        elif dtype in ("i32", "i64"):
            out[name] = rng.integers(-8, 8, size=concrete).astype(NP_DTYPES[dtype])
        else:
            out[name] = rng.random(size=concrete) < 0.5
    return out


def failure(text: str, inputs: dict[str, np.ndarray], fuse: bool) -> str | None:
    """How the CPU backend fails on this program (None: it agrees with the reference, or
    the program is no longer a valid test)."""
    try:
        reference = fusec.compile(text, target="numpy")
        want = reference.run("main", list(inputs.values()))
        if not all(w.dtype == np.bool_ or np.all(np.isfinite(w)) for w in want):
            return None
    except Exception:
        return None
    try:
        got = fusec.compile(text, target="cpu", fuse=fuse).run("main", list(inputs.values()))
    except Exception as error:
        return f"crash: {type(error).__name__}"
    for g, w, computed in zip(got, want, computed_dtypes(reference.graph, "main")):
        g = np.asarray(g)
        if g.dtype != w.dtype or g.shape != w.shape:
            return "mismatch: dtype or shape"
        rtol, atol = TOLERANCES[computed] if computed is not None else (0, 0)
        if not np.allclose(g, w, rtol=rtol, atol=atol, equal_nan=False):
            return "mismatch: values"
    return None


def shrink(text: str, inputs: dict[str, np.ndarray], sizes: dict[str, int], test: Callable, log=print):
    """Greedy shrinking of (text, inputs, sizes) while `test(text, inputs)` gives the same failure."""
    target = test(text, inputs)
    assert target is not None, "the program does not fail"
    log(f"failure: {target}")
    seen = set()
    progress = True
    while progress:
        progress = False
        for cand in candidates(text):
            if cand in seen or len(cand) >= len(text):
                continue
            seen.add(cand)
            cand = retyped(cand)
            if cand is None:
                continue
            try:
                cand_inputs = inputs_for(cand, sizes, inputs, 0)
            except Exception:
                continue
            if test(cand, cand_inputs) == target:
                text, inputs = cand, cand_inputs
                log(f"-- {len(text)} chars")
                progress = True
                break
        if not progress:  # smaller sizes
            for name in _sizes_of(text):
                for small in (2, 3):
                    if sizes.get(name, 0) > small:
                        trial = dict(sizes, **{name: small})
                        trial_inputs = inputs_for(text, trial, {}, 1)
                        if test(text, trial_inputs) == target:
                            sizes, inputs = trial, trial_inputs
                            progress = True
                            log(f"-- {name}={small}")
                            break
                if progress:
                    break
    return text, inputs, sizes, target


def main(argv: list[str]) -> int:
    seed = int(argv[0])
    modes = [f for f, flag in ((True, "--fused"), (False, "--unfused")) if flag in argv] or [True, False]
    statements = int(argv[argv.index("--statements") + 1]) if "--statements" in argv else MAX_STATEMENTS
    program = generate(seed, statements)
    for fuse in modes:
        test = lambda t, i, fuse=fuse: failure(t, i, fuse)
        calls = [(program.sizes, program.inputs), program.second]
        failing = [(sizes, inputs) for sizes, inputs in calls if test(program.source, inputs) is not None]
        if not failing:
            print(f"seed {seed}: fuse={fuse} agrees with the reference")
            continue
        sizes, inputs = failing[0]
        try:
            text, inputs, sizes, kind = shrink(program.source, dict(inputs), dict(sizes), test)
        except Exception:
            traceback.print_exc()
            return 2
        sizes = {k: v for k, v in sizes.items() if k in _sizes_of(text)}
        print(f"\n# seed {seed}, fuse={fuse}: {kind}; sizes {sizes}")
        print(text)
        for name, array in inputs.items():
            print(f"{name} = np.array({array.tolist()!r}, dtype=np.{array.dtype})")
        want = fusec.compile(text, target="numpy").run("main", list(inputs.values()))
        try:
            got = fusec.compile(text, target="cpu", fuse=fuse).run("main", list(inputs.values()))
            for i, (g, w) in enumerate(zip(got, want)):
                print(f"result {i}: reference {w!r}\n          cpu       {g!r}")
        except Exception:
            print(traceback.format_exc(limit=-3))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

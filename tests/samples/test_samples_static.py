"""Checks of the sample files that need no compiler: each opens with a comment, has an entry
``main``, and ``main``'s declared parameter and result types agree with the inputs drawn by
``reference.py`` and the shapes its reference returns (binding size names consistently).

The header reader below is deliberately tiny (one regex over ``fn NAME(...) -> T {``); it is a
cross-check of the test table, not a parser of the language.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

from tests.samples.reference import SAMPLES, SAMPLES_DIR

_FN = re.compile(r"^fn\s+(\w+)\s*\((.*?)\)\s*->\s*(.+?)\s*\{\s*$", re.M | re.S)
_TYPE = re.compile(r"(f16|f32|f64|i32|i64|bool)\s*(?:\[([^\]]*)\])?")
_DTYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64,
           "i32": np.int32, "i64": np.int64, "bool": np.bool_}


def _parse_type(text: str):
    m = _TYPE.fullmatch(text.strip())
    assert m, f"cannot read type {text!r}"
    dims = [] if m.group(2) is None else [d.strip() for d in m.group(2).split(",")]
    return m.group(1), [int(d) if d.isdigit() else d for d in dims]


def _functions(src: str):
    fns = {}
    for m in _FN.finditer(src):
        params = []
        for p in filter(None, (s.strip() for s in re.split(r",\s*(?![^\[]*\])", m.group(2)))):
            pname, ptype = p.split(":", 1)
            params.append((pname.strip(), *_parse_type(ptype)))
        res = m.group(3).strip()
        if res.startswith("("):
            res = res[1:-1]
        results = [_parse_type(r) for r in re.split(r",\s*(?![^\[]*\])", res)]
        fns[m.group(1)] = (params, results)
    return fns


def _bind(binding: dict, dims, shape, what: str):
    assert len(dims) == len(shape), f"{what}: declared {dims}, got shape {shape}"
    for d, n in zip(dims, shape):
        if isinstance(d, int):
            assert d == n, f"{what}: declared {dims}, got shape {shape}"
        else:
            assert binding.setdefault(d, n) == n, f"{what}: {d} is {binding[d]} and {n}"


def test_every_sample_is_in_the_table():
    on_disk = {p.stem for p in SAMPLES_DIR.glob("*.tdsl")}
    assert on_disk == set(SAMPLES)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_main_header_matches_inputs_and_reference(name):
    case = SAMPLES[name]
    src = case.path.read_text()
    assert src.startswith("#"), f"{name}: should open with a comment saying what it is"
    fns = _functions(src)
    assert "main" in fns, f"{name}: no entry function main (found {list(fns)})"
    params, results = fns["main"]

    inputs = case.make_inputs(np.random.default_rng(0))
    assert [p[0] for p in params] == list(inputs), \
        f"{name}: main's parameters {[p[0] for p in params]} vs inputs {list(inputs)}"
    binding: dict[str, int] = {}
    for pname, dtype, dims in params:
        assert inputs[pname].dtype == _DTYPES[dtype], f"{name}: {pname}"
        _bind(binding, dims, inputs[pname].shape, f"{name}: {pname}")

    want = case.reference(**inputs)
    assert len(want) == len(results), f"{name}: {len(results)} declared results"
    for i, ((dtype, dims), w) in enumerate(zip(results, want)):
        assert np.dtype(_DTYPES[dtype]) == np.dtype(case.out_dtype)
        _bind(binding, dims, w.shape, f"{name}: result {i}")


def test_some_sample_calls_a_user_function():
    calls = 0
    for case in SAMPLES.values():
        src = case.path.read_text()
        helpers = set(_functions(src)) - {"main"}
        calls += sum(len(re.findall(rf"\b{h}\s*\(", src)) - 1 for h in helpers)
    assert calls > 0

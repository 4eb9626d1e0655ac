"""Differential tests on random programs (issue 4, item 7).

Each seed names one random, well-typed program (`generator.py`) with its inputs. The program
runs on the NumPy reference interpreter (`target="numpy"`), which is the oracle, and on the
CPU backend twice: fused (`target="cpu"`) and one kernel per operation (`fuse=False`); the
first `FUSEC_DIFF_CUDA_COUNT` seeds (default 10) run on `target="cuda"` the same two ways
(Numba's CUDA simulator in CI; `FUSEC_TEST_GPU=1` on a GPU). Each
compiled program is called twice: with the seed's sizes, and with other sizes that differ from
one another (one compile serves every shape; this catches one size name used for another).
Every result must have the reference's dtype and shape, and values within the tolerances of
the dtype it was computed in (`compiler.tolerance.computed_dtypes`, as `fusec --check`'s):

    bf16:       rtol 2**-5, atol 2**-5   (about 4 ulps: the reference rounds every op's
                                          result to bf16, a fused kernel only what it stores)
    f32:        rtol 2e-4,  atol 2e-5    (np.testing.assert_allclose)
    f64:        rtol 1e-9,  atol 1e-10   (f32 arithmetic in an f64 program would show)
    ints, bool: exactly equal

The generator keeps programs well-conditioned (bounded values, comparisons only of exactly
computed values, denominators away from zero), so backend rounding stays far inside these:
`test_generated_programs_are_well_conditioned` checks that f32 programs give the same
numbers as their f64 versions within half of the f32 tolerances.

Seeds: `FUSEC_DIFF_SEED` (the first one, default below) and `FUSEC_DIFF_COUNT` (how many,
default 50, which CI runs). Programs drawn with integer powers of every form (the
generator's `integer_powers` option; an exponent may be negative, or a gather index out of
range, and then every target must raise NumPy's error as the reference does) have their own count,
`FUSEC_DIFF_POWER_COUNT` (default 20). `FUSEC_DIFF_STATEMENTS` (default 3) bounds the statements of a
program: CI's default keeps a cold run (every kernel compiled by Numba) to a few minutes on
two cores; a re-run with the kernel cache warm takes seconds. A long campaign:

    FUSEC_DIFF_COUNT=5000 pytest tests/differential -x -q
    FUSEC_DIFF_SEED=100000 FUSEC_DIFF_COUNT=2000 FUSEC_DIFF_STATEMENTS=7 pytest tests/differential -q

A failure prints the seed, the whole program, its sizes and a command that reruns it alone;
`python tests/differential/generator.py SEED` prints the program of a seed, and
`python tests/differential/shrink.py SEED` shrinks a failing one to a minimal program.
"""

from __future__ import annotations

import functools
import os
import random
import re
import traceback

import numpy as np
import pytest

import fusec
from compiler.frontend.builtins import BUILTINS
from compiler.tolerance import Precision, computed_dtypes
from dialects.elementwise import OPS
from tests.campaign import cases

from .generator import MAX_STATEMENTS, NP_DTYPES, OPERATOR_SPELLINGS, GeneratedProgram
from .generator import generate as generate_program

SEED = int(os.environ.get("FUSEC_DIFF_SEED", "7000"))
COUNT = cases(50, 2000, "FUSEC_DIFF_COUNT")
SEEDS = range(SEED, SEED + COUNT)
FRONT_END_SEEDS = range(SEED, SEED + max(500, COUNT))
STATEMENTS = int(os.environ.get("FUSEC_DIFF_STATEMENTS", str(MAX_STATEMENTS)))
#: how many of the seeds also run on `--target cuda` (the simulator in CI is slow: a
#: share; `FUSEC_TEST_GPU=1 FUSEC_DIFF_CUDA_COUNT=400` is a campaign on a GPU)
CUDA_SEEDS = SEEDS[: cases(10, 100, "FUSEC_DIFF_CUDA_COUNT")]




def generate(seed: int) -> GeneratedProgram:
    return generate_program(seed, STATEMENTS)


TOLERANCES = {  # dtype -> (rtol, atol)
    np.dtype(NP_DTYPES["bf16"]): (2**-5, 2**-5),
    np.dtype(np.float32): (2e-4, 2e-5),
    np.dtype(np.float64): (1e-9, 1e-10),
}


def describe(program: GeneratedProgram, what: str, sizes: dict[str, int] | None = None) -> str:
    sizes = program.sizes if sizes is None else sizes
    call = "first" if sizes is program.sizes else "second"
    inputs = program.inputs if sizes is program.sizes else program.second[1]
    return (
        f"{what}\n"
        f"seed {program.seed} (rerun alone: FUSEC_DIFF_SEED={program.seed} FUSEC_DIFF_COUNT=1 "
        f"FUSEC_DIFF_STATEMENTS={STATEMENTS} pytest tests/differential/test_differential.py)\n"
        f"{call} call, sizes: {', '.join(f'{k}={v}' for k, v in sizes.items())}\n"
        f"inputs: {', '.join(f'{n}: {a.dtype}{list(a.shape)}' for n, a in inputs.items())}\n"
        f"program:\n{program.source}"
    )


def compare(
    program: GeneratedProgram, got, want, computed: tuple[Precision, ...], what: str, sizes: dict[str, int] | None = None
) -> None:
    """Each result of `got` against the reference's, with the tolerances of the dtype it
    was computed in (`computed`, from `computed_dtypes`), exactly where that is None."""
    assert isinstance(got, tuple) and len(got) == len(want), describe(
        program, f"{what}: {len(want)} results expected, got {got!r:.200}", sizes
    )
    for i, (g, w, precision) in enumerate(zip(got, want, computed, strict=True)):
        g = np.asarray(g)
        label = f"{what}: result {i} ({w.dtype}{list(w.shape)})"
        assert g.dtype == w.dtype and g.shape == w.shape, describe(
            program, f"{label}: got {g.dtype}{list(g.shape)}", sizes
        )
        if precision is not None:
            rtol, atol = TOLERANCES[precision]
            try:
                # in float64 (exact): NumPy's assert_allclose takes no bfloat16
                np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol, atol=atol, err_msg=label)
            except AssertionError as error:
                raise AssertionError(describe(program, str(error), sizes)) from None
        else:
            assert np.array_equal(g, w), describe(program, f"{label}: differs\n got {g}\nwant {w}", sizes)


@functools.lru_cache(maxsize=4)
def reference(seed: int) -> tuple[GeneratedProgram, list[tuple[np.ndarray, ...]], tuple[Precision, ...]]:
    """The program of `seed`, the reference's results of each of its calls and the dtype
    each result is computed in."""
    program = generate(seed)
    compiled = fusec.compile(program.source, target="numpy")
    wants = [compiled.run(program.entry, args) for _, args in program.bindings()]
    return program, wants, computed_dtypes(compiled.graph, program.entry)


@pytest.mark.parametrize("fuse", [True, False], ids=["fused", "unfused"])
@pytest.mark.parametrize("seed", SEEDS)
def test_cpu_matches_reference(seed: int, fuse: bool, monkeypatch):
    """Two calls of one compiled program (the second with other, all different sizes).
    The sizes are small, so kernels run their serial variants; an odd seed's run every
    kernel's parallel variant instead (``runtime/cpu/threads.py``)."""
    if seed % 2:
        monkeypatch.setenv("FUSEC_PARALLEL_MIN_WORK", "0")
    check_target(seed, "cpu", fuse)


@pytest.mark.parametrize("fuse", [True, False], ids=["fused", "unfused"])
@pytest.mark.parametrize("seed", CUDA_SEEDS)
def test_cuda_matches_reference(seed: int, fuse: bool):
    check_target(seed, "cuda", fuse)


def check_target(seed: int, target: str, fuse: bool) -> None:
    program, wants, computed = reference(seed)
    what = f"target {target}, fuse={fuse}"
    compiled = None
    for (sizes, args), want in zip(program.bindings(), wants):
        try:
            compiled = compiled or fusec.compile(program.source, target=target, fuse=fuse)
            got = compiled.run(program.entry, args)
        except Exception:  # a crash is a failure of this program: say which one
            pytest.fail(describe(program, f"{what} raised:\n{traceback.format_exc()}", sizes), pytrace=False)
        compare(program, got, want, computed, what, sizes)


#: seeds of programs drawn with `integer_powers` (generator.py): integer `**` and `pow` of
#: every form, exponents now and then negative, gather indices now and then out of range
POWER_SEEDS = range(SEED, SEED + cases(20, 1000, "FUSEC_DIFF_POWER_COUNT"))
POWER_CUDA_SEEDS = POWER_SEEDS[: cases(4, 50, "FUSEC_DIFF_CUDA_COUNT")]
#: the run-time errors those programs may meet, as NumPy's and the compiled targets' words say them
RUN_ERRORS = re.compile("negative integer powers are not allowed|out of range", re.IGNORECASE)


@pytest.mark.parametrize("fuse", [True, False], ids=["fused", "unfused"])
@pytest.mark.parametrize(
    "seed, target", [(s, "cpu") for s in POWER_SEEDS] + [(s, "cuda") for s in POWER_CUDA_SEEDS]
)
def test_integer_powers_match_reference(seed: int, target: str, fuse: bool, monkeypatch):
    """A program with integer powers gives the reference's results, or, where an
    exponent is negative or an index out of range, NumPy's error (an ExecutionError) on
    every target alike, wherever the value that fails goes (docs/reference.md, "Numerics":
    every value is checked)."""
    if seed % 2:
        monkeypatch.setenv("FUSEC_PARALLEL_MIN_WORK", "0")
    program = generate_program(seed, STATEMENTS, integer_powers=True)
    what = f"target {target}, fuse={fuse}, integer powers"
    reference_program = fusec.compile(program.source, target="numpy")
    compiled = None
    for sizes, args in program.bindings():
        try:
            want = reference_program.run(program.entry, args)
        except fusec.ExecutionError as error:
            assert RUN_ERRORS.search(str(error)), describe(program, f"reference raised {error}", sizes)
            want = None
        try:
            compiled = compiled or fusec.compile(program.source, target=target, fuse=fuse)
            got = compiled.run(program.entry, args)
        except fusec.ExecutionError as error:
            assert want is None and RUN_ERRORS.search(str(error)), describe(program, f"{what} raised {error}", sizes)
            continue
        except Exception:  # noqa: BLE001  (a crash fails this program: the message says which)
            pytest.fail(describe(program, f"{what} raised:\n{traceback.format_exc()}", sizes), pytrace=False)
        assert want is not None, describe(program, f"{what}: no error where NumPy raises one", sizes)
        compare(program, got, want, computed_dtypes(reference_program.graph, program.entry), what, sizes)


def test_front_end_accepts_every_generated_program():
    """No Numba: each program checks, and the reference gives results of the declared types."""
    failures = []
    for seed in FRONT_END_SEEDS:
        program = generate(seed)
        try:
            compiled = fusec.compile(program.source, target="numpy")
            assert [name for name, _, _ in compiled.signature(program.entry)] == list(program.inputs)
            for sizes, args in program.bindings():
                results = compiled.run(program.entry, args)
                assert len(results) == len(program.results)
                for r, (dtype, _), shape in zip(results, program.results, program.result_shapes(sizes)):
                    assert r.dtype == NP_DTYPES[dtype] and r.shape == shape, (sizes, r.dtype, r.shape)
                    assert r.dtype == np.bool_ or np.all(np.isfinite(r)), "a result is not finite"
        except Exception:
            failures.append(describe(program, traceback.format_exc(limit=3)))
            if len(failures) >= 3:
                break
    assert not failures, "\n\n".join(failures)


def test_generated_programs_are_well_conditioned():
    """An f32 program's reference results are within half the f32 tolerances of its f64
    version's: rounding alone cannot make a backend fail the comparison."""
    rtol, atol = TOLERANCES[np.dtype(np.float32)]
    checked = 0
    for seed in range(SEED, SEED + 300):
        program = generate(seed)
        if not re.search(r"\bf32\b", program.source):
            continue
        checked += 1
        narrow = fusec.compile(program.source, target="numpy")
        wide = fusec.compile(re.sub(r"\bf32\b", "f64", program.source), target="numpy")
        for sizes, args in program.bindings():
            f32 = narrow.run(program.entry, args)
            f64 = wide.run(program.entry, [a.astype(np.float64) if a.dtype == np.float32 else a for a in args])
            for i, (a, b) in enumerate(zip(f32, f64)):
                message = describe(program, f"result {i}: f32 vs f64", sizes)
                if a.dtype == np.float32:
                    np.testing.assert_allclose(a, b, rtol=rtol / 2, atol=atol / 2, err_msg=message)
                else:
                    assert np.array_equal(a, b), message
    assert checked > 200


def test_generator_is_deterministic():
    """A seed names one program and its inputs, whatever the global random state."""
    for seed in (0, 1, 17, SEED, 123456789):
        random.seed(seed + 1)
        np.random.seed(seed % 1000)
        a = generate(seed)
        random.seed(99)
        np.random.seed(99)
        b = generate(seed)
        assert a.source == b.source and a.results == b.results
        for (sizes_a, args_a), (sizes_b, args_b) in zip(a.bindings(), b.bindings()):
            assert sizes_a == sizes_b and len(args_a) == len(args_b)
            for x, y in zip(args_a, args_b):
                assert x.dtype == y.dtype and np.array_equal(x, y)
    sources = {generate(seed).source for seed in range(40)}
    assert len(sources) == 40, "different seeds should give different programs"


def test_generator_draws_every_op():
    """Every builtin and every elementwise op appears (by name, or spelt as its operator)
    in a program of the first few hundred seeds: a new one that the generator does not
    draw fails here (generator.py's docstring says how to add one)."""
    names = set(BUILTINS) | {op.name for op in OPS}
    unspelt = sorted(op.name for op in OPS if not op.builtin and op.name not in OPERATOR_SPELLINGS)
    assert not unspelt, f"operators without a spelling in generator.OPERATOR_SPELLINGS: {unspelt}"
    patterns = {name: re.compile("|".join([rf"\b{name}\(", OPERATOR_SPELLINGS.get(name, "(?!)")]), re.M) for name in names}
    unseen = set(names)
    for seed in range(SEED, SEED + 500):
        source = generate(seed).source
        unseen -= {name for name in unseen if patterns[name].search(source)}
        if not unseen:
            break
    assert not unseen, f"no program of seeds {SEED}..{SEED + 499} draws {sorted(unseen)}"


def test_failure_message_names_the_seed_and_program():
    program = generate(SEED)
    _, wants, computed = reference(SEED)
    want = wants[0]
    bad = tuple(w + 1 if w.dtype.kind == "f" else ~w if w.dtype == np.bool_ else w + 1 for w in want)
    with pytest.raises(AssertionError) as info:
        compare(program, bad, want, computed, "self-test")
    message = str(info.value)
    assert f"seed {program.seed}" in message and program.source in message

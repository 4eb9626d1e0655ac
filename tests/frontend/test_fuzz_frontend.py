"""Whatever text it is given, the front end either accepts it or raises SourceError with
diagnostics inside the file: never another exception. Programs it accepts are fully typed.
The mutant fuzzer (tests/frontend/fuzz.py) takes mutants through the rest of the pipeline
too; a share of its mutants runs here."""

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler.frontend import load
from compiler.frontend.diagnostics import SourceError
from tests.campaign import cases

from . import fuzz
from .test_check import assert_fully_typed

SAMPLES = [p.read_text() for p in sorted((Path(__file__).parents[2] / "samples").glob("*.tdsl"))]
PROGRAMS = SAMPLES + [
    "fn f(x: f32[N, D], b: bool[N, D], k: i32[N]) -> (f32[N, D], i32) {\n"
    "    y = where(b, x ** 2, -x) * 0.5 + layernorm(x, sum(x, axis=0), max(x, axis=0), eps=1e-3)\n"
    "    z = reshape(transpose(y, (1, 0)), (D, N)) @ broadcast_to(reshape(cast(k, f32), (N, 1)), (N, D))\n"
    "    return x @ softmax(z @ transpose(z), axis=-1), sum(k ** 2, keepdims=false)\n"
    "}\n",
    "fn g(a: f64[M]) -> f64[M] { return rmsnorm(a, a) - minimum(a, 1) }\n"
    "fn main(a: f64[3]) -> f64[3] { return g(maximum(a, 0)) / pow(a, 2) }\n",
]
VOCABULARY = [w.decode() for w in fuzz.vocabulary([p.encode() for p in PROGRAMS])] + ["perm", "shape", "mean"]


def check_contract(text: str) -> None:
    try:
        module = load(text, "fuzz.tdsl")
    except SourceError as error:
        assert not fuzz.bad_diagnostic(error, text.encode())
        assert "Traceback" not in error.format()
    else:
        assert_fully_typed(module)


def tokens(program: str) -> list[str]:
    return [t.decode() for t in fuzz.TOKEN.findall(program.encode()) if not t.startswith((b"#", b"//"))]


@st.composite
def mutated_programs(draw) -> str:
    toks = tokens(draw(st.sampled_from(PROGRAMS)))
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(toks) - 1))
        action = draw(st.sampled_from(["delete", "insert", "replace", "swap"]))
        if action == "delete" and len(toks) > 1:
            del toks[i]
        elif action == "insert":
            toks.insert(i, draw(st.sampled_from(VOCABULARY)))
        elif action == "replace":
            toks[i] = draw(st.sampled_from(VOCABULARY))
        else:
            j = draw(st.integers(0, len(toks) - 1))
            toks[i], toks[j] = toks[j], toks[i]
    return " ".join(toks)


FUZZ = settings(max_examples=cases(200, 5000), deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(st.text(alphabet="fnretuxyz:[]()<>=!+-*/@,.{}#\n\t 0123456789_eabcdNDF$;", max_size=120))
def test_random_text(text):
    check_contract(text)


@FUZZ
@given(st.lists(st.sampled_from(VOCABULARY), max_size=60).map(" ".join))
def test_random_token_soup(text):
    check_contract(text)


@FUZZ
@given(mutated_programs())
def test_mutated_programs(text):
    check_contract(text)


@FUZZ
@given(st.sampled_from(PROGRAMS))
def test_unmutated_programs_check(text):
    assert_fully_typed(load(text, "ok.tdsl"))


def test_a_share_of_the_mutant_fuzzer():
    """A few hundred mutants of `python -m tests.frontend.fuzz`, through the pipeline up to
    the loop dialect in process: each compiles or gets a documented diagnostic. Long call
    chains are left to the full run: one takes seconds (xDSL verifies each call by a linear
    search of the module), and test_irgen.py covers their depth."""
    quick = [m for m in fuzz.MUTATIONS if m is not fuzz.call_chain]
    report = fuzz.fuzz(count=300, seed=2024, timeout_s=20.0, mutations=quick)
    assert report.outcomes["api: compiled"] > 0 and report.outcomes["api: diagnosed"] > 0
    assert not report.failures, "\n\n".join(f"{k}: {v}\n{report.traces[k]}" for k, v in report.failures.items())

"""A share of fusec-opt's mutant fuzzer (tests/frontend/fuzz_opt.py) each run: a few dozen
mutants of the FileCheck suite's IR through fusec-opt in process, with the passes of
their tests, each printing IR or exiting with one error, never a traceback or a hang;
the campaign's count with FUSEC_CAMPAIGN=1."""

from tests.campaign import cases

from . import fuzz_opt

#: a family of mutants holding IR that ended in a traceback before issue 46's fixes (a
#: function without its return, inlined unverified)
SEED = 57


def test_a_share_of_the_opt_fuzzer():
    report = fuzz_opt.fuzz_opt(count=cases(40, 3000), seed=SEED, timeout_s=20.0)
    assert report.outcomes["fusec-opt in process: compiled"] > 0
    assert report.outcomes["fusec-opt in process: diagnosed"] > 0
    assert not report.failures, "\n\n".join(f"{k}: {v}\n{report.traces[k]}" for k, v in report.failures.items())

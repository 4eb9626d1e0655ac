"""`dialects.reductions` declares each reduction once: one entry per kind of
`graph.reduce`, and every layer that knows a reduction (the checker's builtins, the
verifier, the lowering, partitioning, the chunked runner, the reference) reads it."""

import numpy as np

from compiler.frontend.builtins import BUILTINS, Arg
from dialects.elementwise import Accepts
from dialects.reductions import BY_FOLD, BY_KIND, REDUCTIONS, Fold, ReduceKind
from dialects.tensor_types import NUMPY_DTYPES


def test_every_kind_has_one_entry():
    assert [r.kind for r in REDUCTIONS] == list(ReduceKind)
    assert set(BY_KIND) == set(ReduceKind)


def test_every_fold_of_partials_has_the_reduction_that_combines_them():
    assert set(BY_FOLD) == set(Fold)
    for r in REDUCTIONS:
        if r.partials is not None:
            assert BY_FOLD[r.partials].combines_own_partials, r.name
    assert not BY_KIND["mean"].combines_own_partials  # its partials are sums


def test_every_reduction_is_a_builtin_of_its_entry():
    for r in REDUCTIONS:
        builtin = BUILTINS[r.name]
        assert builtin.rule == "reduce"
        assert builtin.params[1].kind is (Arg.AXIS if r.index else Arg.AXES), r.name


def test_a_meaning_gives_the_result_dtype():
    x = np.linspace(-2, 2, 24, dtype=np.float32).reshape(2, 3, 4)
    for r in REDUCTIONS:
        dtype = "bool" if r.accepts is Accepts.BOOL else "f32"
        result = r.numpy(x.astype(NUMPY_DTYPES[dtype]), (1,), False)
        assert result.dtype == NUMPY_DTYPES[r.result_dtype(dtype)], r.name
        assert result.shape == (2, 4), r.name

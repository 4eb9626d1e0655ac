"""`torch.compile(model, backend="fusec")` on small modules written here (docs/pytorch.md):
each against eager, what `fusec.torch.explain` says ran where, the table the docs list,
and the limits (gradients, an op fusec lacks). On the CPU target; the GPU machine runs
the same models on CUDA tensors with FUSEC_TEST_GPU=1."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
nn, F = torch.nn, torch.nn.functional

import fusec.torch
from compiler.pytorch.aten_table import table_markdown
from runtime.cuda.device import cuda_usable

DOCS = Path(__file__).resolve().parents[2] / "docs" / "pytorch.md"

DEVICES = ["cpu", "cuda"] if cuda_usable() and torch.cuda.is_available() else ["cpu"]


class Mlp(nn.Module):
    def __init__(self, d=32, f=64):
        super().__init__()
        self.up, self.down = nn.Linear(d, f), nn.Linear(f, d)

    def forward(self, x):
        return self.down(F.gelu(self.up(x), approximate="tanh")) + x


class DecoderBlock(nn.Module):
    """RMSNorm, causal attention through SDPA, a SiLU-gated MLP: a Llama-style layer."""

    def __init__(self, d=32, heads=4, f=48):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.RMSNorm(d, eps=1e-6), nn.RMSNorm(d, eps=1e-6)
        self.qkv, self.o = nn.Linear(d, 3 * d, bias=False), nn.Linear(d, d, bias=False)
        self.gate, self.up = nn.Linear(d, f, bias=False), nn.Linear(d, f, bias=False)
        self.down = nn.Linear(f, d, bias=False)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(d, dim=-1)
        q, k, v = (t.view(b, s, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        attention = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o(attention.transpose(1, 2).reshape(b, s, d))
        h = self.norm2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class ConvBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv, self.bn = nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8)

    def forward(self, x):
        return F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)


def _run(model, *inputs):
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="fusec")
    with torch.no_grad():
        return compiled(*inputs), model(*inputs)


def _eval(model, device):
    torch.manual_seed(0)
    model = model.eval().to(device)
    for p in model.parameters():  # weights of a trained model's scale, not init's zeros
        p.data.normal_(0, 0.2)
    for name, b in model.named_buffers():
        if "running_var" in name:
            b.data.uniform_(0.5, 1.5)
        elif "running_mean" in name:
            b.data.normal_(0, 0.2)
    return model


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(
    ("make", "shape"), [(Mlp, (4, 8, 32)), (DecoderBlock, (2, 16, 32)), (ConvBlock, (2, 3, 10, 10))]
)
def test_a_module_through_the_backend_matches_eager(make, shape, device):
    model = _eval(make(), device)
    x = torch.randn(*shape, device=device)
    got, expected = _run(model, x)
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)
    report = fusec.torch.explain(model, x)
    assert len(report.parts) == 1 and not report.fallbacks, str(report)
    assert report.parts[0].source.startswith("# fusec_part_0")


def test_the_backend_is_registered_with_dynamo():
    assert "fusec" in torch._dynamo.list_backends()


def test_explain_shows_each_part_as_a_program_and_names_what_stays_in_eager():
    class Partial(nn.Module):
        def forward(self, x):
            y = torch.softmax(x * 2.0, dim=-1)
            return torch.cumsum(y, dim=-1) + torch.exp(y)  # cumsum: not in fusec's language

    model = Partial()
    x = torch.randn(4, 16)
    got, expected = _run(model, x)
    torch.testing.assert_close(got, expected)
    text = str(fusec.torch.explain(model, x))
    assert re.search(r"eager: aten\.cumsum\.default x1: aten\.cumsum\.default is not in fusec's table", text), text
    assert "softmax(" in text and "fn main(a0: f32[4, 16])" in text


def test_an_empty_tensor_stays_in_eager_and_the_rest_compiles():
    class Cached(nn.Module):
        def forward(self, x, past):
            return torch.cat((past, x), dim=1).relu() * 2.0

    x, past = torch.randn(2, 4, 8), torch.zeros(2, 0, 8)  # a cache with nothing in it yet
    got, expected = _run(Cached(), x, past)
    torch.testing.assert_close(got, expected)
    text = str(fusec.torch.explain(Cached(), x, past))
    assert "eager: aten.cat.default x1: an empty tensor" in text, text
    assert "relu(" in text


def test_the_ops_of_a_mask_construction_compile():
    """What Hugging Face builds its masks from: bool `&`, scalars of `torch.where`, a
    tensor of ones, indexing by two broadcast index tensors (one index negative)."""

    class Masks(nn.Module):
        def forward(self, x, rows, cols):
            keep = (x > -0.5) & (x < 1.0)
            bias = torch.where(keep, 0.0, float("-inf"))
            scores = torch.softmax(x + bias, dim=-1) * x.new_ones(x.shape)
            return scores, x[rows, cols]

    x = torch.randn(6, 8)
    x[:, 0] = 0.0  # every row keeps a column
    rows, cols = torch.tensor([[0], [5], [-1]]), torch.tensor([1, -2, 7])
    (scores, picked), (want_scores, want_picked) = _run(Masks(), x, rows, cols)
    torch.testing.assert_close(scores, want_scores)
    torch.testing.assert_close(picked, want_picked)
    report = fusec.torch.explain(Masks(), x, rows, cols)
    assert len(report.parts) == 1 and not report.fallbacks, str(report)


class PositionsAndMask(nn.Module):
    """A decoder's glue, as Hugging Face writes it: positions from `arange`, a causal
    mask from `arange`, `cumsum`, `ne`, `le` and `where`, all from the input's shape
    alone; and noise from `torch.rand`, which must be drawn anew every call."""

    def forward(self, x, noisy: bool = False):
        s = x.shape[1]
        positions = torch.arange(s, device=x.device).unsqueeze(0).expand(x.shape[0], -1)
        steps = torch.cumsum(torch.ones(s, device=x.device).ne(0).int(), dim=-1)
        causal = steps.unsqueeze(0) <= steps.unsqueeze(1)
        scores = torch.where(causal, x @ x.transpose(-1, -2), float("-inf"))
        out = torch.softmax(scores, dim=-1) @ x + positions.unsqueeze(-1)
        return out + torch.rand(out.shape, device=x.device) if noisy else out


@pytest.mark.parametrize("device", DEVICES)
def test_values_computed_from_no_input_are_folded_to_constants_once(device):
    model = PositionsAndMask()
    x = torch.randn(2, 8, 4, device=device)
    got, expected = _run(model, x)
    torch.testing.assert_close(got, expected)
    report = fusec.torch.explain(model, x)
    assert len(report.parts) == 1 and not report.fallbacks, str(report)
    assert report.folded["aten.cumsum.default"] == 1 and report.folded["aten.arange.default"] >= 1, report.folded
    assert "folded to constants" in str(report)


def test_random_numbers_are_not_folded():
    model = PositionsAndMask()
    x = torch.randn(2, 8, 4)
    compiled, report = _compile_with_report(lambda x: model(x, noisy=True))
    with torch.no_grad():
        first, second = compiled(x), compiled(x)
    assert not torch.equal(first, second)  # fresh noise each call
    assert not any("rand" in op for op in report.folded), report.folded


def test_a_value_larger_than_the_limit_is_computed_each_call_from_folded_operands(monkeypatch):
    """100 bytes: the positions `arange(8)` (64 bytes of int64) and the mask's steps fit,
    their expansion to the batch, [2, 8] (128 bytes), does not: it is computed each call,
    from the folded positions."""
    from compiler.pytorch import fold_constants

    monkeypatch.setattr(fold_constants, "MAX_CONSTANT_BYTES", 100)
    model = PositionsAndMask()
    x = torch.randn(2, 8, 4)
    compiled, report = _compile_with_report(model)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), model(x))
    assert report.folded["aten.arange.default"] and report.folded["aten.cumsum.default"], report.folded
    assert "aten.expand.default" not in report.folded, report.folded


def _compile_with_report(fn):
    """`fn` compiled by the fusec backend, and the report of what ran where."""
    import functools

    from compiler.pytorch.backend import Report, backend

    report = Report()
    torch._dynamo.reset()
    return torch.compile(fn, backend=functools.partial(backend, report=report)), report


def _raised(fn, *inputs):
    """The exception `fn(*inputs)` raises (without gradients), or None."""
    try:
        with torch.no_grad():
            fn(*inputs)
    except Exception as error:
        return error
    return None


class IndexSelect(nn.Module):
    def __init__(self):
        super().__init__()
        self.table = nn.Parameter(torch.randn(10, 4))

    def forward(self, ids):
        return torch.index_select(self.table, 0, ids.flatten()) * 2.0


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("make", [lambda: nn.Embedding(10, 4), IndexSelect], ids=["embedding", "index_select"])
def test_embedding_and_index_select_take_ids_in_range_only(make, device):
    """aten's ids are [0, n): a negative one raises as eager's does (IndexError on the
    CPU; eager's CUDA kernels assert on the device instead), not counting from the end
    as NumPy's take (fusec's gather) would."""
    lookup = make().eval().to(device)
    compiled, report = _compile_with_report(lookup)
    good = torch.tensor([[1, 9], [0, 3]], device=device)
    with torch.no_grad():
        torch.testing.assert_close(compiled(good), lookup(good))
    assert len(report.parts) == 1 and not report.fallbacks, str(report)
    for bad in (-1, -10, 10):
        ids = torch.tensor([[1, bad]], device=device)
        with pytest.raises(IndexError, match=rf"index {bad} is out of range for an axis of size 10"):
            with torch.no_grad():
                compiled(ids)
        if device == "cpu":
            assert isinstance(_raised(lookup, ids), IndexError)


@pytest.mark.parametrize("device", DEVICES)
def test_index_select_along_a_later_axis_raises_the_runtime_error_eager_raises(device):
    """Eager's `index_select` along axis 1 raises `RuntimeError` for an id out of range
    (along axis 0, `IndexError`): the door's error is both (campaign seed 20261205)."""
    compiled, _ = _compile_with_report(lambda w, ids: torch.index_select(w, 1, ids))
    w, ids = torch.randn(4, 3, device=device), torch.tensor([-1, 2], device=device)
    with torch.no_grad(), pytest.raises(RuntimeError, match="index -1 is out of range for an axis of size 3"):
        compiled(w, ids)
    if device == "cpu":
        assert isinstance(_raised(lambda: torch.index_select(w, 1, ids)), RuntimeError)


def test_indexing_by_several_tensors_checks_each_index_against_its_axis():
    """`x[rows, cols]`: a column past its axis is an error, as eager's, though the
    flattened index it makes lies inside `x`; a negative one counts from the end."""
    compiled, report = _compile_with_report(lambda x, rows, cols: x[rows, cols] * 2.0)
    x = torch.randn(6, 8)
    rows, cols = torch.tensor([0, -6, 5]), torch.tensor([7, -8, -1])
    with torch.no_grad():
        torch.testing.assert_close(compiled(x, rows, cols), x[rows, cols] * 2.0)
        for bad_rows, bad_cols in ((rows, torch.tensor([8, 0, 0])), (rows, torch.tensor([0, -9, 0])), (rows + 6, cols)):
            with pytest.raises(IndexError, match="is out of range for an axis of size"):
                compiled(x, bad_rows, bad_cols)
            assert isinstance(_raised(lambda: x[bad_rows, bad_cols]), IndexError)
    assert len(report.parts) == 1 and not report.fallbacks, str(report)


NAN, INF = float("nan"), float("inf")
EDGE_FLOATS = torch.tensor([NAN, INF, -INF, 0.0, -0.0, 2.5, -1.5, 1e30, -3.0, 7.0])
EDGE_DIVISORS = torch.tensor([3.0, INF, 2.0, 0.0, 3.0, -INF, 0.0, 0.1, 2.0, -2.5])


def _edge_ints(dtype):
    info = torch.iinfo(dtype)
    return torch.tensor([info.min, info.max, info.min + 1, -7, -2, -1, 0, 1, 2, 7], dtype=dtype)


#: aten ops whose NumPy meaning (`.tdsl`'s) differs on edge values, each compiled by
#: fusec with aten's meaning: name -> (function, inputs)
EDGE_CASES = {
    "sign of NaN": (lambda x: torch.sign(x * 2.0), (EDGE_FLOATS,)),
    **{
        f"{dtype} to negative powers": (
            lambda x, y: torch.pow(x, y) + 1,
            (_edge_ints(dtype), torch.tensor([[-3], [-2], [-1], [0], [1], [2], [31]], dtype=dtype)),
        )
        for dtype in (torch.int32, torch.int64)
    },
    "log_softmax of rows holding inf": (
        lambda x: torch.log_softmax(x * 1.0, dim=-1),
        (torch.tensor([[INF, 1.0, -INF, 0.0], [-INF] * 4, [NAN, 1.0, 2.0, 3.0], [1.0, 2.0, 3.0, -INF]]),),
    ),
    "a comparison with a scalar tensor of a wider float": (
        lambda x, y: (x == y, x <= y, x > y),
        (torch.tensor([0.1, 0.2, NAN]), torch.tensor(0.1, dtype=torch.float64)),
    ),
    "a comparison of integers with a fraction": (
        lambda x: (x == 2.0, x < 2.5, x >= -0.5),
        (_edge_ints(torch.int32),),
    ),
    "sums and products of bools": (lambda x, y: ((x > 0) + (y > 0), (x > 0) * (y > 0)), (EDGE_FLOATS, EDGE_DIVISORS)),
    "logical ops of floats": (
        lambda x, y: (torch.logical_and(x, y), torch.logical_or(x, y), torch.logical_not(x * 1.0)),
        (EDGE_FLOATS, EDGE_DIVISORS),
    ),
    "floor division of floats": (lambda x, y: torch.floor_divide(x, y), (EDGE_FLOATS, EDGE_DIVISORS)),
    "softplus past its threshold and below it": (
        lambda x: (F.softplus(x * 1.0), F.softplus(x * 1.0, beta=2.0, threshold=5.0)),
        (torch.cat([EDGE_FLOATS, torch.tensor([19.9, 20.1, 2.6, 2.4, -30.0, 90.0])]),),
    ),
    **{
        f"{dtype} floor division and remainder by numbers": (
            lambda x: (torch.floor_divide(x, -3), x // -1, torch.remainder(x, -3), x % 2),
            (_edge_ints(dtype),),
        )
        for dtype in (torch.int32, torch.int64)
    },
}


@pytest.mark.parametrize("case", EDGE_CASES)
def test_edge_values_follow_eager(case):
    fn, inputs = EDGE_CASES[case]
    compiled, report = _compile_with_report(fn)
    with torch.no_grad():
        got, expected = compiled(*inputs), fn(*inputs)
    torch.testing.assert_close(got, expected, equal_nan=True, rtol=1e-6, atol=0)
    assert report.parts and not report.fallbacks, str(report)


#: aten ops eager raises for on some inputs, where NumPy's meaning gives a number:
#: name -> (function, inputs that make eager raise, the reason in explain)
RAISING_CASES = {
    "integer remainder by a tensor": (
        lambda x, y: torch.remainder(x, y) + 1, (_edge_ints(torch.int32), torch.arange(10, dtype=torch.int32)),
        "an integer remainder by a tensor or by 0",
    ),
    "integer remainder by 0": (lambda x: torch.remainder(x + 1, 0), (_edge_ints(torch.int64),), "by 0"),
    "integer floor division by 0": (lambda x: (x + 1) // 0, (_edge_ints(torch.int64),), "by 0"),
    "an integer to a negative power": (
        lambda x: (x + 1) ** -2, (_edge_ints(torch.int32),), "an integer to a negative power (eager raises)"
    ),
}


@pytest.mark.parametrize("case", RAISING_CASES)
def test_an_op_eager_raises_for_stays_in_eager(case):
    fn, inputs, reason = RAISING_CASES[case]
    compiled, report = _compile_with_report(fn)
    raised, expected = _raised(compiled, *inputs), _raised(fn, *inputs)
    assert expected is not None and type(raised) is type(expected) and str(raised) == str(expected)
    assert any(reason in why for _, why in report.fallbacks), str(report)


def test_bf16_through_the_backend_within_half_tolerance():
    model = _eval(Mlp(), "cpu").to(torch.bfloat16)
    x = torch.randn(4, 8, 32, dtype=torch.bfloat16)
    got, expected = _run(model, x)
    assert got.dtype == torch.bfloat16
    torch.testing.assert_close(got.float(), expected.float(), rtol=2e-2, atol=2e-2)


def test_a_new_batch_size_recompiles_with_a_size_name():
    """Dynamo marks the batch dynamic at the second size: one program serves every size."""
    import functools

    from compiler.pytorch.backend import Report, backend

    model = _eval(Mlp(), "cpu")
    report = Report()
    torch._dynamo.reset()
    compiled = torch.compile(model, backend=functools.partial(backend, report=report))
    with torch.no_grad():
        for batch in (2, 3, 5):
            x = torch.randn(batch, 8, 32)
            torch.testing.assert_close(compiled(x), model(x), rtol=1e-5, atol=1e-5)
    assert report.graphs == 2
    assert re.search(r"fn main\(a0: f32\[S[0-9]+, 8, 32\]", report.parts[-1].source), report.parts[-1].source


def test_gradients_run_in_eager_with_a_warning_that_says_why():
    model = _eval(Mlp(), "cpu")
    x = torch.randn(2, 8, 32)
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="fusec")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = compiled(x)
    assert any("fusec compiles inference only" in str(w.message) for w in caught)
    got.sum().backward()  # eager's graph: gradients flow
    assert model.up.weight.grad is not None


def test_the_docs_list_the_table():
    text = DOCS.read_text()
    begin, end = "<!-- aten table: begin -->\n", "\n<!-- aten table: end -->"
    assert begin in text and end in text, "docs/pytorch.md lacks the generated table"
    listed = text[text.index(begin) + len(begin) : text.index(end)]
    assert listed == table_markdown(), (
        "docs/pytorch.md's table is stale: paste compiler.pytorch.aten_table.table_markdown()"
    )


@pytest.mark.parametrize("affine", ["none", "weight", "bias"])
def test_a_half_layer_norm_without_weight_or_bias_rounds_once(affine):
    """`layer_norm` of f16 rows whose variance is past f16's largest (40000, 20000):
    eager computes in f32 and gives ±1; a missing weight is 1 and a missing bias 0 in the
    one composite, which keeps its statistics in f32 (campaign seed 20261205)."""
    x = torch.tensor([[40000.0, 20000.0], [10000.0, 5000.0]], dtype=torch.float16)
    w = torch.tensor([2.0, 3.0], dtype=torch.float16) if affine == "weight" else None
    b = torch.tensor([0.5, -0.5], dtype=torch.float16) if affine == "bias" else None
    norm = lambda x: F.layer_norm(x, (2,), weight=w, bias=b)  # noqa: E731
    compiled, _ = _compile_with_report(norm)
    with torch.no_grad():
        torch.testing.assert_close(compiled(x), norm(x), rtol=0, atol=0)

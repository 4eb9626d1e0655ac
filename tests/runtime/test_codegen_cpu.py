"""The CPU code generator: what the source looks like, and that no name from the
program or the IR reaches it."""

from __future__ import annotations

import re

import numba
import numpy as np

import fusec
from dialects import loop
from runtime.cpu import codegen as codegen_cpu
from runtime.cpu import sources as cpu_sources
from runtime.cpu.executor import CompiledProgram
from tests.loops.cases import CASES
from tests.loops.harness import (  # noqa: F401  (kernel_cache is a fixture)
    assert_results_equal,
    draw_inputs,
    kernel_cache,
    lowered,
    parse,
    reference,
)


def sources(name: str, spec: str = "lower-to-loops,map-cpu,plan-memory") -> list[str]:
    return list(cpu_sources.module_kernel_sources(lowered(CASES[name].text, spec)).values())


def test_softmax_source_shape():
    (src,) = sources("softmax_rows")
    assert src.count("prange(") == 1
    assert "exp_f32(" in src and "math.exp(" not in src  # float32: the vectorisable exp
    # the rows in one chunk per thread, each allocating its scratch row once, not per row
    chunk_loop = re.search(r"\n( +)for b\d+ in prange\(n\d+\):\n\1    t\d+ = np.empty\(\(v\d+, \)", src)
    assert chunk_loop and re.search(r"for i0 in range\(np.int64\(b\d+\) \* v0 // n\d+, ", src)
    assert re.search(r"r\d+ = fmaximum\(r\d+, v\d+\)", src)  # NaN-propagating, vectorised
    assert re.search(r"w\d+\[k\d+\] = v\d+", src)  # the sum's terms, in lanes
    # the lanes added to the start value, which keeps a NaN it holds (the same on any thread count)
    assert re.search(r"(r\d+) = \(\1 if \1 != \1 else \1 \+ lane_sum\(l\d+\)\)", src)
    compile(src, "<softmax>", "exec")


def test_float32_functions_are_the_vectorisable_ones_and_powers_multiplies():
    (src,) = sources("matmul_bias_gelu")
    assert "math.tanh" not in src and re.search(r"= tanh_f32\(v\d+\)", src)
    assert "**" not in src
    (src,) = sources("elementwise_chain")
    assert "**" not in src and "math.tanh" not in src and "math.erf(" not in src and "erf_f32(" in src


def test_float32_constants_are_typed():
    (src,) = sources("layernorm_rows")
    constants = re.findall(r"^c\d+ = (np\.\w+)\(", src, re.M)
    assert constants and set(constants) == {"np.float32"}


def test_serial_kernels_are_not_compiled_parallel():
    module = lowered(CASES["softmax_rows"].text, "lower-to-loops")
    (kernel,) = [op for op in module.ops if isinstance(op, loop.KernelOp)]
    assert "prange(" not in cpu_sources.kernel_source(kernel)
    assert codegen_cpu.njit_options(kernel)["parallel"] is False
    module = lowered(CASES["softmax_rows"].text)
    (kernel,) = [op for op in module.ops if isinstance(op, loop.KernelOp)]
    assert codegen_cpu.njit_options(kernel) == {
        "parallel": True, "fastmath": codegen_cpu.FAST_MATH, "error_model": "numpy", "nogil": True
    }


def test_identical_kernels_have_identical_sources():
    """The source depends on what a kernel computes, not on what it is called."""
    text = CASES["softmax_rows"].text
    a = cpu_sources.module_kernel_sources(lowered(text))
    b = cpu_sources.module_kernel_sources(lowered(text.replace("k0_softmax", "another_name")))
    assert list(a.values()) == list(b.values())


HOSTILE = [
    "__import__('os').system('echo pwned')\nimport os",
    "os",
    "import",
    "lambda",
    "def",
    "class",
    "None",
    'quo"te',
    "back\\slash",
    "new\nline",
    "λ",
    "名前",
]


def hostile_module() -> str:
    """A fused module whose kernel, function, argument and size names are hostile."""
    kernel = HOSTILE[0].replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    a, b = (h.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") for h in (HOSTILE[7], HOSTILE[10]))
    t = f'tensor<?x?xf32, ["{a}", "{b}"]>'
    r = f'tensor<?x1xf32, ["{a}", ""]>'
    return f"""
func.func @"class"(%import: {t}, %lambda: tensor<?xf32, ["{b}"]>) -> ({t}, tensor<?xf32, ["{a}"]>) {{
  %os:2 = graph.fusion_group(%import, %lambda) {{kernel = "{kernel}", kind = "reduction"}} : ({t}, tensor<?xf32, ["{b}"]>) -> ({t}, tensor<?xf32, ["{a}"]>) {{
  ^bb0(%def: {t}, %None: tensor<?xf32, ["{b}"]>):
    %m = graph.reduce max %def axes = [1] keepdims : {t} -> {r}
    %mb = graph.broadcast %m : {r} -> {t}
    %d = graph.sub %def, %mb : {t}
    %e = graph.exp %d : {t}
    %gb = graph.broadcast %None : tensor<?xf32, ["{b}"]> -> {t}
    %y = graph.mul %e, %gb : {t}
    %s = graph.reduce sum %y axes = [1] : {t} -> tensor<?xf32, ["{a}"]>
    graph.yield %y, %s : {t}, tensor<?xf32, ["{a}"]>
  }}
  func.return %os#0, %os#1 : {t}, tensor<?xf32, ["{a}"]>
}}
"""


def test_hostile_names_never_reach_the_source(kernel_cache):
    text = hostile_module()
    module = lowered(text)
    kernels = [op for op in module.ops if isinstance(op, loop.KernelOp)]
    assert [k.sym_name.data for k in kernels] == [HOSTILE[0]]
    (src,) = cpu_sources.module_kernel_sources(module).values()
    identifiers = set(re.findall(r"[^\W\d]\w*", src))
    allowed = {"import", "math", "numpy", "as", "np", "from", "numba", "prange", "runtime", "cpu_math", *codegen_cpu.CPU_MATH_IMPORTS, "def", "kernel", "for", "in",
               "range", "max", "min", "empty", "dtype", "float32", "exp", "shape", "inf", "item", "Generated", "by",
               "fusec", "loop", "dialect", "Numba", "CPU", "Do", "not", "edit", "if", "else", "int64"}  # fmt: skip
    generated = {i for i in identifiers if re.fullmatch(r"([avcritelkqpsbnmw]|lo|hi)\d+", i)}
    assert identifiers - generated <= allowed, identifiers - generated - allowed
    for name in HOSTILE:
        if name not in allowed:  # as a word: "os" is in "cos_f32"
            assert not re.search(rf"(?<!\w){re.escape(name)}(?!\w)", src), name
    assert "'" not in src and '"' not in src and "\\" not in src
    assert src.isascii()
    # The listing quotes names as Python literals, so even it cannot be broken out of.
    listing = cpu_sources.module_source(module)
    assert repr(HOSTILE[0]) in listing
    assert "import os" not in listing.splitlines()
    # And it runs, on the right numbers.
    arrays = draw_inputs(parse(text), {HOSTILE[7]: 3, HOSTILE[10]: 5}, entry="class")
    got = CompiledProgram(module, cache_dir=kernel_cache).run("class", arrays)
    assert_results_equal(got, reference(text, arrays, entry="class"), 1e-5, 1e-6)


def test_tanh_of_large_values(kernel_cache):
    """No inf reaches cpu_math's functions: tanh(+-100) is +-1, gelu(1e4) is 1e4, not nan."""
    case = CASES["matmul_bias_gelu"]
    x, w, b = draw_inputs(parse(case.text), case.sizes)
    x[0, :] = 50.0
    x[1, :] = -50.0
    program = CompiledProgram(lowered(case.text), cache_dir=kernel_cache)
    (got,) = program.run("main", [x, w, b])
    assert not np.isnan(got).any()
    (expected,) = reference(case.text, [x, w, b])
    # gelu(-250) is -0.0 in NumPy; tanh_f32 is within its ulp bound, not exact: an atol.
    np.testing.assert_allclose(got, expected, rtol=case.rtol, atol=1e-6 * np.abs(expected).max())


def test_laned_sums_vectorise_without_reassoc():
    """A row sum keeps its lanes as one vector value, which LLVM holds in registers
    across the blocks of the row (a phi of <64 x float>), and vectorises the loop over a
    block as an elementwise loop: packed float additions, under no flag but nsz."""
    from numba import njit

    module = lowered(CASES["layernorm_rows"].text, "lower-to-loops")  # the serial variant
    (kernel,) = [op for op in module.ops if isinstance(op, loop.KernelOp)]
    src = cpu_sources.kernel_source(kernel)
    assert "lane_start(" in src and "lane_fold_sum(" in src
    namespace: dict = {}
    exec(compile(src, "<layernorm>", "exec"), namespace)
    compiled = njit(**codegen_cpu.njit_options(kernel))(namespace[codegen_cpu.KERNEL_FUNCTION])
    x, gamma, beta = (np.ones((4, 300), np.float32), np.ones(300, np.float32), np.zeros(300, np.float32))
    out = np.empty_like(x)
    compiled(x, gamma, beta, out)
    np.testing.assert_allclose(out, 0.0, atol=1e-6)
    (llvm,) = compiled.inspect_llvm().values()
    # the lanes' tree (cpu_math.lane_sum) adds packed halves of one <64 x float> too: the
    # packed loads of the row are what shows the loop over the lanes vectorised
    assert re.search(r"load <(4|8|16) x float>", llvm), "the lanes did not vectorise"
    assert re.search(r"fadd nsz <(4|8|16) x float>", llvm), "the lanes did not vectorise"
    assert "phi <64 x float>" in llvm, "the lanes are not one value across the blocks"
    assert not re.search(r"\b(reassoc|arcp|nnan|ninf|fast)\b", llvm)


MASKED_ROW_EXTREMA = """\
fn main(x: f32[N, D]) -> (f32[N], f32[N]) {
    below = iota((N, D), 0) >= iota((N, D), 1)
    return max(where(below, x, -inf), axis=-1), min(where(below, x, inf), axis=-1)
}
"""


def test_masked_max_and_min_go_in_lanes_vectorise_and_match_numpy():
    """A max or min of a ``where`` (a causal mask) folds into lanes: LLVM turns
    ``maximum(r, select(c, x, -inf))`` into a conditional reduction it does not
    vectorise, and the loop over the lanes is elementwise. The lanes give NumPy's bits:
    a NaN propagates, -0.0 and 0.0 are ordered as ``np.maximum`` orders them."""
    program = fusec.compile(MASKED_ROW_EXTREMA, target="cpu")
    (src,) = re.split(r"# ---- kernel .*\n", program.ir("kernel"))[1:]
    assert "lane_fold_maximum(" in src and "lane_fold_minimum(" in src
    namespace: dict = {}
    exec(compile(src, "<masked>", "exec"), namespace)  # noqa: S102  (the kernel fusec generated)
    compiled = numba.njit(**codegen_cpu.NJIT_OPTIONS)(namespace[codegen_cpu.KERNEL_FUNCTION])
    x = np.random.default_rng(0).standard_normal((150, 150)).astype(np.float32)
    x[5, 3], x[100, 90], x[120, 130] = np.nan, np.nan, np.nan  # the last one is masked out
    x[140, :] = -0.0
    x[140, 70] = 0.0
    below = np.arange(150)[:, None] >= np.arange(150)[None, :]
    want = (np.where(below, x, -np.inf).max(axis=-1), np.where(below, x, np.inf).min(axis=-1))
    got = (np.empty(150, np.float32), np.empty(150, np.float32))
    compiled(x, *got)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.view(np.int32), w.view(np.int32))
    assert np.array_equal(program.main(x)[0], want[0], equal_nan=True)
    llvm = "".join(compiled.inspect_llvm().values())
    assert re.search(r"@llvm\.maximum\.v(4|8|16)f32", llvm), "the masked max did not vectorise"
    assert re.search(r"@llvm\.minimum\.v(4|8|16)f32", llvm), "the masked min did not vectorise"

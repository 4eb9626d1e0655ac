"""Hand-written fused modules (``graph.fusion_group`` per kernel) that the loop tests
lower, compile and run against the NumPy reference interpreter.

Each case is MLIR text of a module with ``func.func @main`` and the sizes to draw its
inputs with (a size name -> an int).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Case:
    text: str
    sizes: dict[str, int] = field(default_factory=dict)
    rtol: float = 1e-5
    atol: float = 1e-6


F = 'tensor<?x?xf32, ["B", "N"]>'
R = 'tensor<?x1xf32, ["B", ""]>'

CASES: dict[str, Case] = {}

# -- elementwise --------------------------------------------------------------------

CASES["elementwise_chain"] = Case(
    """
func.func @main(%x: tensor<?x16xf32, ["N", ""]>, %b: tensor<16xf32>) -> tensor<?x16xf32, ["N", ""]> {
  %y = graph.fusion_group(%x, %b) {kernel = "k0_ew", kind = "elementwise"} : (tensor<?x16xf32, ["N", ""]>, tensor<16xf32>) -> tensor<?x16xf32, ["N", ""]> {
  ^bb0(%a: tensor<?x16xf32, ["N", ""]>, %bias: tensor<16xf32>):
    %bb = graph.broadcast %bias : tensor<16xf32> -> tensor<?x16xf32, ["N", ""]>
    %s = graph.add %a, %bb : tensor<?x16xf32, ["N", ""]>
    %sn = graph.sin %s : tensor<?x16xf32, ["N", ""]>
    %cs = graph.cos %s : tensor<?x16xf32, ["N", ""]>
    %two = graph.constant dense<2.000000e+00> : tensor<f32>
    %twob = graph.broadcast %two : tensor<f32> -> tensor<?x16xf32, ["N", ""]>
    %s2 = graph.pow %sn, %twob : tensor<?x16xf32, ["N", ""]>
    %c2 = graph.pow %cs, %twob : tensor<?x16xf32, ["N", ""]>
    %r = graph.add %s2, %c2 : tensor<?x16xf32, ["N", ""]>
    %t = graph.tanh %s : tensor<?x16xf32, ["N", ""]>
    %e = graph.erf %t : tensor<?x16xf32, ["N", ""]>
    %o = graph.add %r, %e : tensor<?x16xf32, ["N", ""]>
    graph.yield %o : tensor<?x16xf32, ["N", ""]>
  }
  func.return %y : tensor<?x16xf32, ["N", ""]>
}
""",
    {"N": 7},
)

CASES["composites"] = Case(
    """
func.func @main(%x: tensor<5x9xf32>) -> (tensor<5x9xf32>, tensor<5x9xf32>) {
  %y:2 = graph.fusion_group(%x) {kernel = "k0_act", kind = "elementwise"} : (tensor<5x9xf32>) -> (tensor<5x9xf32>, tensor<5x9xf32>) {
  ^bb0(%a: tensor<5x9xf32>):
    %g = graph.gelu %a : tensor<5x9xf32>
    %s = graph.silu %a : tensor<5x9xf32>
    %m = graph.sigmoid %g : tensor<5x9xf32>
    %r = graph.relu %a : tensor<5x9xf32>
    %n = graph.neg %r : tensor<5x9xf32>
    %ab = graph.abs %n : tensor<5x9xf32>
    %q = graph.rsqrt %ab : tensor<5x9xf32>
    %mx = graph.maximum %q, %s : tensor<5x9xf32>
    %mn = graph.minimum %mx, %m : tensor<5x9xf32>
    %ex = graph.exp %mn : tensor<5x9xf32>
    %lg = graph.log %ex : tensor<5x9xf32>
    %sq = graph.sqrt %ex : tensor<5x9xf32>
    %d = graph.div %lg, %sq : tensor<5x9xf32>
    %su = graph.sub %d, %g : tensor<5x9xf32>
    %mu = graph.mul %su, %s : tensor<5x9xf32>
    graph.yield %mu, %m : tensor<5x9xf32>, tensor<5x9xf32>
  }
  func.return %y#0, %y#1 : tensor<5x9xf32>, tensor<5x9xf32>
}
""",
    rtol=1e-4,
    atol=1e-5,
)

CASES["where_cast_compare"] = Case(
    """
func.func @main(%x: tensor<?x8xf32, ["N", ""]>, %y: tensor<?x8xf32, ["N", ""]>) -> (tensor<?x8xf32, ["N", ""]>, tensor<?x8xi1, ["N", ""]>, tensor<?x8xi32, ["N", ""]>) {
  %r:3 = graph.fusion_group(%x, %y) {kernel = "k0_where", kind = "elementwise"} : (tensor<?x8xf32, ["N", ""]>, tensor<?x8xf32, ["N", ""]>) -> (tensor<?x8xf32, ["N", ""]>, tensor<?x8xi1, ["N", ""]>, tensor<?x8xi32, ["N", ""]>) {
  ^bb0(%a: tensor<?x8xf32, ["N", ""]>, %b: tensor<?x8xf32, ["N", ""]>):
    %c = graph.cmp lt %a, %b : tensor<?x8xf32, ["N", ""]> -> tensor<?x8xi1, ["N", ""]>
    %w = graph.select %c, %a, %b : tensor<?x8xi1, ["N", ""]>, tensor<?x8xf32, ["N", ""]>
    %ten = graph.constant dense<1.000000e+01> : tensor<f32>
    %tenb = graph.broadcast %ten : tensor<f32> -> tensor<?x8xf32, ["N", ""]>
    %sc = graph.mul %a, %tenb : tensor<?x8xf32, ["N", ""]>
    %i = graph.cast %sc : tensor<?x8xf32, ["N", ""]> -> tensor<?x8xi32, ["N", ""]>
    %i2 = graph.mul %i, %i : tensor<?x8xi32, ["N", ""]>
    %e = graph.cmp ne %a, %b : tensor<?x8xf32, ["N", ""]> -> tensor<?x8xi1, ["N", ""]>
    %ee = graph.cmp eq %e, %c : tensor<?x8xi1, ["N", ""]> -> tensor<?x8xi1, ["N", ""]>
    %f = graph.cast %ee : tensor<?x8xi1, ["N", ""]> -> tensor<?x8xf32, ["N", ""]>
    %o = graph.add %w, %f : tensor<?x8xf32, ["N", ""]>
    graph.yield %o, %c, %i2 : tensor<?x8xf32, ["N", ""]>, tensor<?x8xi1, ["N", ""]>, tensor<?x8xi32, ["N", ""]>
  }
  func.return %r#0, %r#1, %r#2 : tensor<?x8xf32, ["N", ""]>, tensor<?x8xi1, ["N", ""]>, tensor<?x8xi32, ["N", ""]>
}
""",
    {"N": 6},
)

# -- reductions ---------------------------------------------------------------------

CASES["softmax_rows"] = Case(
    f"""
func.func @main(%x: {F}) -> {F} {{
  %y = graph.fusion_group(%x) {{kernel = "k0_softmax", kind = "reduction"}} : ({F}) -> {F} {{
  ^bb0(%a: {F}):
    %m = graph.reduce max %a axes = [1] keepdims : {F} -> {R}
    %mb = graph.broadcast %m : {R} -> {F}
    %d = graph.sub %a, %mb : {F}
    %e = graph.exp %d : {F}
    %s = graph.reduce sum %e axes = [1] keepdims : {F} -> {R}
    %sb = graph.broadcast %s : {R} -> {F}
    %r = graph.div %e, %sb : {F}
    graph.yield %r : {F}
  }}
  func.return %y : {F}
}}
""",
    {"B": 6, "N": 33},
)

CASES["layernorm_rows"] = Case(
    """
func.func @main(%x: tensor<?x?xf32, ["T", "D"]>, %g: tensor<?xf32, ["D"]>, %be: tensor<?xf32, ["D"]>) -> tensor<?x?xf32, ["T", "D"]> {
  %y = graph.fusion_group(%x, %g, %be) {kernel = "k0_layernorm", kind = "reduction"} : (tensor<?x?xf32, ["T", "D"]>, tensor<?xf32, ["D"]>, tensor<?xf32, ["D"]>) -> tensor<?x?xf32, ["T", "D"]> {
  ^bb0(%a: tensor<?x?xf32, ["T", "D"]>, %gamma: tensor<?xf32, ["D"]>, %beta: tensor<?xf32, ["D"]>):
    %mean = graph.reduce mean %a axes = [1] keepdims : tensor<?x?xf32, ["T", "D"]> -> tensor<?x1xf32, ["T", ""]>
    %mb = graph.broadcast %mean : tensor<?x1xf32, ["T", ""]> -> tensor<?x?xf32, ["T", "D"]>
    %c = graph.sub %a, %mb : tensor<?x?xf32, ["T", "D"]>
    %sq = graph.mul %c, %c : tensor<?x?xf32, ["T", "D"]>
    %ss = graph.reduce sum %sq axes = [1] keepdims : tensor<?x?xf32, ["T", "D"]> -> tensor<?x1xf32, ["T", ""]>
    %n = graph.dim_size %a[1] : tensor<?x?xf32, ["T", "D"]> -> tensor<f32>
    %nb = graph.broadcast %n : tensor<f32> -> tensor<?x1xf32, ["T", ""]>
    %var = graph.div %ss, %nb : tensor<?x1xf32, ["T", ""]>
    %eps = graph.constant dense<9.99999974E-6> : tensor<f32>
    %epsb = graph.broadcast %eps : tensor<f32> -> tensor<?x1xf32, ["T", ""]>
    %ve = graph.add %var, %epsb : tensor<?x1xf32, ["T", ""]>
    %rs = graph.rsqrt %ve : tensor<?x1xf32, ["T", ""]>
    %rsb = graph.broadcast %rs : tensor<?x1xf32, ["T", ""]> -> tensor<?x?xf32, ["T", "D"]>
    %xn = graph.mul %c, %rsb : tensor<?x?xf32, ["T", "D"]>
    %gb = graph.broadcast %gamma : tensor<?xf32, ["D"]> -> tensor<?x?xf32, ["T", "D"]>
    %bb = graph.broadcast %beta : tensor<?xf32, ["D"]> -> tensor<?x?xf32, ["T", "D"]>
    %sc = graph.mul %xn, %gb : tensor<?x?xf32, ["T", "D"]>
    %o = graph.add %sc, %bb : tensor<?x?xf32, ["T", "D"]>
    graph.yield %o : tensor<?x?xf32, ["T", "D"]>
  }
  func.return %y : tensor<?x?xf32, ["T", "D"]>
}
""",
    {"T": 5, "D": 24},
    rtol=1e-4,
    atol=1e-5,
)

CASES["reduce_axis0_and_all"] = Case(
    """
func.func @main(%x: tensor<?x?xf32, ["M", "N"]>) -> (tensor<?xf32, ["N"]>, tensor<f32>, tensor<1x?xf32, ["", "N"]>, tensor<?xf32, ["M"]>) {
  %r:4 = graph.fusion_group(%x) {kernel = "k0_red", kind = "reduction"} : (tensor<?x?xf32, ["M", "N"]>) -> (tensor<?xf32, ["N"]>, tensor<f32>, tensor<1x?xf32, ["", "N"]>, tensor<?xf32, ["M"]>) {
  ^bb0(%a: tensor<?x?xf32, ["M", "N"]>):
    %s0 = graph.reduce sum %a axes = [0] : tensor<?x?xf32, ["M", "N"]> -> tensor<?xf32, ["N"]>
    %all = graph.reduce max %a axes = [0, 1] : tensor<?x?xf32, ["M", "N"]> -> tensor<f32>
    %mn = graph.reduce min %a axes = [0] keepdims : tensor<?x?xf32, ["M", "N"]> -> tensor<1x?xf32, ["", "N"]>
    %mean = graph.reduce mean %a axes = [1] : tensor<?x?xf32, ["M", "N"]> -> tensor<?xf32, ["M"]>
    graph.yield %s0, %all, %mn, %mean : tensor<?xf32, ["N"]>, tensor<f32>, tensor<1x?xf32, ["", "N"]>, tensor<?xf32, ["M"]>
  }
  func.return %r#0, %r#1, %r#2, %r#3 : tensor<?xf32, ["N"]>, tensor<f32>, tensor<1x?xf32, ["", "N"]>, tensor<?xf32, ["M"]>
}
""",
    {"M": 9, "N": 5},
)

CASES["multi_output_row"] = Case(
    """
func.func @main(%x: tensor<?x?xf32, ["N", "D"]>) -> (tensor<?x?xf32, ["N", "D"]>, tensor<?xf32, ["N"]>) {
  %r:2 = graph.fusion_group(%x) {kernel = "k0_main", kind = "reduction"} : (tensor<?x?xf32, ["N", "D"]>) -> (tensor<?x?xf32, ["N", "D"]>, tensor<?xf32, ["N"]>) {
  ^bb0(%a: tensor<?x?xf32, ["N", "D"]>):
    %s = graph.sin %a : tensor<?x?xf32, ["N", "D"]>
    %c = graph.cos %a : tensor<?x?xf32, ["N", "D"]>
    %s2 = graph.mul %s, %s : tensor<?x?xf32, ["N", "D"]>
    %c2 = graph.mul %c, %c : tensor<?x?xf32, ["N", "D"]>
    %y = graph.add %s2, %c2 : tensor<?x?xf32, ["N", "D"]>
    %t = graph.reduce sum %y axes = [1] : tensor<?x?xf32, ["N", "D"]> -> tensor<?xf32, ["N"]>
    graph.yield %y, %t : tensor<?x?xf32, ["N", "D"]>, tensor<?xf32, ["N"]>
  }
  func.return %r#0, %r#1 : tensor<?x?xf32, ["N", "D"]>, tensor<?xf32, ["N"]>
}
""",
    {"N": 4, "D": 10},
)

# -- matmul ----------------------------------------------------------------------------

CASES["matmul_bias_gelu"] = Case(
    """
func.func @main(%x: tensor<?x16xf32, ["T", ""]>, %w: tensor<16x24xf32>, %b: tensor<24xf32>) -> tensor<?x24xf32, ["T", ""]> {
  %y = graph.fusion_group(%x, %w, %b) {kernel = "k0_matmul", kind = "matmul"} : (tensor<?x16xf32, ["T", ""]>, tensor<16x24xf32>, tensor<24xf32>) -> tensor<?x24xf32, ["T", ""]> {
  ^bb0(%a: tensor<?x16xf32, ["T", ""]>, %wt: tensor<16x24xf32>, %bias: tensor<24xf32>):
    %mm = graph.matmul %a, %wt : tensor<?x16xf32, ["T", ""]>, tensor<16x24xf32> -> tensor<?x24xf32, ["T", ""]>
    %bb = graph.broadcast %bias : tensor<24xf32> -> tensor<?x24xf32, ["T", ""]>
    %s = graph.add %mm, %bb : tensor<?x24xf32, ["T", ""]>
    %g = graph.gelu %s : tensor<?x24xf32, ["T", ""]>
    graph.yield %g : tensor<?x24xf32, ["T", ""]>
  }
  func.return %y : tensor<?x24xf32, ["T", ""]>
}
""",
    {"T": 7},
    rtol=1e-4,
    atol=1e-5,
)

CASES["batched_matmul_transposed"] = Case(
    """
func.func @main(%q: tensor<2x?x8xf32, ["", "S", ""]>, %k: tensor<2x?x8xf32, ["", "S", ""]>, %w: tensor<8x3xf32>) -> (tensor<2x?x?xf32, ["", "S", "S"]>, tensor<2x?x?xf32, ["", "S", "S"]>, tensor<2x3x?xf32, ["", "", "S"]>) {
  %y:3 = graph.fusion_group(%q, %k, %w) {kernel = "k0_scores", kind = "matmul"} : (tensor<2x?x8xf32, ["", "S", ""]>, tensor<2x?x8xf32, ["", "S", ""]>, tensor<8x3xf32>) -> (tensor<2x?x?xf32, ["", "S", "S"]>, tensor<2x?x?xf32, ["", "S", "S"]>, tensor<2x3x?xf32, ["", "", "S"]>) {
  ^bb0(%a: tensor<2x?x8xf32, ["", "S", ""]>, %b: tensor<2x?x8xf32, ["", "S", ""]>, %c: tensor<8x3xf32>):
    %bt = graph.transpose %b perm = [0, 2, 1] {index_map} : tensor<2x?x8xf32, ["", "S", ""]> -> tensor<2x8x?xf32, ["", "", "S"]>
    %m1 = graph.matmul %a, %bt : tensor<2x?x8xf32, ["", "S", ""]>, tensor<2x8x?xf32, ["", "", "S"]> -> tensor<2x?x?xf32, ["", "S", "S"]>
    %m2 = graph.matmul %a, %b transpose_rhs : tensor<2x?x8xf32, ["", "S", ""]>, tensor<2x?x8xf32, ["", "S", ""]> -> tensor<2x?x?xf32, ["", "S", "S"]>
    %m3 = graph.matmul %c, %a transpose_lhs transpose_rhs : tensor<8x3xf32>, tensor<2x?x8xf32, ["", "S", ""]> -> tensor<2x3x?xf32, ["", "", "S"]>
    graph.yield %m1, %m2, %m3 : tensor<2x?x?xf32, ["", "S", "S"]>, tensor<2x?x?xf32, ["", "S", "S"]>, tensor<2x3x?xf32, ["", "", "S"]>
  }
  func.return %y#0, %y#1, %y#2 : tensor<2x?x?xf32, ["", "S", "S"]>, tensor<2x?x?xf32, ["", "S", "S"]>, tensor<2x3x?xf32, ["", "", "S"]>
}
""",
    {"S": 5},
    rtol=1e-4,
    atol=1e-5,
)

CASES["attention"] = Case(
    """
func.func @main(%q: tensor<2x?x8xf32, ["", "S", ""]>, %k: tensor<2x?x8xf32, ["", "S", ""]>, %v: tensor<2x?x8xf32, ["", "S", ""]>) -> tensor<2x?x8xf32, ["", "S", ""]> {
  %y = graph.fusion_group(%q, %k, %v) {kernel = "k0_attention", kind = "attention"} : (tensor<2x?x8xf32, ["", "S", ""]>, tensor<2x?x8xf32, ["", "S", ""]>, tensor<2x?x8xf32, ["", "S", ""]>) -> tensor<2x?x8xf32, ["", "S", ""]> {
  ^bb0(%a: tensor<2x?x8xf32, ["", "S", ""]>, %b: tensor<2x?x8xf32, ["", "S", ""]>, %c: tensor<2x?x8xf32, ["", "S", ""]>):
    %bt = graph.transpose %b perm = [0, 2, 1] : tensor<2x?x8xf32, ["", "S", ""]> -> tensor<2x8x?xf32, ["", "", "S"]>
    %s = graph.matmul %a, %bt : tensor<2x?x8xf32, ["", "S", ""]>, tensor<2x8x?xf32, ["", "", "S"]> -> tensor<2x?x?xf32, ["", "S", "S"]>
    %sc = graph.constant dense<0.353553385> : tensor<f32>
    %scb = graph.broadcast %sc : tensor<f32> -> tensor<2x?x?xf32, ["", "S", "S"]>
    %ss = graph.mul %s, %scb : tensor<2x?x?xf32, ["", "S", "S"]>
    %m = graph.reduce max %ss axes = [2] keepdims : tensor<2x?x?xf32, ["", "S", "S"]> -> tensor<2x?x1xf32, ["", "S", ""]>
    %mb = graph.broadcast %m : tensor<2x?x1xf32, ["", "S", ""]> -> tensor<2x?x?xf32, ["", "S", "S"]>
    %d = graph.sub %ss, %mb : tensor<2x?x?xf32, ["", "S", "S"]>
    %e = graph.exp %d : tensor<2x?x?xf32, ["", "S", "S"]>
    %su = graph.reduce sum %e axes = [2] keepdims : tensor<2x?x?xf32, ["", "S", "S"]> -> tensor<2x?x1xf32, ["", "S", ""]>
    %sb = graph.broadcast %su : tensor<2x?x1xf32, ["", "S", ""]> -> tensor<2x?x?xf32, ["", "S", "S"]>
    %p = graph.div %e, %sb : tensor<2x?x?xf32, ["", "S", "S"]>
    %o = graph.matmul %p, %c : tensor<2x?x?xf32, ["", "S", "S"]>, tensor<2x?x8xf32, ["", "S", ""]> -> tensor<2x?x8xf32, ["", "S", ""]>
    graph.yield %o : tensor<2x?x8xf32, ["", "S", ""]>
  }
  func.return %y : tensor<2x?x8xf32, ["", "S", ""]>
}
""",
    {"S": 6},
    rtol=1e-4,
    atol=1e-5,
)

# -- layout as index maps ------------------------------------------------------------

CASES["transpose_reshape"] = Case(
    """
func.func @main(%x: tensor<?x12xf32, ["N", ""]>) -> (tensor<3x?x4xf32, ["", "N", ""]>, tensor<12x?xf32, ["", "N"]>) {
  %r:2 = graph.fusion_group(%x) {kernel = "k0_heads", kind = "injective"} : (tensor<?x12xf32, ["N", ""]>) -> (tensor<3x?x4xf32, ["", "N", ""]>, tensor<12x?xf32, ["", "N"]>) {
  ^bb0(%a: tensor<?x12xf32, ["N", ""]>):
    %h = graph.reshape %a {index_map} : tensor<?x12xf32, ["N", ""]> -> tensor<?x3x4xf32, ["N", "", ""]>
    %t = graph.transpose %h perm = [1, 0, 2] {index_map} : tensor<?x3x4xf32, ["N", "", ""]> -> tensor<3x?x4xf32, ["", "N", ""]>
    %e = graph.exp %t : tensor<3x?x4xf32, ["", "N", ""]>
    %f = graph.reshape %t : tensor<3x?x4xf32, ["", "N", ""]> -> tensor<12x?xf32, ["", "N"]>
    graph.yield %e, %f : tensor<3x?x4xf32, ["", "N", ""]>, tensor<12x?xf32, ["", "N"]>
  }
  func.return %r#0, %r#1 : tensor<3x?x4xf32, ["", "N", ""]>, tensor<12x?xf32, ["", "N"]>
}
""",
    {"N": 5},
)

# -- dtypes and several kernels -------------------------------------------------------

CASES["f64_and_int"] = Case(
    """
func.func @main(%x: tensor<?x?xf64, ["A", "B"]>, %i: tensor<?x?xi64, ["A", "B"]>) -> (tensor<?xf64, ["A"]>, tensor<?xi64, ["B"]>, tensor<?x?xi64, ["A", "B"]>) {
  %r:3 = graph.fusion_group(%x, %i) {kernel = "k0_dt", kind = "reduction"} : (tensor<?x?xf64, ["A", "B"]>, tensor<?x?xi64, ["A", "B"]>) -> (tensor<?xf64, ["A"]>, tensor<?xi64, ["B"]>, tensor<?x?xi64, ["A", "B"]>) {
  ^bb0(%a: tensor<?x?xf64, ["A", "B"]>, %n: tensor<?x?xi64, ["A", "B"]>):
    %e = graph.exp %a : tensor<?x?xf64, ["A", "B"]>
    %s = graph.reduce sum %e axes = [1] : tensor<?x?xf64, ["A", "B"]> -> tensor<?xf64, ["A"]>
    %m = graph.reduce max %n axes = [0] : tensor<?x?xi64, ["A", "B"]> -> tensor<?xi64, ["B"]>
    %three = graph.constant dense<3> : tensor<i64>
    %tb = graph.broadcast %three : tensor<i64> -> tensor<?x?xi64, ["A", "B"]>
    %p = graph.pow %n, %tb : tensor<?x?xi64, ["A", "B"]>
    %ng = graph.neg %p : tensor<?x?xi64, ["A", "B"]>
    %ab = graph.abs %ng : tensor<?x?xi64, ["A", "B"]>
    graph.yield %s, %m, %ab : tensor<?xf64, ["A"]>, tensor<?xi64, ["B"]>, tensor<?x?xi64, ["A", "B"]>
  }
  func.return %r#0, %r#1, %r#2 : tensor<?xf64, ["A"]>, tensor<?xi64, ["B"]>, tensor<?x?xi64, ["A", "B"]>
}
""",
    {"A": 4, "B": 6},
    rtol=1e-12,
    atol=1e-12,
)

CASES["f16"] = Case(
    """
func.func @main(%x: tensor<?x8xf16, ["N", ""]>) -> tensor<?x8xf16, ["N", ""]> {
  %y = graph.fusion_group(%x) {kernel = "k0_half", kind = "reduction"} : (tensor<?x8xf16, ["N", ""]>) -> tensor<?x8xf16, ["N", ""]> {
  ^bb0(%a: tensor<?x8xf16, ["N", ""]>):
    %e = graph.exp %a : tensor<?x8xf16, ["N", ""]>
    %s = graph.reduce sum %e axes = [1] keepdims : tensor<?x8xf16, ["N", ""]> -> tensor<?x1xf16, ["N", ""]>
    %sb = graph.broadcast %s : tensor<?x1xf16, ["N", ""]> -> tensor<?x8xf16, ["N", ""]>
    %r = graph.div %e, %sb : tensor<?x8xf16, ["N", ""]>
    graph.yield %r : tensor<?x8xf16, ["N", ""]>
  }
  func.return %y : tensor<?x8xf16, ["N", ""]>
}
""",
    {"N": 3},
    rtol=2e-3,
    atol=2e-3,
)

CASES["two_kernels"] = Case(
    """
func.func @main(%x: tensor<?x?xf32, ["N", "D"]>, %w: tensor<?x?xf32, ["D", "D"]>) -> (tensor<?x?xf32, ["N", "D"]>, tensor<?x?xf32, ["N", "D"]>) {
  %h = graph.fusion_group(%x) {kernel = "k0_exp", kind = "elementwise"} : (tensor<?x?xf32, ["N", "D"]>) -> tensor<?x?xf32, ["N", "D"]> {
  ^bb0(%a: tensor<?x?xf32, ["N", "D"]>):
    %e = graph.tanh %a : tensor<?x?xf32, ["N", "D"]>
    graph.yield %e : tensor<?x?xf32, ["N", "D"]>
  }
  %y = graph.fusion_group(%h, %w) {kernel = "k1_mm", kind = "matmul"} : (tensor<?x?xf32, ["N", "D"]>, tensor<?x?xf32, ["D", "D"]>) -> tensor<?x?xf32, ["N", "D"]> {
  ^bb0(%a: tensor<?x?xf32, ["N", "D"]>, %b: tensor<?x?xf32, ["D", "D"]>):
    %m = graph.matmul %a, %b : tensor<?x?xf32, ["N", "D"]>, tensor<?x?xf32, ["D", "D"]> -> tensor<?x?xf32, ["N", "D"]>
    graph.yield %m : tensor<?x?xf32, ["N", "D"]>
  }
  func.return %y, %x : tensor<?x?xf32, ["N", "D"]>, tensor<?x?xf32, ["N", "D"]>
}
""",
    {"N": 5, "D": 6},
    rtol=1e-4,
    atol=1e-5,
)

CASES["scalars_and_passthrough"] = Case(
    """
func.func @main(%s: tensor<f32>, %m: tensor<?xi1, ["N"]>, %x: tensor<?xf32, ["N"]>) -> (tensor<f32>, tensor<?xf32, ["N"]>, tensor<?xf32, ["N"]>) {
  %r:3 = graph.fusion_group(%s, %m, %x) {kernel = "k0_scalar", kind = "elementwise"} : (tensor<f32>, tensor<?xi1, ["N"]>, tensor<?xf32, ["N"]>) -> (tensor<f32>, tensor<?xf32, ["N"]>, tensor<?xf32, ["N"]>) {
  ^bb0(%a: tensor<f32>, %c: tensor<?xi1, ["N"]>, %b: tensor<?xf32, ["N"]>):
    %e = graph.exp %a : tensor<f32>
    %eb = graph.broadcast %e : tensor<f32> -> tensor<?xf32, ["N"]>
    %w = graph.select %c, %b, %eb : tensor<?xi1, ["N"]>, tensor<?xf32, ["N"]>
    graph.yield %e, %w, %b : tensor<f32>, tensor<?xf32, ["N"]>, tensor<?xf32, ["N"]>
  }
  func.return %r#0, %r#1, %r#2 : tensor<f32>, tensor<?xf32, ["N"]>, tensor<?xf32, ["N"]>
}
""",
    {"N": 9},
)

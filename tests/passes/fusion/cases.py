"""Small hand-written graph programs for the fusion tests (textual IR), with the
number of kernels each must become."""

from __future__ import annotations

T = 'tensor<?x?xf32, ["N", "D"]>'
V = 'tensor<?xf32, ["D"]>'
R = 'tensor<?x1xf32, ["N", ""]>'
NV = 'tensor<?xf32, ["N"]>'

ALIASES = f"""
!t = {T}
!v = {V}
!r = {R}
!n = {NV}
!x = tensor<?x?xf32, ["T", "D"]>
!w = tensor<?x?xf32, ["D", "F"]>
!h = tensor<?x?xf32, ["T", "F"]>
!b = tensor<?xf32, ["F"]>
!q = tensor<?x4x?x16xf32, ["B", "", "S", ""]>
!qt = tensor<?x4x16x?xf32, ["B", "", "", "S"]>
!s = tensor<?x4x?x?xf32, ["B", "", "S", "S"]>
!sr = tensor<?x4x?x1xf32, ["B", "", "S", ""]>
"""

SINCOS = """
func.func @main(%x: !t) -> !t {
  %s = graph.sin %x : !t
  %c = graph.cos %x : !t
  %s2 = graph.mul %s, %s : !t
  %c2 = graph.mul %c, %c : !t
  %y = graph.add %s2, %c2 : !t
  func.return %y : !t
}
"""

GELU = """
func.func @main(%x: !t) -> !t {
  %half = graph.constant dense<5.000000e-01> : tensor<f32>
  %one = graph.constant dense<1.000000e+00> : tensor<f32>
  %k = graph.constant dense<7.978845e-01> : tensor<f32>
  %a = graph.constant dense<4.471500e-02> : tensor<f32>
  %x2 = graph.mul %x, %x : !t
  %x3 = graph.mul %x2, %x : !t
  %ab = graph.broadcast %a : tensor<f32> -> !t
  %t0 = graph.mul %ab, %x3 : !t
  %t1 = graph.add %x, %t0 : !t
  %kb = graph.broadcast %k : tensor<f32> -> !t
  %t2 = graph.mul %kb, %t1 : !t
  %t3 = graph.tanh %t2 : !t
  %oneb = graph.broadcast %one : tensor<f32> -> !t
  %t4 = graph.add %oneb, %t3 : !t
  %halfb = graph.broadcast %half : tensor<f32> -> !t
  %t5 = graph.mul %halfb, %x : !t
  %y = graph.mul %t5, %t4 : !t
  func.return %y : !t
}
"""

SOFTMAX = """
func.func @main(%x: !t) -> !t {
  %m = graph.reduce max %x axes = [1] keepdims : !t -> !r
  %mb = graph.broadcast %m : !r -> !t
  %d = graph.sub %x, %mb : !t
  %e = graph.exp %d : !t
  %s = graph.reduce sum %e axes = [1] keepdims : !t -> !r
  %sb = graph.broadcast %s : !r -> !t
  %y = graph.div %e, %sb : !t
  func.return %y : !t
}
"""

LAYERNORM = """
func.func @main(%x: !t, %gamma: !v, %beta: !v) -> !t {
  %eps = graph.constant dense<1.000000e-05> : tensor<f32>
  %cnt = graph.dim_size %x[1] : !t -> tensor<f32>
  %cntb = graph.broadcast %cnt : tensor<f32> -> !r
  %s1 = graph.reduce sum %x axes = [1] keepdims : !t -> !r
  %mu = graph.div %s1, %cntb : !r
  %mub = graph.broadcast %mu : !r -> !t
  %xc = graph.sub %x, %mub : !t
  %sq = graph.mul %xc, %xc : !t
  %s2 = graph.reduce sum %sq axes = [1] keepdims : !t -> !r
  %var = graph.div %s2, %cntb : !r
  %epsb = graph.broadcast %eps : tensor<f32> -> !r
  %ve = graph.add %var, %epsb : !r
  %rs = graph.rsqrt %ve : !r
  %rsb = graph.broadcast %rs : !r -> !t
  %xn = graph.mul %xc, %rsb : !t
  %gb = graph.broadcast %gamma : !v -> !t
  %xg = graph.mul %xn, %gb : !t
  %bb = graph.broadcast %beta : !v -> !t
  %y = graph.add %xg, %bb : !t
  func.return %y : !t
}
"""

BIAS_GELU_RESIDUAL = """
func.func @main(%x: !t, %b: !v, %r: !t) -> !t {
  %bb = graph.broadcast %b : !v -> !t
  %h = graph.add %x, %bb : !t
  %g = graph.gelu %h : !t
  %y = graph.add %g, %r : !t
  func.return %y : !t
}
"""

THREE_REDUCTIONS = """
func.func @main(%x: !t) -> (!n, !n, !n) {
  %s = graph.reduce sum %x axes = [1] : !t -> !n
  %m = graph.reduce max %x axes = [1] : !t -> !n
  %a = graph.reduce mean %x axes = [1] : !t -> !n
  func.return %s, %m, %a : !n, !n, !n
}
"""

COLUMNS = """
func.func @main(%x: !t) -> !t {
  %eps = graph.constant dense<1.000000e-05> : tensor<f32>
  %mu = graph.reduce mean %x axes = [0] : !t -> !v
  %mub = graph.broadcast %mu : !v -> !t
  %xc = graph.sub %x, %mub : !t
  %sq = graph.mul %xc, %xc : !t
  %var = graph.reduce mean %sq axes = [0] : !t -> !v
  %epsb = graph.broadcast %eps : tensor<f32> -> !v
  %ve = graph.add %var, %epsb : !v
  %rs = graph.rsqrt %ve : !v
  %rsb = graph.broadcast %rs : !v -> !t
  %y = graph.mul %xc, %rsb : !t
  func.return %y : !t
}
"""

MATMUL_EPILOGUE = """
func.func @main(%x: !x, %w: !w, %b: !b, %r: !h) -> !h {
  %mm = graph.matmul %x, %w : !x, !w -> !h
  %bb = graph.broadcast %b : !b -> !h
  %z = graph.add %mm, %bb : !h
  %g = graph.gelu %z : !h
  %y = graph.add %g, %r : !h
  func.return %y : !h
}
"""

ATTENTION = """
func.func @main(%q: !q, %k: !q, %v: !q) -> !q {
  %kt = graph.transpose %k perm = [0, 1, 3, 2] {index_map} : !q -> !qt
  %sc = graph.matmul %q, %kt : !q, !qt -> !s
  %c = graph.constant dense<2.500000e-01> : tensor<f32>
  %cb = graph.broadcast %c : tensor<f32> -> !s
  %s2 = graph.mul %sc, %cb : !s
  %mx = graph.reduce max %s2 axes = [3] keepdims : !s -> !sr
  %mxb = graph.broadcast %mx : !sr -> !s
  %d = graph.sub %s2, %mxb : !s
  %e = graph.exp %d : !s
  %sm = graph.reduce sum %e axes = [3] keepdims : !s -> !sr
  %smb = graph.broadcast %sm : !sr -> !s
  %p = graph.div %e, %smb : !s
  %o = graph.matmul %p, %v : !s, !q -> !q
  func.return %o : !q
}
"""

CYCLE = """
func.func @main(%x: !t) -> !t {
  %a = graph.exp %x : !t
  %s = graph.reduce sum %a axes = [0] : !t -> !v
  %n = graph.reduce sum %a axes = [1] keepdims : !t -> !r
  %nb = graph.broadcast %n : !r -> !t
  %y0 = graph.mul %a, %nb : !t
  %sb = graph.broadcast %s : !v -> !t
  %y = graph.add %y0, %sb : !t
  func.return %y : !t
}
"""

MATMUL_PROLOGUE = """
func.func @main(%x: !x, %w: !w) -> !h {
  %a = graph.relu %x : !x
  %mm = graph.matmul %a, %w : !x, !w -> !h
  func.return %mm : !h
}
"""

#: (name, program, kernels after fuse, kernels after no-fuse)
CASES = [
    ("sincos", SINCOS, 1, 5),
    ("gelu", GELU, 1, 9),
    ("softmax", SOFTMAX, 1, 7),
    ("layernorm", LAYERNORM, 1, 15),
    ("bias_gelu_residual", BIAS_GELU_RESIDUAL, 1, 4),
    ("three_reductions", THREE_REDUCTIONS, 1, 3),
    ("columns", COLUMNS, 1, 9),
    ("matmul_epilogue", MATMUL_EPILOGUE, 1, 5),
    ("attention", ATTENTION, 1, 11),
    ("cycle", CYCLE, 2, 7),
    ("matmul_prologue", MATMUL_PROLOGUE, 2, 2),
]


def program(body: str) -> str:
    return ALIASES + body

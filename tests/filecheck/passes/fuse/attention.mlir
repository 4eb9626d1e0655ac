// RUN: fusec-opt %s -p fuse | filecheck %s
// matmul → scale → mask? → softmax (decomposed) → matmul is ONE flash-style kernel
// (pattern = "attention"): the scores never reach memory.

!h = tensor<?x4x?x64xf32, ["B", "", "S", ""]>
!ht = tensor<?x4x64x?xf32, ["B", "", "", "S"]>
!s = tensor<?x4x?x?xf32, ["B", "", "S", "S"]>
!r = tensor<?x4x?x1xf32, ["B", "", "S", ""]>
!m = tensor<?x?xf32, ["S", "S"]>

// CHECK-LABEL: func.func @attention_core
// CHECK-SAME:    fusion.not_fused = []
// CHECK:         %o = graph.fusion_group(%q, %k, %v, %mask) {kernel = "k0_attention", kind = "attention", rule = "attention", pattern = "attention"}
// CHECK:           graph.transpose
// CHECK:           graph.matmul
// CHECK:           graph.reduce max
// CHECK:           graph.exp
// CHECK:           graph.reduce sum
// CHECK:           graph.div
// CHECK:           graph.matmul
// CHECK-NEXT:      graph.yield
// CHECK-NOT:     graph.fusion_group
// CHECK:         func.return %o
func.func @attention_core(%q: !h, %k: !h, %v: !h, %mask: !m) -> !h {
  %kt = graph.transpose %k perm = [0, 1, 3, 2] {index_map} : !h -> !ht
  %sc = graph.matmul %q, %kt : !h, !ht -> !s
  %c = graph.constant dense<1.250000e-01> : tensor<f32>
  %cb = graph.broadcast %c : tensor<f32> -> !s
  %s2 = graph.mul %sc, %cb : !s
  %mb = graph.broadcast %mask : !m -> !s
  %s3 = graph.add %s2, %mb : !s
  %mx = graph.reduce max %s3 axes = [3] keepdims : !s -> !r
  %mxb = graph.broadcast %mx : !r -> !s
  %d = graph.sub %s3, %mxb : !s
  %e = graph.exp %d : !s
  %sm = graph.reduce sum %e axes = [3] keepdims : !s -> !r
  %smb = graph.broadcast %sm : !r -> !s
  %p = graph.div %e, %smb : !s
  %o = graph.matmul %p, %v : !s, !h -> !h
  func.return %o : !h
}

// The whole multi-head attention sample: Q/K/V projections as one horizontal
// matmul kernel, the attention kernel, the output projection. The head split of q, k
// and v (k's transposed) and the head merge of the output join the attention core: the
// projections write plain rows, which the attention kernel reads through the index
// maps, and it writes the merged rows the output projection reads.
// CHECK-LABEL: func.func @multi_head_attention
// CHECK:         %[[Q:.*]], %[[K:.*]], %[[V:.*]] = graph.fusion_group(%x, %wq, %wk, %wv) {kernel = "k0_matmul3", kind = "matmul", rule = "horizontal_matmul"}
// CHECK-SAME:      -> (tensor<?x?x256xf32, ["B", "S", ""]>, tensor<?x?x256xf32, ["B", "S", ""]>, tensor<?x?x256xf32, ["B", "S", ""]>)
// CHECK-NOT:       graph.transpose
// CHECK:         graph.fusion_group(%[[Q]], %[[K]], %[[V]]) {kernel = "k1_attention", kind = "attention", rule = "attention", pattern = "attention"}
// CHECK-COUNT-3:   graph.reshape
// CHECK-COUNT-3:   graph.transpose
// CHECK:           graph.matmul
// CHECK:           graph.matmul
// CHECK-NEXT:      graph.transpose
// CHECK-NEXT:      graph.reshape
// CHECK-NEXT:      graph.yield
// CHECK:         graph.fusion_group({{.*}}) {kernel = "k2_matmul", kind = "matmul"
// CHECK-NOT:     graph.fusion_group
func.func @multi_head_attention(%x: tensor<?x?x256xf32, ["B", "S", ""]>, %wq: tensor<256x256xf32>, %wk: tensor<256x256xf32>, %wv: tensor<256x256xf32>, %wo: tensor<256x256xf32>) -> tensor<?x?x256xf32, ["B", "S", ""]> {
  %xq = graph.matmul %x, %wq : tensor<?x?x256xf32, ["B", "S", ""]>, tensor<256x256xf32> -> tensor<?x?x256xf32, ["B", "S", ""]>
  %xk = graph.matmul %x, %wk : tensor<?x?x256xf32, ["B", "S", ""]>, tensor<256x256xf32> -> tensor<?x?x256xf32, ["B", "S", ""]>
  %xv = graph.matmul %x, %wv : tensor<?x?x256xf32, ["B", "S", ""]>, tensor<256x256xf32> -> tensor<?x?x256xf32, ["B", "S", ""]>
  %q4 = graph.reshape %xq {index_map} : tensor<?x?x256xf32, ["B", "S", ""]> -> tensor<?x?x4x64xf32, ["B", "S", "", ""]>
  %k4 = graph.reshape %xk {index_map} : tensor<?x?x256xf32, ["B", "S", ""]> -> tensor<?x?x4x64xf32, ["B", "S", "", ""]>
  %v4 = graph.reshape %xv {index_map} : tensor<?x?x256xf32, ["B", "S", ""]> -> tensor<?x?x4x64xf32, ["B", "S", "", ""]>
  %q = graph.transpose %q4 perm = [0, 2, 1, 3] {index_map} : tensor<?x?x4x64xf32, ["B", "S", "", ""]> -> !h
  %kt = graph.transpose %k4 perm = [0, 2, 3, 1] {index_map} : tensor<?x?x4x64xf32, ["B", "S", "", ""]> -> !ht
  %v = graph.transpose %v4 perm = [0, 2, 1, 3] {index_map} : tensor<?x?x4x64xf32, ["B", "S", "", ""]> -> !h
  %sc = graph.matmul %q, %kt : !h, !ht -> !s
  %c = graph.constant dense<1.250000e-01> : tensor<f32>
  %cb = graph.broadcast %c : tensor<f32> -> !s
  %s2 = graph.mul %sc, %cb : !s
  %mx = graph.reduce max %s2 axes = [3] keepdims : !s -> !r
  %mxb = graph.broadcast %mx : !r -> !s
  %d = graph.sub %s2, %mxb : !s
  %e = graph.exp %d : !s
  %sm = graph.reduce sum %e axes = [3] keepdims : !s -> !r
  %smb = graph.broadcast %sm : !r -> !s
  %p = graph.div %e, %smb : !s
  %o = graph.matmul %p, %v : !s, !h -> !h
  %ot = graph.transpose %o perm = [0, 2, 1, 3] {index_map} : !h -> tensor<?x?x4x64xf32, ["B", "S", "", ""]>
  %om = graph.reshape %ot {index_map} : tensor<?x?x4x64xf32, ["B", "S", "", ""]> -> tensor<?x?x256xf32, ["B", "S", ""]>
  %y = graph.matmul %om, %wo : tensor<?x?x256xf32, ["B", "S", ""]>, tensor<256x256xf32> -> tensor<?x?x256xf32, ["B", "S", ""]>
  func.return %y : tensor<?x?x256xf32, ["B", "S", ""]>
}

// The probabilities are also a result: the scores must reach memory, so the
// pattern does not apply and the softmax is a reduction kernel of its own.
// CHECK-LABEL: func.func @probabilities_escape
// CHECK-NOT:     pattern = "attention"
// CHECK:         kind = "matmul"
// CHECK:         kind = "reduction"
// CHECK:         kind = "matmul"
func.func @probabilities_escape(%q: !h, %kt: !ht, %v: !h) -> (!h, !s) {
  %sc = graph.matmul %q, %kt : !h, !ht -> !s
  %mx = graph.reduce max %sc axes = [3] keepdims : !s -> !r
  %mxb = graph.broadcast %mx : !r -> !s
  %d = graph.sub %sc, %mxb : !s
  %e = graph.exp %d : !s
  %sm = graph.reduce sum %e axes = [3] keepdims : !s -> !r
  %smb = graph.broadcast %sm : !r -> !s
  %p = graph.div %e, %smb : !s
  %o = graph.matmul %p, %v : !s, !h -> !h
  func.return %o, %p : !h, !s
}

// K^T read through the matmul's transpose_rhs flag, the mask applied with a select.
// CHECK-LABEL: func.func @attention_transpose_rhs_select_mask
// CHECK-SAME:    fusion.not_fused = []
// CHECK:         %o = graph.fusion_group(%q, %k, %v, %keep) {kernel = "k0_attention", kind = "attention", rule = "attention", pattern = "attention"}
// CHECK:           graph.matmul %{{.*}}, %{{.*}} transpose_rhs
// CHECK:           graph.select
// CHECK:           graph.matmul
// CHECK-NEXT:      graph.yield
// CHECK-NOT:     graph.fusion_group
func.func @attention_transpose_rhs_select_mask(%q: !h, %k: !h, %v: !h, %keep: tensor<?x?xi1, ["S", "S"]>) -> !h {
  %sc = graph.matmul %q, %k transpose_rhs : !h, !h -> !s
  %kb = graph.broadcast %keep : tensor<?x?xi1, ["S", "S"]> -> tensor<?x4x?x?xi1, ["B", "", "S", "S"]>
  %ninf = graph.constant dense<-1.000000e+09> : tensor<f32>
  %nb = graph.broadcast %ninf : tensor<f32> -> !s
  %s3 = graph.select %kb, %sc, %nb : tensor<?x4x?x?xi1, ["B", "", "S", "S"]>, !s
  %mx = graph.reduce max %s3 axes = [3] keepdims : !s -> !r
  %mxb = graph.broadcast %mx : !r -> !s
  %d = graph.sub %s3, %mxb : !s
  %e = graph.exp %d : !s
  %sm = graph.reduce sum %e axes = [3] keepdims : !s -> !r
  %smb = graph.broadcast %sm : !r -> !s
  %p = graph.div %e, %smb : !s
  %o = graph.matmul %p, %v : !s, !h -> !h
  func.return %o : !h
}

// RUN: fusec-opt %s -p fuse | filecheck %s
// Edges left between kernels, each with its named reason in fusion.not_fused.

!t = tensor<?x?xf32, ["N", "D"]>
!q = tensor<?x?xf32, ["N", "N"]>
!v = tensor<?xf32, ["D"]>
!r = tensor<?x1xf32, ["N", ""]>

// exp → softmax (an opaque composite) → add, and exp → add: merging exp and add
// would make the add's kernel both feed and consume the softmax's.
// CHECK-LABEL: func.func @cycle_through_opaque
// CHECK-SAME:    {producer = "exp_0", consumer = "softmax_1", reason = "softmax is opaque: no rule fuses into it"}
// CHECK-SAME:    {producer = "exp_0", consumer = "add_2", reason = "would form a cycle through k1_softmax"}
// CHECK-SAME:    {producer = "softmax_1", consumer = "add_2", reason = "softmax is opaque: no rule fuses it"}
// CHECK:         graph.fusion_group(%x) {kernel = "k0_exp", kind = "elementwise", rule = "none"}
// CHECK:         graph.fusion_group(%{{.*}}) {kernel = "k1_softmax", kind = "opaque", rule = "none"}
// CHECK:         graph.fusion_group(%{{.*}}, %{{.*}}) {kernel = "k2_add", kind = "elementwise", rule = "none"}
func.func @cycle_through_opaque(%x: !q) -> !q {
  %a = graph.exp %x : !q
  %s = graph.softmax %a axis = 1 : !q
  %y = graph.add %a, %s : !q
  func.return %y : !q
}

// exp(x) feeds a matmul (no prologue fusion) and, through a row sum of the
// matmul's result, the final add: exp and the add would close a cycle.
// CHECK-LABEL: func.func @cycle_through_matmul
// CHECK-SAME:    reason = "would form a cycle through k1_matmul"
// CHECK-COUNT-3: graph.fusion_group
// CHECK-NOT:     graph.fusion_group
func.func @cycle_through_matmul(%x: !q, %w: !q) -> !q {
  %a = graph.exp %x : !q
  %h = graph.matmul %a, %w : !q, !q -> !q
  %s = graph.reduce sum %h axes = [1] keepdims : !q -> !r
  %sb = graph.broadcast %s : !r -> !q
  %y = graph.add %a, %sb : !q
  func.return %y : !q
}

// Row sums broadcast back and then summed over columns: two reductions over
// different axes are two kernels.
// CHECK-LABEL: func.func @reduce_rows_then_columns
// CHECK-SAME:    reason = "reduction feeds a broadcast of another reduction ([N, D] axes [1] vs [N, D] axes [0])"
// CHECK:         kind = "reduction", rule = "none"
// CHECK:         kind = "reduction", rule = "reduce_prologue"
// CHECK-NOT:     graph.fusion_group
func.func @reduce_rows_then_columns(%x: !t) -> !v {
  %s1 = graph.reduce sum %x axes = [1] keepdims : !t -> !r
  %b1 = graph.broadcast %s1 : !r -> !t
  %y = graph.sub %x, %b1 : !t
  %s0 = graph.reduce sum %y axes = [0] : !t -> !v
  func.return %s0 : !v
}

// A transpose that is a real layout change (no index_map) is not a prologue of a
// reduction.
// CHECK-LABEL: func.func @transpose_into_reduction
// CHECK-SAME:    {producer = "transpose_0", consumer = "reduce_sum_1", reason = "no rule fuses transpose into reduction"}
// CHECK:         kind = "injective", rule = "none"
// CHECK:         kind = "reduction", rule = "none"
func.func @transpose_into_reduction(%x: !t) -> tensor<?xf32, ["D"]> {
  %t = graph.transpose %x perm = [1, 0] : !t -> tensor<?x?xf32, ["D", "N"]>
  %s = graph.reduce sum %t axes = [1] : tensor<?x?xf32, ["D", "N"]> -> tensor<?xf32, ["D"]>
  func.return %s : tensor<?xf32, ["D"]>
}

// exp(b) is both a result (size D) and broadcast into the N x D kernel: one loop
// nest cannot write both.
// CHECK-LABEL: func.func @outputs_of_two_sizes
// CHECK-SAME:    {producer = "exp_0", consumer = "broadcast_1", reason = "outputs of different sizes ([D], [N, D]) need separate loop nests"}
// CHECK:         kernel = "k0_exp"
// CHECK:         kernel = "k1_add"
func.func @outputs_of_two_sizes(%x: !t, %b: !v) -> (!t, !v) {
  %e = graph.exp %b : !v
  %eb = graph.broadcast %e : !v -> !t
  %y = graph.add %x, %eb : !t
  func.return %y, %e : !t, !v
}

// A row reduction of a matmul's result is not a matmul epilogue.
// CHECK-LABEL: func.func @matmul_then_reduce
// CHECK-SAME:    reason = "no rule fuses a matmul into a reduction (only the attention pattern does)"
// CHECK:         kind = "matmul"
// CHECK:         kind = "reduction"
func.func @matmul_then_reduce(%x: !q, %w: !q) -> !r {
  %h = graph.matmul %x, %w : !q, !q -> !q
  %s = graph.reduce max %h axes = [1] keepdims : !q -> !r
  func.return %s : !r
}

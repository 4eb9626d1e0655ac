// RUN: fusec-opt %s -p split-library-groups | filecheck %s
// A library group becomes its library calls and the kernels between them: the
// matmul with the layout ops of its operands (strided views), then the epilogue of
// the same level, the bias broadcast moved in with its reader.

!x = tensor<?x16xf32, ["T", ""]>
!w = tensor<24x16xf32>
!y = tensor<?x24xf32, ["T", ""]>

// CHECK-LABEL: func.func @bias_relu
// CHECK:         %[[M:.*]] = graph.fusion_group(%x, %w) {kernel = "k0_matmul_gemm0", kind = "matmul", strategy = "library", part_of = "k0_matmul"}
// CHECK:           graph.transpose
// CHECK-NEXT:      graph.matmul
// CHECK-NEXT:      graph.yield
// CHECK:         %[[E:.*]] = graph.fusion_group(%b, %[[M]]) {kernel = "k0_matmul_epilogue1", kind = "elementwise", rule = "split", part_of = "k0_matmul"}
// CHECK:           graph.broadcast
// CHECK-NEXT:      graph.add
// CHECK-NEXT:      graph.relu
// CHECK:         func.return %[[E]]
func.func @bias_relu(%x: !x, %w: !w, %b: tensor<24xf32>) -> !y {
  %y = graph.fusion_group(%x, %w, %b) {kernel = "k0_matmul", kind = "matmul", strategy = "library"} : (!x, !w, tensor<24xf32>) -> !y {
  ^bb0(%a: !x, %wt: !w, %bias: tensor<24xf32>):
    %bb = graph.broadcast %bias : tensor<24xf32> -> !y
    %t = graph.transpose %wt perm = [1, 0] {index_map} : !w -> tensor<16x24xf32>
    %mm = graph.matmul %a, %t : !x, tensor<16x24xf32> -> !y
    %s = graph.add %mm, %bb : !y
    %g = graph.relu %s : !y
    graph.yield %g : !y
  }
  func.return %y : !y
}

// Attention: the scores' call, the softmax rows between the calls, the call on V.
!q = tensor<?x64xf32, ["S", ""]>
!s = tensor<?x?xf32, ["S", "S"]>
// CHECK-LABEL: func.func @attention
// CHECK:         %[[S:.*]] = graph.fusion_group(%q, %k) {kernel = "k0_attention_gemm0", kind = "matmul", strategy = "library", part_of = "k0_attention"}
// CHECK:           graph.matmul {{.*}} transpose_rhs
// CHECK:         %[[P:.*]] = graph.fusion_group(%[[S]]) {kernel = "k0_attention_rows1", kind = "reduction", rule = "split", part_of = "k0_attention"}
// CHECK:           graph.reduce max
// CHECK:           graph.reduce sum
// CHECK:         %[[O:.*]] = graph.fusion_group(%[[P]], %v) {kernel = "k0_attention_gemm2", kind = "matmul", strategy = "library", part_of = "k0_attention"}
// CHECK:         func.return %[[O]]
func.func @attention(%q: !q, %k: !q, %v: !q) -> !q {
  %o = graph.fusion_group(%q, %k, %v) {kernel = "k0_attention", kind = "attention", strategy = "library"} : (!q, !q, !q) -> !q {
  ^bb0(%qa: !q, %ka: !q, %va: !q):
    %sc = graph.matmul %qa, %ka transpose_rhs : !q, !q -> !s
    %c = graph.constant dense<1.250000e-01> : tensor<f32>
    %cb = graph.broadcast %c : tensor<f32> -> !s
    %z = graph.mul %sc, %cb : !s
    %m = graph.reduce max %z axes = [1] keepdims : !s -> tensor<?x1xf32, ["S", ""]>
    %mb = graph.broadcast %m : tensor<?x1xf32, ["S", ""]> -> !s
    %d = graph.sub %z, %mb : !s
    %e = graph.exp %d : !s
    %t = graph.reduce sum %e axes = [1] keepdims : !s -> tensor<?x1xf32, ["S", ""]>
    %tb = graph.broadcast %t : tensor<?x1xf32, ["S", ""]> -> !s
    %p = graph.div %e, %tb : !s
    %pv = graph.matmul %p, %va : !s, !q -> !q
    graph.yield %pv : !q
  }
  func.return %o : !q
}

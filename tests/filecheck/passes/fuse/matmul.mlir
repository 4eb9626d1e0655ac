// RUN: fusec-opt %s -p fuse | filecheck %s
// Matmul epilogues (bias, activation, residual) go into the matmul's kernel;
// prologues into a matmul are not fused.

!x = tensor<?x?xf32, ["T", "D"]>
!w = tensor<?x?xf32, ["D", "F"]>
!h = tensor<?x?xf32, ["T", "F"]>
!b = tensor<?xf32, ["F"]>

// gelu(x @ w + b) + r (r of the output's shape): one kernel.
// CHECK-LABEL: func.func @matmul_bias_gelu_residual
// CHECK-SAME:    fusion.not_fused = []
// CHECK:         %y = graph.fusion_group(%x, %w, %b, %r) {kernel = "k0_matmul_add_gelu", kind = "matmul", rule = "matmul_epilogue"}
// CHECK-NEXT:    ^bb0(
// CHECK-NEXT:      graph.matmul
// CHECK-NEXT:      graph.broadcast
// CHECK-NEXT:      graph.add
// CHECK-NEXT:      graph.gelu
// CHECK-NEXT:      graph.add
// CHECK-NEXT:      graph.yield
// CHECK-NOT:     graph.fusion_group
func.func @matmul_bias_gelu_residual(%x: !x, %w: !w, %b: !b, %r: !h) -> !h {
  %mm = graph.matmul %x, %w : !x, !w -> !h
  %bb = graph.broadcast %b : !b -> !h
  %z = graph.add %mm, %bb : !h
  %g = graph.gelu %z : !h
  %y = graph.add %g, %r : !h
  func.return %y : !h
}

// An elementwise op feeding a matmul stays a kernel of its own.
// CHECK-LABEL: func.func @matmul_prologue
// CHECK-SAME:    fusion.not_fused = [{producer = "relu_0", consumer = "matmul_1", reason = "matmul prologue is not fused"}]
// CHECK:         graph.fusion_group(%x) {kernel = "k0_relu", kind = "elementwise", rule = "none"}
// CHECK:         graph.fusion_group(%w, %{{.*}}) {kernel = "k1_matmul", kind = "matmul", rule = "none"}
func.func @matmul_prologue(%x: !x, %w: !w) -> !h {
  %a = graph.relu %x : !x
  %mm = graph.matmul %a, %w : !x, !w -> !h
  func.return %mm : !h
}

// Two matmuls in a row: the first one's epilogue stays with it, the second
// matmul is a kernel of its own.
// CHECK-LABEL: func.func @matmul_chain
// CHECK-SAME:    {producer = "relu_1", consumer = "matmul_2", reason = "matmul prologue is not fused"}
// CHECK:         graph.fusion_group(%x, %w1) {kernel = "k0_matmul_relu", kind = "matmul", rule = "matmul_epilogue"}
// CHECK:         graph.fusion_group(%w2, %{{.*}}) {kernel = "k1_matmul", kind = "matmul", rule = "none"}
func.func @matmul_chain(%x: !x, %w1: !w, %w2: tensor<?x?xf32, ["F", "D"]>) -> !x {
  %h = graph.matmul %x, %w1 : !x, !w -> !h
  %a = graph.relu %h : !h
  %y = graph.matmul %a, %w2 : !h, tensor<?x?xf32, ["F", "D"]> -> !x
  func.return %y : !x
}

// Matmul straight into matmul: no rule outside the attention pattern.
// CHECK-LABEL: func.func @matmul_matmul
// CHECK-SAME:    reason = "matmul feeds a matmul outside the attention pattern"
// CHECK-COUNT-2: kind = "matmul", rule = "none"
func.func @matmul_matmul(%x: !x, %w1: !w, %w2: tensor<?x?xf32, ["F", "D"]>) -> !x {
  %h = graph.matmul %x, %w1 : !x, !w -> !h
  %y = graph.matmul %h, %w2 : !h, tensor<?x?xf32, ["F", "D"]> -> !x
  func.return %y : !x
}

// Q, K, V projections of one input: sibling matmuls sharing their left operand
// become one multi-output kernel.
// CHECK-LABEL: func.func @qkv_projections
// CHECK:         %q, %k, %v = graph.fusion_group(%x, %wq, %wk, %wv) {kernel = "k0_matmul3", kind = "matmul", rule = "horizontal_matmul"}
// CHECK-NOT:     graph.fusion_group
func.func @qkv_projections(%x: !x, %wq: !w, %wk: !w, %wv: !w) -> (!h, !h, !h) {
  %q = graph.matmul %x, %wq : !x, !w -> !h
  %k = graph.matmul %x, %wk : !x, !w -> !h
  %v = graph.matmul %x, %wv : !x, !w -> !h
  func.return %q, %k, %v : !h, !h, !h
}

// A layout index map on a matmul operand is read through, not materialised.
// CHECK-LABEL: func.func @transposed_operand
// CHECK:         graph.fusion_group(%x, %wt) {kernel = "k0_matmul", kind = "matmul", rule = "matmul_epilogue"}
// CHECK-NEXT:    ^bb0(
// CHECK-NEXT:      graph.transpose
// CHECK-NEXT:      graph.matmul
// CHECK-NOT:     graph.fusion_group
func.func @transposed_operand(%x: !x, %wt: tensor<?x?xf32, ["F", "D"]>) -> !h {
  %w = graph.transpose %wt perm = [1, 0] {index_map} : tensor<?x?xf32, ["F", "D"]> -> !w
  %mm = graph.matmul %x, %w : !x, !w -> !h
  func.return %mm : !h
}

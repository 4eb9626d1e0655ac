// RUN: fusec-opt %s -p fuse | filecheck %s
// RUN: fusec-opt %s -p fuse --print-op-generic | fusec-opt | filecheck %s
// Reductions with their elementwise prologue and epilogue, dependent reductions
// over the same rows, and sibling reductions of one input: one kernel each.

!t = tensor<?x?xf32, ["N", "D"]>
!v = tensor<?xf32, ["D"]>
!r = tensor<?x1xf32, ["N", ""]>
!n = tensor<?xf32, ["N"]>

// softmax over rows, written out: max, subtract, exp, sum, divide.
// CHECK-LABEL: func.func @softmax_rows
// CHECK-SAME:    fusion.not_fused = []
// CHECK:         %y = graph.fusion_group(%x) {kernel = "k0_softmax", kind = "reduction", rule = "reduce_rows"}
// CHECK-NEXT:    ^bb0(%{{.*}}: tensor<?x?xf32, ["N", "D"]>):
// CHECK-NEXT:      graph.reduce max
// CHECK-NEXT:      graph.broadcast
// CHECK-NEXT:      graph.sub
// CHECK-NEXT:      graph.exp
// CHECK-NEXT:      graph.reduce sum
// CHECK-NEXT:      graph.broadcast
// CHECK-NEXT:      graph.div
// CHECK-NEXT:      graph.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y
func.func @softmax_rows(%x: !t) -> !t {
  %m = graph.reduce max %x axes = [1] keepdims : !t -> !r
  %mb = graph.broadcast %m : !r -> !t
  %d = graph.sub %x, %mb : !t
  %e = graph.exp %d : !t
  %s = graph.reduce sum %e axes = [1] keepdims : !t -> !r
  %sb = graph.broadcast %s : !r -> !t
  %y = graph.div %e, %sb : !t
  func.return %y : !t
}

// layernorm over rows: mean, centre, variance, rsqrt(var + eps), * gamma + beta;
// the mean divides by a symbolic size (graph.dim_size, cloned into the kernel).
// CHECK-LABEL: func.func @layernorm_rows
// CHECK-SAME:    fusion.not_fused = []
// CHECK:         %y = graph.fusion_group(%x, %gamma, %beta) {kernel = "k0_layernorm", kind = "reduction", rule = "reduce_rows"}
// CHECK:           graph.dim_size
// CHECK:           graph.reduce sum
// CHECK:           graph.reduce sum
// CHECK:           graph.rsqrt
// CHECK:           graph.yield
// CHECK-NOT:     graph.fusion_group
func.func @layernorm_rows(%x: !t, %gamma: !v, %beta: !v) -> !t {
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

// Three reductions of one input (sum, max, mean over rows): horizontal fusion,
// one kernel with three outputs that reads x once.
// CHECK-LABEL: func.func @three_reductions
// CHECK-SAME:    fusion.not_fused = []
// CHECK:         %s, %m, %a = graph.fusion_group(%x) {kernel = "k0_reduce_sum_max_mean", kind = "reduction", rule = "horizontal_reduce"}
// CHECK-SAME:      -> (tensor<?xf32, ["N"]>, tensor<?xf32, ["N"]>, tensor<?xf32, ["N"]>)
// CHECK-NOT:     graph.fusion_group
// CHECK:         func.return %s, %m, %a
func.func @three_reductions(%x: !t) -> (!n, !n, !n) {
  %s = graph.reduce sum %x axes = [1] : !t -> !n
  %m = graph.reduce max %x axes = [1] : !t -> !n
  %a = graph.reduce mean %x axes = [1] : !t -> !n
  func.return %s, %m, %a : !n, !n, !n
}

// Mean and variance over axis 0 (not the last): the column statistics broadcast
// back over the reduced axis, one kernel.
// CHECK-LABEL: func.func @normalize_columns
// CHECK-SAME:    fusion.not_fused = []
// CHECK:         %y = graph.fusion_group(%x) {kernel = "k0_layernorm", kind = "reduction", rule = "reduce_rows"}
// CHECK:           graph.reduce mean %{{.*}} axes = [0]
// CHECK:           graph.reduce mean %{{.*}} axes = [0]
// CHECK:           graph.yield
// CHECK-NOT:     graph.fusion_group
func.func @normalize_columns(%x: !t) -> !t {
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

// rmsnorm plus a residual: one reduction with prologue and epilogue.
// CHECK-LABEL: func.func @rmsnorm_residual
// CHECK:         graph.fusion_group(%x, %g) {kernel = "k0_rmsnorm", kind = "reduction", rule = "reduce_epilogue"}
// CHECK-NOT:     graph.fusion_group
func.func @rmsnorm_residual(%x: !t, %g: !v) -> !t {
  %eps = graph.constant dense<1.000000e-06> : tensor<f32>
  %sq = graph.mul %x, %x : !t
  %ms = graph.reduce mean %sq axes = [1] keepdims : !t -> !r
  %epsb = graph.broadcast %eps : tensor<f32> -> !r
  %ve = graph.add %ms, %epsb : !r
  %rs = graph.rsqrt %ve : !r
  %rsb = graph.broadcast %rs : !r -> !t
  %xn = graph.mul %x, %rsb : !t
  %gb = graph.broadcast %g : !v -> !t
  %xg = graph.mul %xn, %gb : !t
  %y = graph.add %x, %xg : !t
  func.return %y : !t
}

// A sum over all axes: the scalar comes back as a broadcast over everything.
// CHECK-LABEL: func.func @normalize_total
// CHECK:         graph.fusion_group(%x) {kernel = "k0_reduce_sum", kind = "reduction", rule = "reduce_epilogue"}
// CHECK-NOT:     graph.fusion_group
func.func @normalize_total(%x: !t) -> !t {
  %s = graph.reduce sum %x axes = [0, 1] : !t -> tensor<f32>
  %sb = graph.broadcast %s : tensor<f32> -> !t
  %y = graph.div %x, %sb : !t
  func.return %y : !t
}

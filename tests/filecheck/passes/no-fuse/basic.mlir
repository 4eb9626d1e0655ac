// RUN: fusec-opt %s -p no-fuse | filecheck %s
// The unfused baseline: one kernel per op, constants (and dim_size, and a
// broadcast of a constant, which moves no data) cloned into the kernels that use
// them, never a kernel of their own nor an input.

!t = tensor<?x?xf32, ["N", "D"]>
!r = tensor<?x1xf32, ["N", ""]>

// CHECK-LABEL: func.func @scaled_softmax
// CHECK-SAME:    {producer = "mul_0", consumer = "reduce_max_1", reason = "fusion disabled (no-fuse)"}
// CHECK:         %xs = graph.fusion_group(%x) {kernel = "k0_mul", kind = "elementwise", rule = "none"}
// CHECK-NEXT:    ^bb0(%{{.*}}: tensor<?x?xf32, ["N", "D"]>):
// CHECK-NEXT:      graph.constant dense<5.000000e-01>
// CHECK-NEXT:      graph.broadcast
// CHECK-NEXT:      graph.mul
// CHECK-NEXT:      graph.yield
// CHECK:         %m = graph.fusion_group(%xs) {kernel = "k1_reduce_max", kind = "reduction", rule = "none"}
// CHECK:         %mb = graph.fusion_group(%m) {kernel = "k2_broadcast", kind = "elementwise", rule = "none"}
// CHECK:         %d = graph.fusion_group(%xs, %mb) {kernel = "k3_sub", kind = "elementwise", rule = "none"}
// CHECK:         %e = graph.fusion_group(%d) {kernel = "k4_exp", kind = "elementwise", rule = "none"}
// CHECK:         %s = graph.fusion_group(%e) {kernel = "k5_reduce_sum", kind = "reduction", rule = "none"}
// CHECK:         %sb = graph.fusion_group(%s) {kernel = "k6_broadcast", kind = "elementwise", rule = "none"}
// CHECK:         %y = graph.fusion_group(%e, %sb) {kernel = "k7_div", kind = "elementwise", rule = "none"}
// CHECK-NOT:     graph.fusion_group
// CHECK-NOT:     graph.constant
// CHECK:         func.return %y
func.func @scaled_softmax(%x: !t) -> !t {
  %c = graph.constant dense<5.000000e-01> : tensor<f32>
  %cb = graph.broadcast %c : tensor<f32> -> !t
  %xs = graph.mul %x, %cb : !t
  %m = graph.reduce max %xs axes = [1] keepdims : !t -> !r
  %mb = graph.broadcast %m : !r -> !t
  %d = graph.sub %xs, %mb : !t
  %e = graph.exp %d : !t
  %s = graph.reduce sum %e axes = [1] keepdims : !t -> !r
  %sb = graph.broadcast %s : !r -> !t
  %y = graph.div %e, %sb : !t
  func.return %y : !t
}

// A mean over a symbolic size: dim_size reads x's shape inside each kernel that
// needs it (x is then an input of that kernel, moving no bytes).
// CHECK-LABEL: func.func @mean_rows
// CHECK:         graph.fusion_group(%x) {kernel = "k0_reduce_sum"
// CHECK:         graph.fusion_group(%x, %s) {kernel = "k1_div"
// CHECK-NEXT:    ^bb0(
// CHECK-NEXT:      graph.dim_size
// CHECK-NEXT:      graph.broadcast
// CHECK-NEXT:      graph.div
func.func @mean_rows(%x: !t) -> !r {
  %n = graph.dim_size %x[1] : !t -> tensor<f32>
  %s = graph.reduce sum %x axes = [1] keepdims : !t -> !r
  %nb = graph.broadcast %n : tensor<f32> -> !r
  %y = graph.div %s, %nb : !r
  func.return %y : !r
}

// A constant returned as it is stays outside every kernel.
// CHECK-LABEL: func.func @constant_result
// CHECK:         %c = graph.constant
// CHECK:         graph.fusion_group(%x) {kernel = "k0_neg"
// CHECK:         func.return %{{.*}}, %c
func.func @constant_result(%x: !t) -> (!t, tensor<f32>) {
  %c = graph.constant dense<1.000000e+00> : tensor<f32>
  %y = graph.neg %x : !t
  func.return %y, %c : !t, tensor<f32>
}

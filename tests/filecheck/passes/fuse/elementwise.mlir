// RUN: fusec-opt %s -p fuse | filecheck %s
// RUN: fusec-opt %s -p fuse --print-op-generic | fusec-opt | filecheck %s
// Vertical elementwise fusion (EW+): each function becomes one kernel that reads
// its inputs once and writes its result once.

!t = tensor<?x?xf32, ["N", "D"]>
!v = tensor<?xf32, ["D"]>

// sin(x)**2 + cos(x)**2, decomposed: sin, cos, two squares, an add.
// CHECK-LABEL: func.func @sincos
// CHECK-SAME:    fusion.not_fused = []
// CHECK:         %{{.*}} = graph.fusion_group(%x) {kernel = "k0_sin_cos_mul", kind = "elementwise", rule = "ew_chain"}
// CHECK-NEXT:    ^bb0(%{{.*}}: tensor<?x?xf32, ["N", "D"]>):
// CHECK-NEXT:      graph.sin
// CHECK-NEXT:      graph.cos
// CHECK-NEXT:      graph.mul
// CHECK-NEXT:      graph.mul
// CHECK-NEXT:      graph.add
// CHECK-NEXT:      graph.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return
func.func @sincos(%x: !t) -> !t {
  %s = graph.sin %x : !t
  %c = graph.cos %x : !t
  %s2 = graph.mul %s, %s : !t
  %c2 = graph.mul %c, %c : !t
  %y = graph.add %s2, %c2 : !t
  func.return %y : !t
}

// GELU (tanh approximation) written out with primitives; scalar literals are
// constants broadcast to the tensor's shape, cloned into the kernel.
// CHECK-LABEL: func.func @gelu_chain
// CHECK-SAME:    fusion.not_fused = []
// CHECK:         graph.fusion_group(%x) {kernel = "k0_mul_add_tanh", kind = "elementwise", rule = "ew_chain"}
// CHECK-COUNT-4: graph.constant
// CHECK:         graph.tanh
// CHECK:         graph.yield
// CHECK-NOT:     graph.fusion_group
// CHECK:         func.return
func.func @gelu_chain(%x: !t) -> !t {
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

// gelu(x + b) + r with the bias row b broadcast over the rows: one kernel with
// three inputs (x, b, r) and one output.
// CHECK-LABEL: func.func @bias_gelu_residual
// CHECK-SAME:    fusion.not_fused = []
// CHECK:         graph.fusion_group(%x, %b, %r) {kernel = "k0_add_gelu", kind = "elementwise", rule = "ew_chain"}
// CHECK-NEXT:    ^bb0(%{{.*}}: tensor<?x?xf32, ["N", "D"]>, %{{.*}}: tensor<?xf32, ["D"]>, %{{.*}}: tensor<?x?xf32, ["N", "D"]>):
// CHECK-NEXT:      graph.broadcast
// CHECK-NEXT:      graph.add
// CHECK-NEXT:      graph.gelu
// CHECK-NEXT:      graph.add
// CHECK-NEXT:      graph.yield
// CHECK-NOT:     graph.fusion_group
func.func @bias_gelu_residual(%x: !t, %b: !v, %r: !t) -> !t {
  %bb = graph.broadcast %b : !v -> !t
  %h = graph.add %x, %bb : !t
  %g = graph.gelu %h : !t
  %y = graph.add %g, %r : !t
  func.return %y : !t
}

// Two results of one elementwise chain: one kernel, two outputs.
// CHECK-LABEL: func.func @two_results
// CHECK:         %e, %n = graph.fusion_group(%x) {kernel = "k0_exp_neg", kind = "elementwise", rule = "ew_chain"}
// CHECK-NOT:     graph.fusion_group
func.func @two_results(%x: !t) -> (!t, !t) {
  %e = graph.exp %x : !t
  %n = graph.neg %e : !t
  func.return %e, %n : !t, !t
}

// A layout op that is free as an index map fuses with its elementwise consumer.
// CHECK-LABEL: func.func @index_map_chain
// CHECK:         graph.fusion_group(%x) {kernel = "k0_exp", kind = "elementwise", rule = "ew_chain"}
// CHECK:           graph.transpose
// CHECK-NEXT:      graph.exp
// CHECK-NOT:     graph.fusion_group
func.func @index_map_chain(%x: !t) -> tensor<?x?xf32, ["D", "N"]> {
  %t = graph.transpose %x perm = [1, 0] {index_map} : !t -> tensor<?x?xf32, ["D", "N"]>
  %e = graph.exp %t : tensor<?x?xf32, ["D", "N"]>
  func.return %e : tensor<?x?xf32, ["D", "N"]>
}

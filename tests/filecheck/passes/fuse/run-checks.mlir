// RUN: fusec-opt %s -p dce,fuse | filecheck %s
// RUN: fusec-opt %s -p dce,no-fuse | filecheck %s --check-prefix=UNFUSED
// An op that checks its operands as it runs (a gather, an integer power of a variable
// exponent) is computed whole, as NumPy evaluates it (docs/reference.md, "Numerics"):
// dce keeps it though nothing reads it, and a group that would compute only part of
// it, or none, stores it whole as one more output (passes/fusion/run_checks.py).
// (Exponents are absolute values and tables have 8 rows, so that tests/passes/fusion/
// test_numerics.py's random inputs, integers in [-4, 4], pass the checks.)

// CHECK-LABEL: func.func @slice_of_a_power
// CHECK:         %p, %{{.*}} = graph.fusion_group(%x, %e)
// CHECK:           %p_1 = graph.pow
// CHECK-NEXT:      %[[S:.*]] = graph.slice %p_1
// CHECK-NEXT:      graph.yield %p_1, %[[S]] : tensor<3xi64>, tensor<2xi64>
// UNFUSED-LABEL: func.func @slice_of_a_power
// UNFUSED:         %p = graph.fusion_group(%x, %a) {kernel = "k1_pow"
// UNFUSED:         graph.fusion_group(%p) {kernel = "k2_slice"
func.func @slice_of_a_power(%x: tensor<3xi64>, %e: tensor<3xi64>) -> tensor<2xi64> {
  %a = graph.abs %e : tensor<3xi64>
  %p = graph.pow %x, %a : tensor<3xi64>
  %s = graph.slice %p starts = ["1"] steps = [1] : tensor<3xi64> -> tensor<2xi64>
  func.return %s : tensor<2xi64>
}

// An unused gather and an unused integer power are kept and stored; an unused float
// power, or an integer one of a constant exponent, checks nothing and goes.
// CHECK-LABEL: func.func @unused
// CHECK-NOT:     graph.constant dense<3>
// CHECK:         graph.fusion_group
// CHECK-DAG:       graph.gather
// CHECK-DAG:       graph.pow %{{.*}}, %{{.*}} : tensor<3xi64>
// CHECK-NOT:       tensor<3xf32>
// CHECK:           graph.yield
// CHECK:         func.return %x
// UNFUSED-LABEL: func.func @unused
// UNFUSED-COUNT-3: graph.fusion_group
// UNFUSED-NOT:     graph.fusion_group
// UNFUSED:         func.return %x
func.func @unused(%x: tensor<3xi64>, %e: tensor<3xi64>, %t: tensor<8x4xf32>, %f: tensor<3xf32>) -> tensor<3xi64> {
  %g = graph.gather %t[%x] axis = 0 : tensor<8x4xf32>, tensor<3xi64> -> tensor<3x4xf32>
  %a = graph.abs %e : tensor<3xi64>
  %p = graph.pow %x, %a : tensor<3xi64>
  %q = graph.pow %f, %f : tensor<3xf32>
  %c = graph.constant dense<3> : tensor<3xi64>
  %r = graph.pow %x, %c : tensor<3xi64>
  func.return %x : tensor<3xi64>
}

// A gather read whole (the embedding lookup before a layernorm) is stored no more
// than before; a broadcast along a size that may be 0 reads it in part.
// CHECK-LABEL: func.func @read_whole
// CHECK:         %{{.*}} = graph.fusion_group
// CHECK:           %[[G:.*]] = graph.gather
// CHECK:           graph.reduce sum %[[G]]
// CHECK:           graph.yield %{{[^,]*}} : tensor<3xf32>
func.func @read_whole(%t: tensor<8x4xf32>, %i: tensor<3xi64>) -> tensor<3xf32> {
  %g = graph.gather %t[%i] axis = 0 : tensor<8x4xf32>, tensor<3xi64> -> tensor<3x4xf32>
  %s = graph.reduce sum %g axes = [1] : tensor<3x4xf32> -> tensor<3xf32>
  func.return %s : tensor<3xf32>
}

// CHECK-LABEL: func.func @broadcast_along_a_size
// CHECK:         %p, %{{.*}} = graph.fusion_group
// CHECK:           graph.yield %p_1, %{{.*}} : tensor<3xi64>, tensor<?x3xi64, ["N", ""]>
func.func @broadcast_along_a_size(%x: tensor<3xi64>, %e: tensor<3xi64>, %y: tensor<?x3xi64, ["N", ""]>) -> tensor<?x3xi64, ["N", ""]> {
  %a = graph.abs %e : tensor<3xi64>
  %p = graph.pow %x, %a : tensor<3xi64>
  %b = graph.broadcast %p : tensor<3xi64> -> tensor<?x3xi64, ["N", ""]>
  %s = graph.add %y, %b : tensor<?x3xi64, ["N", ""]>
  func.return %s : tensor<?x3xi64, ["N", ""]>
}

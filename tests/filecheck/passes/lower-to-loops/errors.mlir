// RUN: fusec-opt %s --split-input-file --verify-diagnostics -p lower-to-loops | filecheck %s
// What lower-to-loops refuses, with its message.

// A size that no buffer of the kernel has cannot be read inside it.
// CHECK: kernel k0: size 'M' is not the size of any of its buffers
func.func @size_not_in_buffers(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = graph.fusion_group(%x) {kernel = "k0"} : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %b = graph.broadcast %a : tensor<4xf32> -> tensor<?x4xf32, ["M", ""]>
    %s = graph.reduce sum %b axes = [0] : tensor<?x4xf32, ["M", ""]> -> tensor<4xf32>
    graph.yield %s : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

// A non-splat tensor constant is not a scalar.
// CHECK: lower-to-loops only takes scalar (or splat) graph.constant
func.func @dense_constant(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = graph.fusion_group(%x) {kernel = "k0"} : (tensor<2xf32>) -> tensor<2xf32> {
  ^bb0(%a: tensor<2xf32>):
    %c = graph.constant dense<[1.0, 2.0]> : tensor<2xf32>
    %s = graph.add %a, %c : tensor<2xf32>
    graph.yield %s : tensor<2xf32>
  }
  func.return %y : tensor<2xf32>
}

// -----

// Only graph ops and fusion groups are lowered.
// CHECK: lower-to-loops expects fusion groups in a function body, found arith.constant
func.func @foreign(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c = arith.constant 1.0 : f32
  func.return %x : tensor<2xf32>
}

// RUN: fusec-opt %s | fusec-opt | filecheck %s
// RUN: fusec-opt %s --print-op-generic | fusec-opt | filecheck %s
// graph.fusion_group and graph.yield: an isolated single-block region per kernel.

// CHECK-LABEL: func.func @group_static(%x: tensor<8xf32>) -> tensor<8xf32> {
// CHECK-NEXT:    %y = graph.fusion_group(%x) {kernel = "k0"} : (tensor<8xf32>) -> tensor<8xf32> {
// CHECK-NEXT:    ^bb0(%a: tensor<8xf32>):
// CHECK-NEXT:      %e = graph.exp %a : tensor<8xf32>
// CHECK-NEXT:      graph.yield %e : tensor<8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : tensor<8xf32>
func.func @group_static(%x: tensor<8xf32>) -> tensor<8xf32> {
  %y = graph.fusion_group(%x) {kernel = "k0"} : (tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%a: tensor<8xf32>):
    %e = graph.exp %a : tensor<8xf32>
    graph.yield %e : tensor<8xf32>
  }
  func.return %y : tensor<8xf32>
}

// Softmax as one kernel with two outputs, one of them a block argument.
// CHECK-LABEL: func.func @group_symbolic(%x: tensor<?x8xf32, ["N", ""]>)
// CHECK-NEXT:    %p, %same = graph.fusion_group(%x) {kernel = "softmax_rows"} : (tensor<?x8xf32, ["N", ""]>) -> (tensor<?x8xf32, ["N", ""]>, tensor<?x8xf32, ["N", ""]>) {
// CHECK-NEXT:    ^bb0(%a: tensor<?x8xf32, ["N", ""]>):
// CHECK-NEXT:      %m = graph.reduce max %a axes = [1] keepdims : tensor<?x8xf32, ["N", ""]> -> tensor<?x1xf32, ["N", ""]>
// CHECK-NEXT:      %mb = graph.broadcast %m : tensor<?x1xf32, ["N", ""]> -> tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:      %d = graph.sub %a, %mb : tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:      %e = graph.exp %d : tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:      %s = graph.reduce sum %e axes = [1] keepdims : tensor<?x8xf32, ["N", ""]> -> tensor<?x1xf32, ["N", ""]>
// CHECK-NEXT:      %sb = graph.broadcast %s : tensor<?x1xf32, ["N", ""]> -> tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:      %q = graph.div %e, %sb : tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:      graph.yield %q, %a : tensor<?x8xf32, ["N", ""]>, tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:    }
func.func @group_symbolic(%x: tensor<?x8xf32, ["N", ""]>) -> (tensor<?x8xf32, ["N", ""]>, tensor<?x8xf32, ["N", ""]>) {
  %p, %same = graph.fusion_group(%x) {kernel = "softmax_rows"} : (tensor<?x8xf32, ["N", ""]>) -> (tensor<?x8xf32, ["N", ""]>, tensor<?x8xf32, ["N", ""]>) {
  ^bb0(%a: tensor<?x8xf32, ["N", ""]>):
    %m = graph.reduce max %a axes = [1] keepdims : tensor<?x8xf32, ["N", ""]> -> tensor<?x1xf32, ["N", ""]>
    %mb = graph.broadcast %m : tensor<?x1xf32, ["N", ""]> -> tensor<?x8xf32, ["N", ""]>
    %d = graph.sub %a, %mb : tensor<?x8xf32, ["N", ""]>
    %e = graph.exp %d : tensor<?x8xf32, ["N", ""]>
    %s = graph.reduce sum %e axes = [1] keepdims : tensor<?x8xf32, ["N", ""]> -> tensor<?x1xf32, ["N", ""]>
    %sb = graph.broadcast %s : tensor<?x1xf32, ["N", ""]> -> tensor<?x8xf32, ["N", ""]>
    %q = graph.div %e, %sb : tensor<?x8xf32, ["N", ""]>
    graph.yield %q, %a : tensor<?x8xf32, ["N", ""]>, tensor<?x8xf32, ["N", ""]>
  }
  func.return %p, %same : tensor<?x8xf32, ["N", ""]>, tensor<?x8xf32, ["N", ""]>
}

// Two groups in a chain, the second without a kernel name; a group with no inputs.
// CHECK-LABEL: func.func @group_chain(%x: tensor<4x8xf32>, %w: tensor<8x2xf32>) -> tensor<4x2xf32> {
// CHECK-NEXT:    %h = graph.fusion_group(%x, %w) {kernel = "k0"} : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32> {
// CHECK-NEXT:    ^bb0(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>):
// CHECK-NEXT:      %m = graph.matmul %a, %b : tensor<4x8xf32>, tensor<8x2xf32> -> tensor<4x2xf32>
// CHECK-NEXT:      graph.yield %m : tensor<4x2xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %c = graph.fusion_group() : () -> tensor<f32> {
// CHECK-NEXT:      %k = graph.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT:      graph.yield %k : tensor<f32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %y = graph.fusion_group(%h) : (tensor<4x2xf32>) -> tensor<4x2xf32> {
// CHECK-NEXT:    ^bb0(%a: tensor<4x2xf32>):
// CHECK-NEXT:      %g = graph.gelu %a : tensor<4x2xf32>
// CHECK-NEXT:      graph.yield %g : tensor<4x2xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : tensor<4x2xf32>
func.func @group_chain(%x: tensor<4x8xf32>, %w: tensor<8x2xf32>) -> tensor<4x2xf32> {
  %h = graph.fusion_group(%x, %w) {kernel = "k0"} : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32> {
  ^bb0(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>):
    %m = graph.matmul %a, %b : tensor<4x8xf32>, tensor<8x2xf32> -> tensor<4x2xf32>
    graph.yield %m : tensor<4x2xf32>
  }
  %c = graph.fusion_group() : () -> tensor<f32> {
    %k = graph.constant dense<5.000000e-01> : tensor<f32>
    graph.yield %k : tensor<f32>
  }
  %y = graph.fusion_group(%h) : (tensor<4x2xf32>) -> tensor<4x2xf32> {
  ^bb0(%a: tensor<4x2xf32>):
    %g = graph.gelu %a : tensor<4x2xf32>
    graph.yield %g : tensor<4x2xf32>
  }
  func.return %y : tensor<4x2xf32>
}

// RUN: fusec-opt %s | fusec-opt | filecheck %s
// RUN: fusec-opt %s --print-op-generic | fusec-opt | filecheck %s
// graph.broadcast: NumPy broadcasting made explicit, right-aligned.

// CHECK-LABEL: func.func @broadcast_static(%v: tensor<8xf32>, %r: tensor<1x8xf32>, %s: tensor<f32>)
// CHECK-NEXT:    %a = graph.broadcast %v : tensor<8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %b = graph.broadcast %r : tensor<1x8xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %c = graph.broadcast %s : tensor<f32> -> tensor<2x3x4xf32>
// CHECK-NEXT:    %d = graph.broadcast %v : tensor<8xf32> -> tensor<8xf32>
func.func @broadcast_static(%v: tensor<8xf32>, %r: tensor<1x8xf32>, %s: tensor<f32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x3x4xf32>, tensor<8xf32>) {
  %a = graph.broadcast %v : tensor<8xf32> -> tensor<4x8xf32>
  %b = graph.broadcast %r : tensor<1x8xf32> -> tensor<4x8xf32>
  %c = graph.broadcast %s : tensor<f32> -> tensor<2x3x4xf32>
  %d = graph.broadcast %v : tensor<8xf32> -> tensor<8xf32>
  func.return %a, %b, %c, %d : tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x3x4xf32>, tensor<8xf32>
}

// CHECK-LABEL: func.func @broadcast_symbolic(
// CHECK-NEXT:    %a = graph.broadcast %v : tensor<768xf32> -> tensor<?x768xf32, ["N", ""]>
// CHECK-NEXT:    %b = graph.broadcast %col : tensor<?x1xf32, ["N", ""]> -> tensor<?x768xf32, ["N", ""]>
// CHECK-NEXT:    %c = graph.broadcast %n : tensor<?xi32, ["N"]> -> tensor<?x?xi32, ["B", "N"]>
// CHECK-NEXT:    %d = graph.broadcast %s : tensor<f16> -> tensor<?x?xf16, ["B", "N"]>
func.func @broadcast_symbolic(%v: tensor<768xf32>, %col: tensor<?x1xf32, ["N", ""]>, %n: tensor<?xi32, ["N"]>, %s: tensor<f16>) -> (tensor<?x768xf32, ["N", ""]>, tensor<?x768xf32, ["N", ""]>, tensor<?x?xi32, ["B", "N"]>, tensor<?x?xf16, ["B", "N"]>) {
  %a = graph.broadcast %v : tensor<768xf32> -> tensor<?x768xf32, ["N", ""]>
  %b = graph.broadcast %col : tensor<?x1xf32, ["N", ""]> -> tensor<?x768xf32, ["N", ""]>
  %c = graph.broadcast %n : tensor<?xi32, ["N"]> -> tensor<?x?xi32, ["B", "N"]>
  %d = graph.broadcast %s : tensor<f16> -> tensor<?x?xf16, ["B", "N"]>
  func.return %a, %b, %c, %d : tensor<?x768xf32, ["N", ""]>, tensor<?x768xf32, ["N", ""]>, tensor<?x?xi32, ["B", "N"]>, tensor<?x?xf16, ["B", "N"]>
}

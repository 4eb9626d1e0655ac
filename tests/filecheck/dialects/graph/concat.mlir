// RUN: fusec-opt %s | fusec-opt | filecheck %s
// RUN: fusec-opt %s --print-op-generic | fusec-opt | filecheck %s
// graph.concat: NumPy concatenate along axis; the result's size along it is the sum of
// the operands', a size dialects.sizes names (N + N = 2*N, D/2 + D/2 = D).

// CHECK-LABEL: func.func @concat_static(%a: tensor<4x3xf32>, %b: tensor<4x5xf32>, %v: tensor<2xi32>)
// CHECK-NEXT:    %c = graph.concat %a, %b axis = 1 : tensor<4x3xf32>, tensor<4x5xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %w = graph.concat %v, %v, %v axis = 0 : tensor<2xi32>, tensor<2xi32>, tensor<2xi32> -> tensor<6xi32>
func.func @concat_static(%a: tensor<4x3xf32>, %b: tensor<4x5xf32>, %v: tensor<2xi32>) -> (tensor<4x8xf32>, tensor<6xi32>) {
  %c = graph.concat %a, %b axis = 1 : tensor<4x3xf32>, tensor<4x5xf32> -> tensor<4x8xf32>
  %w = graph.concat %v, %v, %v axis = 0 : tensor<2xi32>, tensor<2xi32>, tensor<2xi32> -> tensor<6xi32>
  func.return %c, %w : tensor<4x8xf32>, tensor<6xi32>
}

// CHECK-LABEL: func.func @concat_symbolic(
// CHECK-NEXT:    %c = graph.concat %x, %x axis = 0 : tensor<?x8xf32, ["N", ""]>, tensor<?x8xf32, ["N", ""]> -> tensor<?x8xf32, ["2*N", ""]>
// CHECK-NEXT:    %h = graph.concat %y, %y axis = 1 : tensor<?x?xf32, ["B", "D/2"]>, tensor<?x?xf32, ["B", "D/2"]> -> tensor<?x?xf32, ["B", "D"]>
func.func @concat_symbolic(%x: tensor<?x8xf32, ["N", ""]>, %y: tensor<?x?xf32, ["B", "D/2"]>) -> (tensor<?x8xf32, ["2*N", ""]>, tensor<?x?xf32, ["B", "D"]>) {
  %c = graph.concat %x, %x axis = 0 : tensor<?x8xf32, ["N", ""]>, tensor<?x8xf32, ["N", ""]> -> tensor<?x8xf32, ["2*N", ""]>
  %h = graph.concat %y, %y axis = 1 : tensor<?x?xf32, ["B", "D/2"]>, tensor<?x?xf32, ["B", "D/2"]> -> tensor<?x?xf32, ["B", "D"]>
  func.return %c, %h : tensor<?x8xf32, ["2*N", ""]>, tensor<?x?xf32, ["B", "D"]>
}

// RUN: fusec-opt %s | fusec-opt | filecheck %s
// RUN: fusec-opt %s --print-op-generic | fusec-opt | filecheck %s
// graph.cast: astype, keeping the shape.

// CHECK-LABEL: func.func @cast_static(%x: tensor<4x8xf32>)
// CHECK-NEXT:    %h = graph.cast %x : tensor<4x8xf32> -> tensor<4x8xf16>
// CHECK-NEXT:    %i = graph.cast %x : tensor<4x8xf32> -> tensor<4x8xi32>
// CHECK-NEXT:    %b = graph.cast %x : tensor<4x8xf32> -> tensor<4x8xi1>
// CHECK-NEXT:    %d = graph.cast %b : tensor<4x8xi1> -> tensor<4x8xf64>
// CHECK-NEXT:    %same = graph.cast %x : tensor<4x8xf32> -> tensor<4x8xf32>
func.func @cast_static(%x: tensor<4x8xf32>) -> (tensor<4x8xf16>, tensor<4x8xi32>, tensor<4x8xf64>, tensor<4x8xf32>) {
  %h = graph.cast %x : tensor<4x8xf32> -> tensor<4x8xf16>
  %i = graph.cast %x : tensor<4x8xf32> -> tensor<4x8xi32>
  %b = graph.cast %x : tensor<4x8xf32> -> tensor<4x8xi1>
  %d = graph.cast %b : tensor<4x8xi1> -> tensor<4x8xf64>
  %same = graph.cast %x : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %h, %i, %d, %same : tensor<4x8xf16>, tensor<4x8xi32>, tensor<4x8xf64>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @cast_symbolic(%x: tensor<?x?xi64, ["B", "N"]>) -> tensor<?x?xf32, ["B", "N"]> {
// CHECK-NEXT:    %y = graph.cast %x : tensor<?x?xi64, ["B", "N"]> -> tensor<?x?xf32, ["B", "N"]>
// CHECK-NEXT:    func.return %y : tensor<?x?xf32, ["B", "N"]>
func.func @cast_symbolic(%x: tensor<?x?xi64, ["B", "N"]>) -> tensor<?x?xf32, ["B", "N"]> {
  %y = graph.cast %x : tensor<?x?xi64, ["B", "N"]> -> tensor<?x?xf32, ["B", "N"]>
  func.return %y : tensor<?x?xf32, ["B", "N"]>
}

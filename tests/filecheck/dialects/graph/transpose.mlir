// RUN: fusec-opt %s | fusec-opt | filecheck %s
// RUN: fusec-opt %s --print-op-generic | fusec-opt | filecheck %s
// graph.transpose: result axis i is input axis perm[i].

// CHECK-LABEL: func.func @transpose_static(%x: tensor<2x3x4xf32>, %v: tensor<5xi32>)
// CHECK-NEXT:    %t = graph.transpose %x perm = [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
// CHECK-NEXT:    %id = graph.transpose %v perm = [0] : tensor<5xi32> -> tensor<5xi32>
func.func @transpose_static(%x: tensor<2x3x4xf32>, %v: tensor<5xi32>) -> (tensor<4x2x3xf32>, tensor<5xi32>) {
  %t = graph.transpose %x perm = [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %id = graph.transpose %v perm = [0] : tensor<5xi32> -> tensor<5xi32>
  func.return %t, %id : tensor<4x2x3xf32>, tensor<5xi32>
}

// CHECK-LABEL: func.func @transpose_symbolic(%x: tensor<?x?x64xf32, ["B", "T", ""]>) -> tensor<?x64x?xf32, ["B", "", "T"]> {
// CHECK-NEXT:    %t = graph.transpose %x perm = [0, 2, 1] : tensor<?x?x64xf32, ["B", "T", ""]> -> tensor<?x64x?xf32, ["B", "", "T"]>
// CHECK-NEXT:    func.return %t : tensor<?x64x?xf32, ["B", "", "T"]>
func.func @transpose_symbolic(%x: tensor<?x?x64xf32, ["B", "T", ""]>) -> tensor<?x64x?xf32, ["B", "", "T"]> {
  %t = graph.transpose %x perm = [0, 2, 1] : tensor<?x?x64xf32, ["B", "T", ""]> -> tensor<?x64x?xf32, ["B", "", "T"]>
  func.return %t : tensor<?x64x?xf32, ["B", "", "T"]>
}

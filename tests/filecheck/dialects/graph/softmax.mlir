// RUN: fusec-opt %s | fusec-opt | filecheck %s
// RUN: fusec-opt %s --print-op-generic | fusec-opt | filecheck %s
// graph.softmax along one (non-negative) axis.

// CHECK-LABEL: func.func @softmax_static(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
// CHECK-NEXT:    %rows = graph.softmax %x axis = 1 : tensor<4x8xf32>
// CHECK-NEXT:    %cols = graph.softmax %x axis = 0 : tensor<4x8xf32>
func.func @softmax_static(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %rows = graph.softmax %x axis = 1 : tensor<4x8xf32>
  %cols = graph.softmax %x axis = 0 : tensor<4x8xf32>
  func.return %rows, %cols : tensor<4x8xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @softmax_symbolic(%x: tensor<?x?x?xf16, ["B", "T", "T"]>) -> tensor<?x?x?xf16, ["B", "T", "T"]> {
// CHECK-NEXT:    %p = graph.softmax %x axis = 2 : tensor<?x?x?xf16, ["B", "T", "T"]>
// CHECK-NEXT:    func.return %p : tensor<?x?x?xf16, ["B", "T", "T"]>
func.func @softmax_symbolic(%x: tensor<?x?x?xf16, ["B", "T", "T"]>) -> tensor<?x?x?xf16, ["B", "T", "T"]> {
  %p = graph.softmax %x axis = 2 : tensor<?x?x?xf16, ["B", "T", "T"]>
  func.return %p : tensor<?x?x?xf16, ["B", "T", "T"]>
}

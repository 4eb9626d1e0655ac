// RUN: fusec-opt %s | fusec-opt | filecheck %s
// RUN: fusec-opt %s --print-op-generic | fusec-opt | filecheck %s
// graph.gather: np.take(x, indices, axis), the indices' shape in place of the axis.

// CHECK-LABEL: func.func @embedding(%table: tensor<100x64xf32>, %ids: tensor<?x?xi64, ["B", "T"]>) -> tensor<?x?x64xf32, ["B", "T", ""]> {
// CHECK-NEXT:    %e = graph.gather %table[%ids] axis = 0 : tensor<100x64xf32>, tensor<?x?xi64, ["B", "T"]> -> tensor<?x?x64xf32, ["B", "T", ""]>
// CHECK-NEXT:    func.return %e : tensor<?x?x64xf32, ["B", "T", ""]>
func.func @embedding(%table: tensor<100x64xf32>, %ids: tensor<?x?xi64, ["B", "T"]>) -> tensor<?x?x64xf32, ["B", "T", ""]> {
  %e = graph.gather %table[%ids] axis = 0 : tensor<100x64xf32>, tensor<?x?xi64, ["B", "T"]> -> tensor<?x?x64xf32, ["B", "T", ""]>
  func.return %e : tensor<?x?x64xf32, ["B", "T", ""]>
}

// CHECK-LABEL: func.func @columns(%x: tensor<?x8xi32, ["N", ""]>, %cols: tensor<3xi32>) -> tensor<?x3xi32, ["N", ""]> {
// CHECK-NEXT:    %y = graph.gather %x[%cols] axis = 1 : tensor<?x8xi32, ["N", ""]>, tensor<3xi32> -> tensor<?x3xi32, ["N", ""]>
func.func @columns(%x: tensor<?x8xi32, ["N", ""]>, %cols: tensor<3xi32>) -> tensor<?x3xi32, ["N", ""]> {
  %y = graph.gather %x[%cols] axis = 1 : tensor<?x8xi32, ["N", ""]>, tensor<3xi32> -> tensor<?x3xi32, ["N", ""]>
  func.return %y : tensor<?x3xi32, ["N", ""]>
}

// CHECK-LABEL: func.func @scalar_index(%x: tensor<5x8xf16>, %i: tensor<i64>) -> tensor<8xf16> {
// CHECK-NEXT:    %y = graph.gather %x[%i] axis = 0 : tensor<5x8xf16>, tensor<i64> -> tensor<8xf16>
func.func @scalar_index(%x: tensor<5x8xf16>, %i: tensor<i64>) -> tensor<8xf16> {
  %y = graph.gather %x[%i] axis = 0 : tensor<5x8xf16>, tensor<i64> -> tensor<8xf16>
  func.return %y : tensor<8xf16>
}

// no_wraparound: a negative index is out of range, as PyTorch's index_select has it.
// CHECK-LABEL: func.func @no_wraparound(%x: tensor<10x4xf32>, %i: tensor<3xi64>) -> tensor<3x4xf32> {
// CHECK-NEXT:    %y = graph.gather %x[%i] axis = 0 no_wraparound : tensor<10x4xf32>, tensor<3xi64> -> tensor<3x4xf32>
func.func @no_wraparound(%x: tensor<10x4xf32>, %i: tensor<3xi64>) -> tensor<3x4xf32> {
  %y = graph.gather %x[%i] axis = 0 no_wraparound : tensor<10x4xf32>, tensor<3xi64> -> tensor<3x4xf32>
  func.return %y : tensor<3x4xf32>
}

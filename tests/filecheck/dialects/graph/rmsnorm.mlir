// RUN: fusec-opt %s | fusec-opt | filecheck %s
// RUN: fusec-opt %s --print-op-generic | fusec-opt | filecheck %s
// graph.rmsnorm over the last axis.

// CHECK-LABEL: func.func @rmsnorm_static(%x: tensor<4x8xf32>, %g: tensor<8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %y = graph.rmsnorm %x, %g eps = 1.000000e-06 : tensor<4x8xf32>, tensor<8xf32>
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
func.func @rmsnorm_static(%x: tensor<4x8xf32>, %g: tensor<8xf32>) -> tensor<4x8xf32> {
  %y = graph.rmsnorm %x, %g eps = 1.000000e-06 : tensor<4x8xf32>, tensor<8xf32>
  func.return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @rmsnorm_symbolic(
// CHECK-NEXT:    %y = graph.rmsnorm %x, %g eps = 1.000000e-06 : tensor<?x?x768xf64, ["B", "T", ""]>, tensor<768xf64>
func.func @rmsnorm_symbolic(%x: tensor<?x?x768xf64, ["B", "T", ""]>, %g: tensor<768xf64>) -> tensor<?x?x768xf64, ["B", "T", ""]> {
  %y = graph.rmsnorm %x, %g eps = 1.000000e-06 : tensor<?x?x768xf64, ["B", "T", ""]>, tensor<768xf64>
  func.return %y : tensor<?x?x768xf64, ["B", "T", ""]>
}

// RUN: fusec-opt %s | fusec-opt | filecheck %s
// RUN: fusec-opt %s --print-op-generic | fusec-opt | filecheck %s
// graph.layernorm over the last axis; eps is an f64 and prints exactly.

// CHECK-LABEL: func.func @layernorm_static(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %y = graph.layernorm %x, %g, %b eps = 1.000000e-05 : tensor<4x8xf32>, tensor<8xf32>
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
func.func @layernorm_static(%x: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %y = graph.layernorm %x, %g, %b eps = 1.000000e-05 : tensor<4x8xf32>, tensor<8xf32>
  func.return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @layernorm_symbolic(
// CHECK-NEXT:    %y = graph.layernorm %x, %g, %b eps = 0.33333333333333331 : tensor<?x?xf16, ["N", "D"]>, tensor<?xf16, ["D"]>
func.func @layernorm_symbolic(%x: tensor<?x?xf16, ["N", "D"]>, %g: tensor<?xf16, ["D"]>, %b: tensor<?xf16, ["D"]>) -> tensor<?x?xf16, ["N", "D"]> {
  %y = graph.layernorm %x, %g, %b eps = 0.33333333333333331 : tensor<?x?xf16, ["N", "D"]>, tensor<?xf16, ["D"]>
  func.return %y : tensor<?x?xf16, ["N", "D"]>
}

// RUN: fusec-opt %s | fusec-opt | filecheck %s
// RUN: fusec-opt %s --print-op-generic | fusec-opt | filecheck %s
// graph.pad: NumPy pad(mode="constant"), low[k] before and high[k] after axis k, the
// value written as a float and taken in the tensor's dtype.

// CHECK-LABEL: func.func @pad(
// CHECK-NEXT:    %p = graph.pad %x low = [0, 1] high = [2, 3] value = 0.000000e+00 : tensor<4x5xf32> -> tensor<6x9xf32>
// CHECK-NEXT:    %q = graph.pad %n low = [0, 0] high = [0, 2] value = -1.000000e+30 : tensor<?x8xf32, ["N", ""]> -> tensor<?x10xf32, ["N", ""]>
// CHECK-NEXT:    %r = graph.pad %i low = [1] high = [0] value = -7.000000e+00 : tensor<3xi32> -> tensor<4xi32>
func.func @pad(%x: tensor<4x5xf32>, %n: tensor<?x8xf32, ["N", ""]>, %i: tensor<3xi32>) -> (tensor<6x9xf32>, tensor<?x10xf32, ["N", ""]>, tensor<4xi32>) {
  %p = graph.pad %x low = [0, 1] high = [2, 3] value = 0.000000e+00 : tensor<4x5xf32> -> tensor<6x9xf32>
  %q = graph.pad %n low = [0, 0] high = [0, 2] value = -1.000000e+30 : tensor<?x8xf32, ["N", ""]> -> tensor<?x10xf32, ["N", ""]>
  %r = graph.pad %i low = [1] high = [0] value = -7.000000e+00 : tensor<3xi32> -> tensor<4xi32>
  func.return %p, %q, %r : tensor<6x9xf32>, tensor<?x10xf32, ["N", ""]>, tensor<4xi32>
}

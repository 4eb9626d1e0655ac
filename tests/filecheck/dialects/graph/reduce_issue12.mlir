// RUN: fusec-opt %s | fusec-opt | filecheck %s
// RUN: fusec-opt %s --print-op-generic | fusec-opt | filecheck %s
// graph.reduce prod, any, all (bool in, bool out), argmax and argmin (i64 indices over
// one axis or all of them), and the statistics graph.logsumexp, graph.var, graph.std.

// CHECK-LABEL: func.func @reduce_kinds(%x: tensor<4x8xf32>, %b: tensor<?x8xi1, ["N", ""]>, %i: tensor<4x8xi32>)
// CHECK-NEXT:    %prod = graph.reduce prod %x axes = [1] : tensor<4x8xf32> -> tensor<4xf32>
// CHECK-NEXT:    %iprod = graph.reduce prod %i axes = [0, 1] keepdims : tensor<4x8xi32> -> tensor<1x1xi32>
// CHECK-NEXT:    %any = graph.reduce any %b axes = [0] : tensor<?x8xi1, ["N", ""]> -> tensor<8xi1>
// CHECK-NEXT:    %all = graph.reduce all %b axes = [1] keepdims : tensor<?x8xi1, ["N", ""]> -> tensor<?x1xi1, ["N", ""]>
// CHECK-NEXT:    %amax = graph.reduce argmax %x axes = [1] : tensor<4x8xf32> -> tensor<4xi64>
// CHECK-NEXT:    %amin = graph.reduce argmin %i axes = [0, 1] keepdims : tensor<4x8xi32> -> tensor<1x1xi64>
func.func @reduce_kinds(%x: tensor<4x8xf32>, %b: tensor<?x8xi1, ["N", ""]>, %i: tensor<4x8xi32>) -> (tensor<4xf32>, tensor<1x1xi32>, tensor<8xi1>, tensor<?x1xi1, ["N", ""]>, tensor<4xi64>, tensor<1x1xi64>) {
  %prod = graph.reduce prod %x axes = [1] : tensor<4x8xf32> -> tensor<4xf32>
  %iprod = graph.reduce prod %i axes = [0, 1] keepdims : tensor<4x8xi32> -> tensor<1x1xi32>
  %any = graph.reduce any %b axes = [0] : tensor<?x8xi1, ["N", ""]> -> tensor<8xi1>
  %all = graph.reduce all %b axes = [1] keepdims : tensor<?x8xi1, ["N", ""]> -> tensor<?x1xi1, ["N", ""]>
  %amax = graph.reduce argmax %x axes = [1] : tensor<4x8xf32> -> tensor<4xi64>
  %amin = graph.reduce argmin %i axes = [0, 1] keepdims : tensor<4x8xi32> -> tensor<1x1xi64>
  func.return %prod, %iprod, %any, %all, %amax, %amin : tensor<4xf32>, tensor<1x1xi32>, tensor<8xi1>, tensor<?x1xi1, ["N", ""]>, tensor<4xi64>, tensor<1x1xi64>
}

// CHECK-LABEL: func.func @statistics(%x: tensor<?x8xf32, ["N", ""]>)
// CHECK-NEXT:    %lse = graph.logsumexp %x axes = [1] : tensor<?x8xf32, ["N", ""]> -> tensor<?xf32, ["N"]>
// CHECK-NEXT:    %var = graph.var %x axes = [0, 1] keepdims ddof = 0.000000e+00 : tensor<?x8xf32, ["N", ""]> -> tensor<1x1xf32>
// CHECK-NEXT:    %std = graph.std %x axes = [0] ddof = 1.000000e+00 : tensor<?x8xf32, ["N", ""]> -> tensor<8xf32>
func.func @statistics(%x: tensor<?x8xf32, ["N", ""]>) -> (tensor<?xf32, ["N"]>, tensor<1x1xf32>, tensor<8xf32>) {
  %lse = graph.logsumexp %x axes = [1] : tensor<?x8xf32, ["N", ""]> -> tensor<?xf32, ["N"]>
  %var = graph.var %x axes = [0, 1] keepdims ddof = 0.0 : tensor<?x8xf32, ["N", ""]> -> tensor<1x1xf32>
  %std = graph.std %x axes = [0] ddof = 1.0 : tensor<?x8xf32, ["N", ""]> -> tensor<8xf32>
  func.return %lse, %var, %std : tensor<?xf32, ["N"]>, tensor<1x1xf32>, tensor<8xf32>
}

// RUN: fusec-opt %s | fusec-opt | filecheck %s
// RUN: fusec-opt %s --print-op-generic | fusec-opt | filecheck %s
// graph.dim_size: the run-time size of one dimension, as a rank-0 tensor.

// CHECK-LABEL: func.func @dim_size_symbolic(%x: tensor<?x?xf32, ["B", "N"]>) -> (tensor<f32>, tensor<i64>) {
// CHECK-NEXT:    %n = graph.dim_size %x[1] : tensor<?x?xf32, ["B", "N"]> -> tensor<f32>
// CHECK-NEXT:    %b = graph.dim_size %x[0] : tensor<?x?xf32, ["B", "N"]> -> tensor<i64>
// CHECK-NEXT:    func.return %n, %b : tensor<f32>, tensor<i64>
func.func @dim_size_symbolic(%x: tensor<?x?xf32, ["B", "N"]>) -> (tensor<f32>, tensor<i64>) {
  %n = graph.dim_size %x[1] : tensor<?x?xf32, ["B", "N"]> -> tensor<f32>
  %b = graph.dim_size %x[0] : tensor<?x?xf32, ["B", "N"]> -> tensor<i64>
  func.return %n, %b : tensor<f32>, tensor<i64>
}

// CHECK-LABEL: func.func @dim_size_static(%x: tensor<4x8xi32>) -> tensor<f16> {
// CHECK-NEXT:    %n = graph.dim_size %x[1] : tensor<4x8xi32> -> tensor<f16>
func.func @dim_size_static(%x: tensor<4x8xi32>) -> tensor<f16> {
  %n = graph.dim_size %x[1] : tensor<4x8xi32> -> tensor<f16>
  func.return %n : tensor<f16>
}

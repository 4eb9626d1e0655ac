// RUN: fusec-opt %s | fusec-opt | filecheck %s
// RUN: fusec-opt %s --print-op-generic | fusec-opt | filecheck %s
// graph.reduce: every kind, sorted axes, with and without keepdims.

// CHECK-LABEL: func.func @reduce_static(%x: tensor<4x8xf32>)
// CHECK-NEXT:    %sum = graph.reduce sum %x axes = [1] keepdims : tensor<4x8xf32> -> tensor<4x1xf32>
// CHECK-NEXT:    %max = graph.reduce max %x axes = [0] : tensor<4x8xf32> -> tensor<8xf32>
// CHECK-NEXT:    %min = graph.reduce min %x axes = [0, 1] : tensor<4x8xf32> -> tensor<f32>
// CHECK-NEXT:    %mean = graph.reduce mean %x axes = [0, 1] keepdims : tensor<4x8xf32> -> tensor<1x1xf32>
// CHECK-NEXT:    %none = graph.reduce sum %x axes = [] : tensor<4x8xf32> -> tensor<4x8xf32>
func.func @reduce_static(%x: tensor<4x8xf32>) -> (tensor<4x1xf32>, tensor<8xf32>, tensor<f32>, tensor<1x1xf32>, tensor<4x8xf32>) {
  %sum = graph.reduce sum %x axes = [1] keepdims : tensor<4x8xf32> -> tensor<4x1xf32>
  %max = graph.reduce max %x axes = [0] : tensor<4x8xf32> -> tensor<8xf32>
  %min = graph.reduce min %x axes = [0, 1] : tensor<4x8xf32> -> tensor<f32>
  %mean = graph.reduce mean %x axes = [0, 1] keepdims : tensor<4x8xf32> -> tensor<1x1xf32>
  %none = graph.reduce sum %x axes = [] : tensor<4x8xf32> -> tensor<4x8xf32>
  func.return %sum, %max, %min, %mean, %none : tensor<4x1xf32>, tensor<8xf32>, tensor<f32>, tensor<1x1xf32>, tensor<4x8xf32>
}

// CHECK-LABEL: func.func @reduce_symbolic(%x: tensor<?x?x8xf32, ["B", "N", ""]>, %i: tensor<?xi32, ["N"]>)
// CHECK-NEXT:    %rows = graph.reduce max %x axes = [2] keepdims : tensor<?x?x8xf32, ["B", "N", ""]> -> tensor<?x?x1xf32, ["B", "N", ""]>
// CHECK-NEXT:    %cols = graph.reduce mean %x axes = [0, 2] : tensor<?x?x8xf32, ["B", "N", ""]> -> tensor<?xf32, ["N"]>
// CHECK-NEXT:    %isum = graph.reduce sum %i axes = [0] : tensor<?xi32, ["N"]> -> tensor<i32>
func.func @reduce_symbolic(%x: tensor<?x?x8xf32, ["B", "N", ""]>, %i: tensor<?xi32, ["N"]>) -> (tensor<?x?x1xf32, ["B", "N", ""]>, tensor<?xf32, ["N"]>, tensor<i32>) {
  %rows = graph.reduce max %x axes = [2] keepdims : tensor<?x?x8xf32, ["B", "N", ""]> -> tensor<?x?x1xf32, ["B", "N", ""]>
  %cols = graph.reduce mean %x axes = [0, 2] : tensor<?x?x8xf32, ["B", "N", ""]> -> tensor<?xf32, ["N"]>
  %isum = graph.reduce sum %i axes = [0] : tensor<?xi32, ["N"]> -> tensor<i32>
  func.return %rows, %cols, %isum : tensor<?x?x1xf32, ["B", "N", ""]>, tensor<?xf32, ["N"]>, tensor<i32>
}

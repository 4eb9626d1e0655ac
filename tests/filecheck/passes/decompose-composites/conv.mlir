// RUN: fusec-opt %s -p decompose-composites | filecheck %s
// A convolution is a matmul of its image's windows (implicit GEMM): graph.window, then
// reshapes to [.., KH*KW*C] and [KH*KW*C, O]; with groups, both split their channels
// into [G, C/G] and the matmul is batched over G. A max pool reduces windows padded with
// -inf (an integer's least value), an avg pool sums windows padded with 0 times
// 1/(KH*KW). A batch norm is per-channel vectors broadcast along its axis.

// CHECK-LABEL: func.func @conv(
// CHECK-NEXT:    %y = graph.window %x window = [3, 3] strides = [1, 1] dilations = [1, 1] low = [1, 1] high = [1, 1] value = 0.000000e+00 : tensor<?x?x?x4xf32, ["N", "H", "W", ""]> -> tensor<?x?x?x3x3x4xf32, ["N", "H", "W", "", "", ""]>
// CHECK-NEXT:    %y_1 = graph.reshape %y : tensor<?x?x?x3x3x4xf32, ["N", "H", "W", "", "", ""]> -> tensor<?x?x?x36xf32, ["N", "H", "W", ""]>
// CHECK-NEXT:    %y_2 = graph.reshape %w : tensor<3x3x4x8xf32> -> tensor<36x8xf32>
// CHECK-NEXT:    %y_3 = graph.matmul %y_1, %y_2 : tensor<?x?x?x36xf32, ["N", "H", "W", ""]>, tensor<36x8xf32> -> tensor<?x?x?x8xf32, ["N", "H", "W", ""]>
// CHECK-NEXT:    func.return %y_3 : tensor<?x?x?x8xf32, ["N", "H", "W", ""]>
// CHECK-LABEL: func.func @grouped(
// CHECK-NEXT:    %y = graph.window %x window = [3, 3] strides = [2, 2] dilations = [1, 1] low = [1, 1] high = [1, 1] value = 0.000000e+00 : tensor<2x8x8x4xf32> -> tensor<2x4x4x3x3x4xf32>
// CHECK-NEXT:    %y_1 = graph.reshape %y : tensor<2x4x4x3x3x4xf32> -> tensor<2x4x4x3x3x2x2xf32>
// CHECK-NEXT:    %y_2 = graph.transpose %y_1 perm = [0, 1, 2, 5, 3, 4, 6] : tensor<2x4x4x3x3x2x2xf32> -> tensor<2x4x4x2x3x3x2xf32>
// CHECK-NEXT:    %y_3 = graph.reshape %y_2 : tensor<2x4x4x2x3x3x2xf32> -> tensor<2x4x4x2x1x18xf32>
// CHECK-NEXT:    %y_4 = graph.reshape %w : tensor<3x3x2x6xf32> -> tensor<3x3x2x2x3xf32>
// CHECK-NEXT:    %y_5 = graph.transpose %y_4 perm = [3, 0, 1, 2, 4] : tensor<3x3x2x2x3xf32> -> tensor<2x3x3x2x3xf32>
// CHECK-NEXT:    %y_6 = graph.reshape %y_5 : tensor<2x3x3x2x3xf32> -> tensor<2x18x3xf32>
// CHECK-NEXT:    %y_7 = graph.matmul %y_3, %y_6 : tensor<2x4x4x2x1x18xf32>, tensor<2x18x3xf32> -> tensor<2x4x4x2x1x3xf32>
// CHECK-NEXT:    %y_8 = graph.reshape %y_7 : tensor<2x4x4x2x1x3xf32> -> tensor<2x4x4x6xf32>
// CHECK-NEXT:    func.return %y_8 : tensor<2x4x4x6xf32>
// CHECK-LABEL: func.func @pools(
// CHECK-NEXT:    %m = graph.window %x window = [2, 2] strides = [2, 2] dilations = [1, 1] low = [0, 0] high = [0, 0] value = 0xfff0000000000000 : tensor<2x8x8x4xf32> -> tensor<2x4x4x2x2x4xf32>
// CHECK-NEXT:    %m_1 = graph.reduce max %m axes = [3, 4] : tensor<2x4x4x2x2x4xf32> -> tensor<2x4x4x4xf32>
// CHECK-NEXT:    %a = graph.window %x window = [3, 3] strides = [2, 2] dilations = [1, 1] low = [1, 1] high = [1, 1] value = 0.000000e+00 : tensor<2x8x8x4xf32> -> tensor<2x4x4x3x3x4xf32>
// CHECK-NEXT:    %a_1 = graph.reduce sum %a axes = [3, 4] : tensor<2x4x4x3x3x4xf32> -> tensor<2x4x4x4xf32>
// CHECK-NEXT:    %a_2 = graph.constant dense<0.111111112> : tensor<f32>
// CHECK-NEXT:    %a_3 = graph.broadcast %a_2 : tensor<f32> -> tensor<2x4x4x4xf32>
// CHECK-NEXT:    %a_4 = graph.mul %a_1, %a_3 : tensor<2x4x4x4xf32>
// CHECK-NEXT:    %n = graph.window %i window = [2, 2] strides = [2, 2] dilations = [1, 1] low = [0, 0] high = [0, 0] value = 0xC1E0000000000000 : tensor<2x8x8x4xi32> -> tensor<2x4x4x2x2x4xi32>
// CHECK-NEXT:    %n_1 = graph.reduce max %n axes = [3, 4] : tensor<2x4x4x2x2x4xi32> -> tensor<2x4x4x4xi32>
// CHECK-NEXT:    func.return %m_1, %a_4, %n_1 : tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32>, tensor<2x4x4x4xi32>
// batchnorm(x) = (x - mean) / sqrt(var + eps) * gamma + beta, in that order
// CHECK-LABEL: func.func @batchnorm(
// CHECK-NEXT:    %z = graph.reshape %m : tensor<4xf32> -> tensor<4x1x1xf32>
// CHECK-NEXT:    %z_1 = graph.broadcast %z : tensor<4x1x1xf32> -> tensor<2x4x8x8xf32>
// CHECK-NEXT:    %z_2 = graph.sub %c, %z_1 : tensor<2x4x8x8xf32>
// CHECK-NEXT:    %z_3 = graph.constant dense<1.000000e-03> : tensor<f32>
// CHECK-NEXT:    %z_4 = graph.broadcast %z_3 : tensor<f32> -> tensor<4xf32>
// CHECK-NEXT:    %z_5 = graph.add %v, %z_4 : tensor<4xf32>
// CHECK-NEXT:    %z_6 = graph.sqrt %z_5 : tensor<4xf32>
// CHECK-NEXT:    %z_7 = graph.reshape %z_6 : tensor<4xf32> -> tensor<4x1x1xf32>
// CHECK-NEXT:    %z_8 = graph.broadcast %z_7 : tensor<4x1x1xf32> -> tensor<2x4x8x8xf32>
// CHECK-NEXT:    %z_9 = graph.div %z_2, %z_8 : tensor<2x4x8x8xf32>
// CHECK-NEXT:    %z_10 = graph.reshape %g : tensor<4xf32> -> tensor<4x1x1xf32>
// CHECK-NEXT:    %z_11 = graph.broadcast %z_10 : tensor<4x1x1xf32> -> tensor<2x4x8x8xf32>
// CHECK-NEXT:    %z_12 = graph.mul %z_9, %z_11 : tensor<2x4x8x8xf32>
// CHECK-NEXT:    %z_13 = graph.reshape %b : tensor<4xf32> -> tensor<4x1x1xf32>
// CHECK-NEXT:    %z_14 = graph.broadcast %z_13 : tensor<4x1x1xf32> -> tensor<2x4x8x8xf32>
// CHECK-NEXT:    %z_15 = graph.add %z_12, %z_14 : tensor<2x4x8x8xf32>
// CHECK-NEXT:    func.return %z_15 : tensor<2x4x8x8xf32>

func.func @conv(%x: tensor<?x?x?x4xf32, ["N", "H", "W", ""]>, %w: tensor<3x3x4x8xf32>) -> tensor<?x?x?x8xf32, ["N", "H", "W", ""]> {
  %y = graph.conv2d %x, %w strides = [1, 1] dilations = [1, 1] low = [1, 1] high = [1, 1] groups = 1 : tensor<?x?x?x4xf32, ["N", "H", "W", ""]>, tensor<3x3x4x8xf32> -> tensor<?x?x?x8xf32, ["N", "H", "W", ""]>
  func.return %y : tensor<?x?x?x8xf32, ["N", "H", "W", ""]>
}
func.func @grouped(%x: tensor<2x8x8x4xf32>, %w: tensor<3x3x2x6xf32>) -> tensor<2x4x4x6xf32> {
  %y = graph.conv2d %x, %w strides = [2, 2] dilations = [1, 1] low = [1, 1] high = [1, 1] groups = 2 : tensor<2x8x8x4xf32>, tensor<3x3x2x6xf32> -> tensor<2x4x4x6xf32>
  func.return %y : tensor<2x4x4x6xf32>
}
func.func @pools(%x: tensor<2x8x8x4xf32>, %i: tensor<2x8x8x4xi32>) -> (tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32>, tensor<2x4x4x4xi32>) {
  %m = graph.pool %x kind = "max" window = [2, 2] strides = [2, 2] low = [0, 0] high = [0, 0] : tensor<2x8x8x4xf32> -> tensor<2x4x4x4xf32>
  %a = graph.pool %x kind = "avg" window = [3, 3] strides = [2, 2] low = [1, 1] high = [1, 1] : tensor<2x8x8x4xf32> -> tensor<2x4x4x4xf32>
  %n = graph.pool %i kind = "max" window = [2, 2] strides = [2, 2] low = [0, 0] high = [0, 0] : tensor<2x8x8x4xi32> -> tensor<2x4x4x4xi32>
  func.return %m, %a, %n : tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32>, tensor<2x4x4x4xi32>
}
func.func @batchnorm(%c: tensor<2x4x8x8xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<2x4x8x8xf32> {
  %z = graph.batchnorm %c, %m, %v, %g, %b eps = 1.000000e-03 axis = 1 : tensor<2x4x8x8xf32>, tensor<4xf32>
  func.return %z : tensor<2x4x8x8xf32>
}

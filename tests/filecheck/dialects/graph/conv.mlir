// RUN: fusec-opt %s | fusec-opt | filecheck %s
// RUN: fusec-opt %s --print-op-generic | fusec-opt | filecheck %s
// Convolution and pooling over NHWC images: graph.window (the padded sliding windows,
// an index map), and the composites graph.conv2d (HWIO weights), graph.pool (max or
// avg) and graph.batchnorm (inference, per channel of one axis).

// CHECK-LABEL: func.func @window(
// CHECK-NEXT:    %w = graph.window %x window = [3, 3] strides = [1, 1] dilations = [1, 1] low = [1, 1] high = [1, 1] value = 0.000000e+00 : tensor<2x8x8x4xf32> -> tensor<2x8x8x3x3x4xf32>
// CHECK-NEXT:    %s = graph.window %y window = [2, 3] strides = [2, 1] dilations = [1, 2] low = [0, 2] high = [0, 2] value = 0xfff0000000000000 : tensor<?x?x?x4xf32, ["N", "H", "W", ""]> -> tensor<?x?x?x2x3x4xf32, ["N", "H/2", "W", "", "", ""]>
func.func @window(%x: tensor<2x8x8x4xf32>, %y: tensor<?x?x?x4xf32, ["N", "H", "W", ""]>) -> (tensor<2x8x8x3x3x4xf32>, tensor<?x?x?x2x3x4xf32, ["N", "H/2", "W", "", "", ""]>) {
  %w = graph.window %x window = [3, 3] strides = [1, 1] dilations = [1, 1] low = [1, 1] high = [1, 1] value = 0.000000e+00 : tensor<2x8x8x4xf32> -> tensor<2x8x8x3x3x4xf32>
  %s = graph.window %y window = [2, 3] strides = [2, 1] dilations = [1, 2] low = [0, 2] high = [0, 2] value = 0xfff0000000000000 : tensor<?x?x?x4xf32, ["N", "H", "W", ""]> -> tensor<?x?x?x2x3x4xf32, ["N", "H/2", "W", "", "", ""]>
  func.return %w, %s : tensor<2x8x8x3x3x4xf32>, tensor<?x?x?x2x3x4xf32, ["N", "H/2", "W", "", "", ""]>
}

// CHECK-LABEL: func.func @conv2d(
// CHECK-NEXT:    %y = graph.conv2d %x, %w strides = [1, 1] dilations = [1, 1] low = [1, 1] high = [1, 1] groups = 1 : tensor<2x8x8x4xf32>, tensor<3x3x4x16xf32> -> tensor<2x8x8x16xf32>
// CHECK-NEXT:    %g = graph.conv2d %x, %d strides = [2, 2] dilations = [1, 1] low = [0, 0] high = [1, 1] groups = 2 : tensor<2x8x8x4xf32>, tensor<2x2x2x6xf32> -> tensor<2x4x4x6xf32>
func.func @conv2d(%x: tensor<2x8x8x4xf32>, %w: tensor<3x3x4x16xf32>, %d: tensor<2x2x2x6xf32>) -> (tensor<2x8x8x16xf32>, tensor<2x4x4x6xf32>) {
  %y = graph.conv2d %x, %w strides = [1, 1] dilations = [1, 1] low = [1, 1] high = [1, 1] groups = 1 : tensor<2x8x8x4xf32>, tensor<3x3x4x16xf32> -> tensor<2x8x8x16xf32>
  %g = graph.conv2d %x, %d strides = [2, 2] dilations = [1, 1] low = [0, 0] high = [1, 1] groups = 2 : tensor<2x8x8x4xf32>, tensor<2x2x2x6xf32> -> tensor<2x4x4x6xf32>
  func.return %y, %g : tensor<2x8x8x16xf32>, tensor<2x4x4x6xf32>
}

// CHECK-LABEL: func.func @pool(
// CHECK-NEXT:    %m = graph.pool %x kind = "max" window = [2, 2] strides = [2, 2] low = [0, 0] high = [0, 0] : tensor<2x8x8x4xf32> -> tensor<2x4x4x4xf32>
// CHECK-NEXT:    %a = graph.pool %x kind = "avg" window = [3, 3] strides = [2, 2] low = [1, 1] high = [1, 1] : tensor<2x8x8x4xf32> -> tensor<2x4x4x4xf32>
// CHECK-NEXT:    %i = graph.pool %n kind = "max" window = [2, 2] strides = [2, 2] low = [0, 0] high = [0, 0] : tensor<?x?x?x3xi32, ["N", "H", "W", ""]> -> tensor<?x?x?x3xi32, ["N", "H/2", "W/2", ""]>
func.func @pool(%x: tensor<2x8x8x4xf32>, %n: tensor<?x?x?x3xi32, ["N", "H", "W", ""]>) -> (tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32>, tensor<?x?x?x3xi32, ["N", "H/2", "W/2", ""]>) {
  %m = graph.pool %x kind = "max" window = [2, 2] strides = [2, 2] low = [0, 0] high = [0, 0] : tensor<2x8x8x4xf32> -> tensor<2x4x4x4xf32>
  %a = graph.pool %x kind = "avg" window = [3, 3] strides = [2, 2] low = [1, 1] high = [1, 1] : tensor<2x8x8x4xf32> -> tensor<2x4x4x4xf32>
  %i = graph.pool %n kind = "max" window = [2, 2] strides = [2, 2] low = [0, 0] high = [0, 0] : tensor<?x?x?x3xi32, ["N", "H", "W", ""]> -> tensor<?x?x?x3xi32, ["N", "H/2", "W/2", ""]>
  func.return %m, %a, %i : tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32>, tensor<?x?x?x3xi32, ["N", "H/2", "W/2", ""]>
}

// CHECK-LABEL: func.func @batchnorm(
// CHECK-NEXT:    %y = graph.batchnorm %x, %m, %v, %g, %b eps = 1.000000e-05 axis = 3 : tensor<2x8x8x4xf32>, tensor<4xf32>
// CHECK-NEXT:    %z = graph.batchnorm %c, %m, %v, %g, %b eps = 1.000000e-03 axis = 1 : tensor<2x4x8x8xf32>, tensor<4xf32>
func.func @batchnorm(%x: tensor<2x8x8x4xf32>, %c: tensor<2x4x8x8xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<2x8x8x4xf32>, tensor<2x4x8x8xf32>) {
  %y = graph.batchnorm %x, %m, %v, %g, %b eps = 1.000000e-05 axis = 3 : tensor<2x8x8x4xf32>, tensor<4xf32>
  %z = graph.batchnorm %c, %m, %v, %g, %b eps = 1.000000e-03 axis = 1 : tensor<2x4x8x8xf32>, tensor<4xf32>
  func.return %y, %z : tensor<2x8x8x4xf32>, tensor<2x4x8x8xf32>
}

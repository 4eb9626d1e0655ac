// RUN: fusec-opt %s -p fold-batchnorm,canonicalize,dce | filecheck %s
// batchnorm(conv2d(x, w) [+ b]) = conv2d(x, w * s) + (beta + ([b] - mean) * s), s = gamma /
// sqrt(var + eps), where the weights and the statistics are constants, computed by the
// pass. @constants: s = [2, 1], w * s = [[2, 2], [6, 4]], shift = [-1.5, 1.25]; @bias: s =
// [1, 1], shift = beta + (b - mean) * s = [0.5, 4.25]. Inputs (@inputs) or a convolution
// output read elsewhere (@read_twice) keep the norm, for decompose-composites.

// CHECK-LABEL: func.func @constants(
// CHECK-NEXT:    %z = graph.constant dense<[[[[2.000000e+00, 2.000000e+00], [6.000000e+00, 4.000000e+00]]]]> : tensor<1x1x2x2xf32>
// CHECK-NEXT:    %z_1 = graph.conv2d %x, %z strides = [1, 1] dilations = [1, 1] low = [0, 0] high = [0, 0] groups = 1 : tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32> -> tensor<1x4x4x2xf32>
// CHECK-NEXT:    %z_2 = graph.constant dense<[-1.500000e+00, 1.250000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %z_3 = graph.broadcast %z_2 : tensor<2xf32> -> tensor<1x4x4x2xf32>
// CHECK-NEXT:    %z_4 = graph.add %z_1, %z_3 : tensor<1x4x4x2xf32>
// CHECK-NEXT:    func.return %z_4 : tensor<1x4x4x2xf32>

// CHECK-LABEL: func.func @bias(
// CHECK-NEXT:    %z = graph.constant dense<[[[[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]]]> : tensor<1x1x2x2xf32>
// CHECK-NEXT:    %z_1 = graph.conv2d %x, %z strides = [1, 1] dilations = [1, 1] low = [0, 0] high = [0, 0] groups = 1 : tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32> -> tensor<1x4x4x2xf32>
// CHECK-NEXT:    %z_2 = graph.constant dense<[5.000000e-01, 4.250000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %z_3 = graph.broadcast %z_2 : tensor<2xf32> -> tensor<1x4x4x2xf32>
// CHECK-NEXT:    %z_4 = graph.add %z_1, %z_3 : tensor<1x4x4x2xf32>
// CHECK-NEXT:    func.return %z_4 : tensor<1x4x4x2xf32>

// CHECK-LABEL: func.func @inputs(
// CHECK-NEXT:    %y = graph.conv2d %x, %w strides = [1, 1] dilations = [1, 1] low = [0, 0] high = [0, 0] groups = 1 : tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32> -> tensor<1x4x4x2xf32>
// CHECK-NEXT:    %z = graph.batchnorm %y, %m, %m, %m, %m eps = 1.000000e-05 axis = 3 : tensor<1x4x4x2xf32>, tensor<2xf32>
// CHECK-NEXT:    func.return %z : tensor<1x4x4x2xf32>

// CHECK-LABEL: func.func @read_twice(
// CHECK-NEXT:    %w = graph.constant dense<[[[[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]]]> : tensor<1x1x2x2xf32>
// CHECK-NEXT:    %m = graph.constant dense<[1.000000e+00, -1.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %y = graph.conv2d %x, %w strides = [1, 1] dilations = [1, 1] low = [0, 0] high = [0, 0] groups = 1 : tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32> -> tensor<1x4x4x2xf32>
// CHECK-NEXT:    %z = graph.batchnorm %y, %m, %m, %m, %m eps = 1.000000e-05 axis = 3 : tensor<1x4x4x2xf32>, tensor<2xf32>
// CHECK-NEXT:    func.return %y, %z : tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>

func.func @constants(%x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32> {
  %w = graph.constant dense<[[[[1.0, 2.0], [3.0, 4.0]]]]> : tensor<1x1x2x2xf32>
  %m = graph.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %v = graph.constant dense<[3.0, 0.0]> : tensor<2xf32>
  %g = graph.constant dense<[4.0, 1.0]> : tensor<2xf32>
  %b = graph.constant dense<[0.5, 0.25]> : tensor<2xf32>
  %y = graph.conv2d %x, %w strides = [1, 1] dilations = [1, 1] low = [0, 0] high = [0, 0] groups = 1 : tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32> -> tensor<1x4x4x2xf32>
  %z = graph.batchnorm %y, %m, %v, %g, %b eps = 1.000000e+00 axis = 3 : tensor<1x4x4x2xf32>, tensor<2xf32>
  func.return %z : tensor<1x4x4x2xf32>
}
func.func @bias(%x: tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32> {
  %w = graph.constant dense<[[[[1.0, 2.0], [3.0, 4.0]]]]> : tensor<1x1x2x2xf32>
  %c = graph.constant dense<[1.0, 3.0]> : tensor<2xf32>
  %m = graph.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %v = graph.constant dense<[3.0, 0.0]> : tensor<2xf32>
  %g = graph.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %b = graph.constant dense<[0.5, 0.25]> : tensor<2xf32>
  %y = graph.conv2d %x, %w strides = [1, 1] dilations = [1, 1] low = [0, 0] high = [0, 0] groups = 1 : tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32> -> tensor<1x4x4x2xf32>
  %cb = graph.broadcast %c : tensor<2xf32> -> tensor<1x4x4x2xf32>
  %s = graph.add %y, %cb : tensor<1x4x4x2xf32>
  %z = graph.batchnorm %s, %m, %v, %g, %b eps = 1.000000e+00 axis = 3 : tensor<1x4x4x2xf32>, tensor<2xf32>
  func.return %z : tensor<1x4x4x2xf32>
}
func.func @inputs(%x: tensor<1x4x4x2xf32>, %w: tensor<1x1x2x2xf32>, %m: tensor<2xf32>) -> tensor<1x4x4x2xf32> {
  %y = graph.conv2d %x, %w strides = [1, 1] dilations = [1, 1] low = [0, 0] high = [0, 0] groups = 1 : tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32> -> tensor<1x4x4x2xf32>
  %z = graph.batchnorm %y, %m, %m, %m, %m eps = 1.000000e-05 axis = 3 : tensor<1x4x4x2xf32>, tensor<2xf32>
  func.return %z : tensor<1x4x4x2xf32>
}
func.func @read_twice(%x: tensor<1x4x4x2xf32>) -> (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) {
  %w = graph.constant dense<[[[[1.0, 2.0], [3.0, 4.0]]]]> : tensor<1x1x2x2xf32>
  %m = graph.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %y = graph.conv2d %x, %w strides = [1, 1] dilations = [1, 1] low = [0, 0] high = [0, 0] groups = 1 : tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32> -> tensor<1x4x4x2xf32>
  %z = graph.batchnorm %y, %m, %m, %m, %m eps = 1.000000e-05 axis = 3 : tensor<1x4x4x2xf32>, tensor<2xf32>
  func.return %y, %z : tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>
}

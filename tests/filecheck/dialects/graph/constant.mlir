// RUN: fusec-opt %s | fusec-opt | filecheck %s
// RUN: fusec-opt %s --print-op-generic | fusec-opt | filecheck %s
// graph.constant: rank-0 scalars of every dtype, splats and dense literals.
// Floats print exactly (shortest form that reads back the same); -inf, inf and nan
// print as their bits, in hex, and read back as those bits.

// CHECK-LABEL: func.func @scalars()
// CHECK-NEXT:    %f32 = graph.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT:    %f16 = graph.constant dense<-1.250000e+00> : tensor<f16>
// CHECK-NEXT:    %f64 = graph.constant dense<0.33333333333333331> : tensor<f64>
// CHECK-NEXT:    %f32_odd = graph.constant dense<0.123456791> : tensor<f32>
// CHECK-NEXT:    %i32 = graph.constant dense<-7> : tensor<i32>
// CHECK-NEXT:    %i64 = graph.constant dense<1099511627776> : tensor<i64>
// CHECK-NEXT:    %t = graph.constant dense<true> : tensor<i1>
// CHECK-NEXT:    %f = graph.constant dense<false> : tensor<i1>
// CHECK-NEXT:    %inf = graph.constant dense<0xff800000> : tensor<f32>
// CHECK-NEXT:    %nan = graph.constant dense<0x7e00> : tensor<f16>
// CHECK-NEXT:    %inf64 = graph.constant dense<0x7ff0000000000000> : tensor<f64>
func.func @scalars() -> (tensor<f32>, tensor<f16>, tensor<f64>, tensor<f32>, tensor<i32>, tensor<i64>, tensor<i1>, tensor<i1>, tensor<f32>) {
  %f32 = graph.constant dense<0.5> : tensor<f32>
  %f16 = graph.constant dense<-1.25> : tensor<f16>
  %f64 = graph.constant dense<0.33333333333333331> : tensor<f64>
  %f32_odd = graph.constant dense<0.123456789> : tensor<f32>
  %i32 = graph.constant dense<-7> : tensor<i32>
  %i64 = graph.constant dense<1099511627776> : tensor<i64>
  %t = graph.constant dense<true> : tensor<i1>
  %f = graph.constant dense<false> : tensor<i1>
  %inf = graph.constant dense<0xFF800000> : tensor<f32>
  %nan = graph.constant dense<0x7E00> : tensor<f16>
  %inf64 = graph.constant dense<0x7FF0000000000000> : tensor<f64>
  func.return %f32, %f16, %f64, %f32_odd, %i32, %i64, %t, %f, %inf : tensor<f32>, tensor<f16>, tensor<f64>, tensor<f32>, tensor<i32>, tensor<i64>, tensor<i1>, tensor<i1>, tensor<f32>
}

// CHECK-LABEL: func.func @tensors()
// CHECK-NEXT:    %splat = graph.constant dense<2.000000e+00> : tensor<4x8xf32>
// CHECK-NEXT:    %vec = graph.constant dense<[1, -2, 3]> : tensor<3xi32>
// CHECK-NEXT:    %mat = graph.constant dense<{{\[\[}}1.000000e+00, 2.500000e+00], [-3.000000e+00, 4.000000e+00]]> : tensor<2x2xf16>
// CHECK-NEXT:    %mask = graph.constant dense<[true, false]> : tensor<2xi1>
// CHECK-NEXT:    %odd = graph.constant dense<[0xff800000, 5.000000e-01, 0x7fc00000]> : tensor<3xf32>
func.func @tensors() -> (tensor<4x8xf32>, tensor<3xi32>, tensor<2x2xf16>, tensor<2xi1>) {
  %splat = graph.constant dense<2.0> : tensor<4x8xf32>
  %vec = graph.constant dense<[1, -2, 3]> : tensor<3xi32>
  %mat = graph.constant dense<[[1.0, 2.5], [-3.0, 4.0]]> : tensor<2x2xf16>
  %mask = graph.constant dense<[true, false]> : tensor<2xi1>
  %odd = graph.constant dense<[0xFF800000, 0.5, 0x7FC00000]> : tensor<3xf32>
  func.return %splat, %vec, %mat, %mask : tensor<4x8xf32>, tensor<3xi32>, tensor<2x2xf16>, tensor<2xi1>
}

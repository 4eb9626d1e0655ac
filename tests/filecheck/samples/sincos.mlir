// The front end's IR for samples/sincos.tdsl, and its round trip through fusec-opt
// in custom and generic form.
// RUN: fusec %samples/sincos.tdsl --emit graph | filecheck %s
// RUN: fusec %samples/sincos.tdsl --emit graph | fusec-opt | fusec-opt --print-op-generic | fusec-opt | filecheck %s

// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    %[[V0:[a-zA-Z0-9_]+]] = graph.sin %[[X:[a-zA-Z0-9_]+]] : tensor<?x?xf32, ["N", "D"]>
// CHECK-NEXT:    %[[V1:[a-zA-Z0-9_]+]] = graph.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[V2:[a-zA-Z0-9_]+]] = graph.broadcast %[[V1]] : tensor<f32> -> tensor<?x?xf32, ["N", "D"]>
// CHECK-NEXT:    %[[V3:[a-zA-Z0-9_]+]] = graph.pow %[[V0]], %[[V2]] : tensor<?x?xf32, ["N", "D"]>
// CHECK-NEXT:    %[[V4:[a-zA-Z0-9_]+]] = graph.cos %[[X]] : tensor<?x?xf32, ["N", "D"]>
// CHECK-NEXT:    %[[V5:[a-zA-Z0-9_]+]] = graph.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[V6:[a-zA-Z0-9_]+]] = graph.broadcast %[[V5]] : tensor<f32> -> tensor<?x?xf32, ["N", "D"]>
// CHECK-NEXT:    %[[V7:[a-zA-Z0-9_]+]] = graph.pow %[[V4]], %[[V6]] : tensor<?x?xf32, ["N", "D"]>
// CHECK-NEXT:    %[[V8:[a-zA-Z0-9_]+]] = graph.add %[[V3]], %[[V7]] : tensor<?x?xf32, ["N", "D"]>
// CHECK-NEXT:    func.return %[[V8]] : tensor<?x?xf32, ["N", "D"]>

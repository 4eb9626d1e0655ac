// The front end's IR for samples/layernorm.tdsl, and its round trip through fusec-opt
// in custom and generic form.
// RUN: fusec %samples/layernorm.tdsl --emit graph | filecheck %s
// RUN: fusec %samples/layernorm.tdsl --emit graph | fusec-opt | fusec-opt --print-op-generic | fusec-opt | filecheck %s

// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    %[[MU:[a-zA-Z0-9_]+]] = graph.reduce mean %[[X:[a-zA-Z0-9_]+]] axes = [1] keepdims : tensor<?x?xf32, ["N", "D"]> -> tensor<?x1xf32, ["N", ""]>
// CHECK-NEXT:    %[[V0:[a-zA-Z0-9_]+]] = graph.broadcast %[[MU]] : tensor<?x1xf32, ["N", ""]> -> tensor<?x?xf32, ["N", "D"]>
// CHECK-NEXT:    %[[XC:[a-zA-Z0-9_]+]] = graph.sub %[[X]], %[[V0]] : tensor<?x?xf32, ["N", "D"]>
// CHECK-NEXT:    %[[V1:[a-zA-Z0-9_]+]] = graph.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[V2:[a-zA-Z0-9_]+]] = graph.broadcast %[[V1]] : tensor<f32> -> tensor<?x?xf32, ["N", "D"]>
// CHECK-NEXT:    %[[V3:[a-zA-Z0-9_]+]] = graph.pow %[[XC]], %[[V2]] : tensor<?x?xf32, ["N", "D"]>
// CHECK-NEXT:    %[[VAR:[a-zA-Z0-9_]+]] = graph.reduce mean %[[V3]] axes = [1] keepdims : tensor<?x?xf32, ["N", "D"]> -> tensor<?x1xf32, ["N", ""]>
// CHECK-NEXT:    %[[V4:[a-zA-Z0-9_]+]] = graph.constant dense<1.000000e-05> : tensor<f32>
// CHECK-NEXT:    %[[V5:[a-zA-Z0-9_]+]] = graph.broadcast %[[V4]] : tensor<f32> -> tensor<?x1xf32, ["N", ""]>
// CHECK-NEXT:    %[[V6:[a-zA-Z0-9_]+]] = graph.add %[[VAR]], %[[V5]] : tensor<?x1xf32, ["N", ""]>
// CHECK-NEXT:    %[[V7:[a-zA-Z0-9_]+]] = graph.rsqrt %[[V6]] : tensor<?x1xf32, ["N", ""]>
// CHECK-NEXT:    %[[V8:[a-zA-Z0-9_]+]] = graph.broadcast %[[V7]] : tensor<?x1xf32, ["N", ""]> -> tensor<?x?xf32, ["N", "D"]>
// CHECK-NEXT:    %[[Y:[a-zA-Z0-9_]+]] = graph.mul %[[XC]], %[[V8]] : tensor<?x?xf32, ["N", "D"]>
// CHECK-NEXT:    %[[V9:[a-zA-Z0-9_]+]] = graph.broadcast %[[GAMMA:[a-zA-Z0-9_]+]] : tensor<?xf32, ["D"]> -> tensor<?x?xf32, ["N", "D"]>
// CHECK-NEXT:    %[[V10:[a-zA-Z0-9_]+]] = graph.mul %[[Y]], %[[V9]] : tensor<?x?xf32, ["N", "D"]>
// CHECK-NEXT:    %[[V11:[a-zA-Z0-9_]+]] = graph.broadcast %[[BETA:[a-zA-Z0-9_]+]] : tensor<?xf32, ["D"]> -> tensor<?x?xf32, ["N", "D"]>
// CHECK-NEXT:    %[[V12:[a-zA-Z0-9_]+]] = graph.add %[[V10]], %[[V11]] : tensor<?x?xf32, ["N", "D"]>
// CHECK-NEXT:    func.return %[[V12]] : tensor<?x?xf32, ["N", "D"]>

// The front end's IR for samples/gelu_chain.tdsl, and its round trip through fusec-opt
// in custom and generic form.
// RUN: fusec %samples/gelu_chain.tdsl --emit graph | filecheck %s
// RUN: fusec %samples/gelu_chain.tdsl --emit graph | fusec-opt | fusec-opt --print-op-generic | fusec-opt | filecheck %s

// CHECK-LABEL: func.func @gelu_tanh(
// CHECK-NEXT:    %[[V0:[a-zA-Z0-9_]+]] = graph.constant dense<0.797884583> : tensor<f32>
// CHECK-NEXT:    %[[V1:[a-zA-Z0-9_]+]] = graph.broadcast %[[V0]] : tensor<f32> -> tensor<?x?xf32, ["N", "D"]>
// CHECK-NEXT:    %[[V2:[a-zA-Z0-9_]+]] = graph.constant dense<4.471500e-02> : tensor<f32>
// CHECK-NEXT:    %[[V3:[a-zA-Z0-9_]+]] = graph.broadcast %[[V2]] : tensor<f32> -> tensor<?x?xf32, ["N", "D"]>
// CHECK-NEXT:    %[[V4:[a-zA-Z0-9_]+]] = graph.constant dense<3.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[V5:[a-zA-Z0-9_]+]] = graph.broadcast %[[V4]] : tensor<f32> -> tensor<?x?xf32, ["N", "D"]>
// CHECK-NEXT:    %[[V6:[a-zA-Z0-9_]+]] = graph.pow %[[X:[a-zA-Z0-9_]+]], %[[V5]] : tensor<?x?xf32, ["N", "D"]>
// CHECK-NEXT:    %[[V7:[a-zA-Z0-9_]+]] = graph.mul %[[V3]], %[[V6]] : tensor<?x?xf32, ["N", "D"]>
// CHECK-NEXT:    %[[V8:[a-zA-Z0-9_]+]] = graph.add %[[X]], %[[V7]] : tensor<?x?xf32, ["N", "D"]>
// CHECK-NEXT:    %[[INNER:[a-zA-Z0-9_]+]] = graph.mul %[[V1]], %[[V8]] : tensor<?x?xf32, ["N", "D"]>
// CHECK-NEXT:    %[[V9:[a-zA-Z0-9_]+]] = graph.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT:    %[[V10:[a-zA-Z0-9_]+]] = graph.broadcast %[[V9]] : tensor<f32> -> tensor<?x?xf32, ["N", "D"]>
// CHECK-NEXT:    %[[V11:[a-zA-Z0-9_]+]] = graph.mul %[[V10]], %[[X]] : tensor<?x?xf32, ["N", "D"]>
// CHECK-NEXT:    %[[V12:[a-zA-Z0-9_]+]] = graph.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[V13:[a-zA-Z0-9_]+]] = graph.broadcast %[[V12]] : tensor<f32> -> tensor<?x?xf32, ["N", "D"]>
// CHECK-NEXT:    %[[V14:[a-zA-Z0-9_]+]] = graph.tanh %[[INNER]] : tensor<?x?xf32, ["N", "D"]>
// CHECK-NEXT:    %[[V15:[a-zA-Z0-9_]+]] = graph.add %[[V13]], %[[V14]] : tensor<?x?xf32, ["N", "D"]>
// CHECK-NEXT:    %[[V16:[a-zA-Z0-9_]+]] = graph.mul %[[V11]], %[[V15]] : tensor<?x?xf32, ["N", "D"]>
// CHECK-NEXT:    func.return %[[V16]] : tensor<?x?xf32, ["N", "D"]>
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    %[[V0:[a-zA-Z0-9_]+]] = func.call @gelu_tanh(%[[X:[a-zA-Z0-9_]+]]) : (tensor<?x?xf32, ["N", "D"]>) -> tensor<?x?xf32, ["N", "D"]>
// CHECK-NEXT:    func.return %[[V0]] : tensor<?x?xf32, ["N", "D"]>

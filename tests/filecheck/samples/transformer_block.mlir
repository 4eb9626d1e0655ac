// The front end's IR for samples/transformer_block.tdsl, and its round trip through fusec-opt
// in custom and generic form.
// RUN: fusec %samples/transformer_block.tdsl --emit graph | filecheck %s
// RUN: fusec %samples/transformer_block.tdsl --emit graph | fusec-opt | fusec-opt --print-op-generic | fusec-opt | filecheck %s

// CHECK-LABEL: func.func @split_heads(
// CHECK-NEXT:    %[[V0:[a-zA-Z0-9_]+]] = graph.reshape %[[T:[a-zA-Z0-9_]+]] : tensor<?x?x256xf32, ["B", "S", ""]> -> tensor<?x?x4x64xf32, ["B", "S", "", ""]>
// CHECK-NEXT:    %[[V1:[a-zA-Z0-9_]+]] = graph.transpose %[[V0]] perm = [0, 2, 1, 3] : tensor<?x?x4x64xf32, ["B", "S", "", ""]> -> tensor<?x4x?x64xf32, ["B", "", "S", ""]>
// CHECK-NEXT:    func.return %[[V1]] : tensor<?x4x?x64xf32, ["B", "", "S", ""]>
// CHECK-LABEL: func.func @merge_heads(
// CHECK-NEXT:    %[[V0:[a-zA-Z0-9_]+]] = graph.transpose %[[T:[a-zA-Z0-9_]+]] perm = [0, 2, 1, 3] : tensor<?x4x?x64xf32, ["B", "", "S", ""]> -> tensor<?x?x4x64xf32, ["B", "S", "", ""]>
// CHECK-NEXT:    %[[V1:[a-zA-Z0-9_]+]] = graph.reshape %[[V0]] : tensor<?x?x4x64xf32, ["B", "S", "", ""]> -> tensor<?x?x256xf32, ["B", "S", ""]>
// CHECK-NEXT:    func.return %[[V1]] : tensor<?x?x256xf32, ["B", "S", ""]>
// CHECK-LABEL: func.func @attention(
// CHECK-NEXT:    %[[V0:[a-zA-Z0-9_]+]] = graph.matmul %[[X:[a-zA-Z0-9_]+]], %[[WQ:[a-zA-Z0-9_]+]] : tensor<?x?x256xf32, ["B", "S", ""]>, tensor<256x256xf32> -> tensor<?x?x256xf32, ["B", "S", ""]>
// CHECK-NEXT:    %[[Q:[a-zA-Z0-9_]+]] = func.call @split_heads(%[[V0]]) : (tensor<?x?x256xf32, ["B", "S", ""]>) -> tensor<?x4x?x64xf32, ["B", "", "S", ""]>
// CHECK-NEXT:    %[[V1:[a-zA-Z0-9_]+]] = graph.matmul %[[X]], %[[WK:[a-zA-Z0-9_]+]] : tensor<?x?x256xf32, ["B", "S", ""]>, tensor<256x256xf32> -> tensor<?x?x256xf32, ["B", "S", ""]>
// CHECK-NEXT:    %[[K:[a-zA-Z0-9_]+]] = func.call @split_heads(%[[V1]]) : (tensor<?x?x256xf32, ["B", "S", ""]>) -> tensor<?x4x?x64xf32, ["B", "", "S", ""]>
// CHECK-NEXT:    %[[V2:[a-zA-Z0-9_]+]] = graph.matmul %[[X]], %[[WV:[a-zA-Z0-9_]+]] : tensor<?x?x256xf32, ["B", "S", ""]>, tensor<256x256xf32> -> tensor<?x?x256xf32, ["B", "S", ""]>
// CHECK-NEXT:    %[[V:[a-zA-Z0-9_]+]] = func.call @split_heads(%[[V2]]) : (tensor<?x?x256xf32, ["B", "S", ""]>) -> tensor<?x4x?x64xf32, ["B", "", "S", ""]>
// CHECK-NEXT:    %[[V3:[a-zA-Z0-9_]+]] = graph.transpose %[[K]] perm = [0, 1, 3, 2] : tensor<?x4x?x64xf32, ["B", "", "S", ""]> -> tensor<?x4x64x?xf32, ["B", "", "", "S"]>
// CHECK-NEXT:    %[[V4:[a-zA-Z0-9_]+]] = graph.matmul %[[Q]], %[[V3]] : tensor<?x4x?x64xf32, ["B", "", "S", ""]>, tensor<?x4x64x?xf32, ["B", "", "", "S"]> -> tensor<?x4x?x?xf32, ["B", "", "S", "S"]>
// CHECK-NEXT:    %[[V5:[a-zA-Z0-9_]+]] = graph.constant dense<1.250000e-01> : tensor<f32>
// CHECK-NEXT:    %[[V6:[a-zA-Z0-9_]+]] = graph.broadcast %[[V5]] : tensor<f32> -> tensor<?x4x?x?xf32, ["B", "", "S", "S"]>
// CHECK-NEXT:    %[[V7:[a-zA-Z0-9_]+]] = graph.mul %[[V4]], %[[V6]] : tensor<?x4x?x?xf32, ["B", "", "S", "S"]>
// CHECK-NEXT:    %[[P:[a-zA-Z0-9_]+]] = graph.softmax %[[V7]] axis = 3 : tensor<?x4x?x?xf32, ["B", "", "S", "S"]>
// CHECK-NEXT:    %[[V8:[a-zA-Z0-9_]+]] = graph.matmul %[[P]], %[[V]] : tensor<?x4x?x?xf32, ["B", "", "S", "S"]>, tensor<?x4x?x64xf32, ["B", "", "S", ""]> -> tensor<?x4x?x64xf32, ["B", "", "S", ""]>
// CHECK-NEXT:    %[[V9:[a-zA-Z0-9_]+]] = func.call @merge_heads(%[[V8]]) : (tensor<?x4x?x64xf32, ["B", "", "S", ""]>) -> tensor<?x?x256xf32, ["B", "S", ""]>
// CHECK-NEXT:    %[[V10:[a-zA-Z0-9_]+]] = graph.matmul %[[V9]], %[[WO:[a-zA-Z0-9_]+]] : tensor<?x?x256xf32, ["B", "S", ""]>, tensor<256x256xf32> -> tensor<?x?x256xf32, ["B", "S", ""]>
// CHECK-NEXT:    func.return %[[V10]] : tensor<?x?x256xf32, ["B", "S", ""]>
// CHECK-LABEL: func.func @ffn(
// CHECK-NEXT:    %[[V0:[a-zA-Z0-9_]+]] = graph.matmul %[[Z:[a-zA-Z0-9_]+]], %[[W1:[a-zA-Z0-9_]+]] : tensor<?x?x256xf32, ["B", "S", ""]>, tensor<256x1024xf32> -> tensor<?x?x1024xf32, ["B", "S", ""]>
// CHECK-NEXT:    %[[V1:[a-zA-Z0-9_]+]] = graph.broadcast %[[B1:[a-zA-Z0-9_]+]] : tensor<1024xf32> -> tensor<?x?x1024xf32, ["B", "S", ""]>
// CHECK-NEXT:    %[[V2:[a-zA-Z0-9_]+]] = graph.add %[[V0]], %[[V1]] : tensor<?x?x1024xf32, ["B", "S", ""]>
// CHECK-NEXT:    %[[V3:[a-zA-Z0-9_]+]] = graph.gelu %[[V2]] : tensor<?x?x1024xf32, ["B", "S", ""]>
// CHECK-NEXT:    %[[V4:[a-zA-Z0-9_]+]] = graph.matmul %[[V3]], %[[W2:[a-zA-Z0-9_]+]] : tensor<?x?x1024xf32, ["B", "S", ""]>, tensor<1024x256xf32> -> tensor<?x?x256xf32, ["B", "S", ""]>
// CHECK-NEXT:    %[[V5:[a-zA-Z0-9_]+]] = graph.broadcast %[[B2:[a-zA-Z0-9_]+]] : tensor<256xf32> -> tensor<?x?x256xf32, ["B", "S", ""]>
// CHECK-NEXT:    %[[V6:[a-zA-Z0-9_]+]] = graph.add %[[V4]], %[[V5]] : tensor<?x?x256xf32, ["B", "S", ""]>
// CHECK-NEXT:    func.return %[[V6]] : tensor<?x?x256xf32, ["B", "S", ""]>
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    %[[V0:[a-zA-Z0-9_]+]] = graph.layernorm %[[X:[a-zA-Z0-9_]+]], %[[LN1_G:[a-zA-Z0-9_]+]], %[[LN1_B:[a-zA-Z0-9_]+]] eps = 1.000000e-05 : tensor<?x?x256xf32, ["B", "S", ""]>, tensor<256xf32>
// CHECK-NEXT:    %[[V1:[a-zA-Z0-9_]+]] = func.call @attention(%[[V0]], %[[WQ:[a-zA-Z0-9_]+]], %[[WK:[a-zA-Z0-9_]+]], %[[WV:[a-zA-Z0-9_]+]], %[[WO:[a-zA-Z0-9_]+]]) : (tensor<?x?x256xf32, ["B", "S", ""]>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<?x?x256xf32, ["B", "S", ""]>
// CHECK-NEXT:    %[[H:[a-zA-Z0-9_]+]] = graph.add %[[X]], %[[V1]] : tensor<?x?x256xf32, ["B", "S", ""]>
// CHECK-NEXT:    %[[V2:[a-zA-Z0-9_]+]] = graph.layernorm %[[H]], %[[LN2_G:[a-zA-Z0-9_]+]], %[[LN2_B:[a-zA-Z0-9_]+]] eps = 1.000000e-05 : tensor<?x?x256xf32, ["B", "S", ""]>, tensor<256xf32>
// CHECK-NEXT:    %[[V3:[a-zA-Z0-9_]+]] = func.call @ffn(%[[V2]], %[[W1:[a-zA-Z0-9_]+]], %[[B1:[a-zA-Z0-9_]+]], %[[W2:[a-zA-Z0-9_]+]], %[[B2:[a-zA-Z0-9_]+]]) : (tensor<?x?x256xf32, ["B", "S", ""]>, tensor<256x1024xf32>, tensor<1024xf32>, tensor<1024x256xf32>, tensor<256xf32>) -> tensor<?x?x256xf32, ["B", "S", ""]>
// CHECK-NEXT:    %[[V4:[a-zA-Z0-9_]+]] = graph.add %[[H]], %[[V3]] : tensor<?x?x256xf32, ["B", "S", ""]>
// CHECK-NEXT:    func.return %[[V4]] : tensor<?x?x256xf32, ["B", "S", ""]>

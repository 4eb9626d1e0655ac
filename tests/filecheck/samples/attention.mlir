// The front end's IR for samples/attention.tdsl, and its round trip through fusec-opt
// in custom and generic form.
// RUN: fusec %samples/attention.tdsl --emit graph | filecheck %s
// RUN: fusec %samples/attention.tdsl --emit graph | fusec-opt | fusec-opt --print-op-generic | fusec-opt | filecheck %s

// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    %[[V0:[a-zA-Z0-9_]+]] = graph.matmul %[[X:[a-zA-Z0-9_]+]], %[[WQ:[a-zA-Z0-9_]+]] : tensor<?x?x256xf32, ["B", "S", ""]>, tensor<256x256xf32> -> tensor<?x?x256xf32, ["B", "S", ""]>
// CHECK-NEXT:    %[[V1:[a-zA-Z0-9_]+]] = graph.reshape %[[V0]] : tensor<?x?x256xf32, ["B", "S", ""]> -> tensor<?x?x4x64xf32, ["B", "S", "", ""]>
// CHECK-NEXT:    %[[Q:[a-zA-Z0-9_]+]] = graph.transpose %[[V1]] perm = [0, 2, 1, 3] : tensor<?x?x4x64xf32, ["B", "S", "", ""]> -> tensor<?x4x?x64xf32, ["B", "", "S", ""]>
// CHECK-NEXT:    %[[V2:[a-zA-Z0-9_]+]] = graph.matmul %[[X]], %[[WK:[a-zA-Z0-9_]+]] : tensor<?x?x256xf32, ["B", "S", ""]>, tensor<256x256xf32> -> tensor<?x?x256xf32, ["B", "S", ""]>
// CHECK-NEXT:    %[[V3:[a-zA-Z0-9_]+]] = graph.reshape %[[V2]] : tensor<?x?x256xf32, ["B", "S", ""]> -> tensor<?x?x4x64xf32, ["B", "S", "", ""]>
// CHECK-NEXT:    %[[K:[a-zA-Z0-9_]+]] = graph.transpose %[[V3]] perm = [0, 2, 1, 3] : tensor<?x?x4x64xf32, ["B", "S", "", ""]> -> tensor<?x4x?x64xf32, ["B", "", "S", ""]>
// CHECK-NEXT:    %[[V4:[a-zA-Z0-9_]+]] = graph.matmul %[[X]], %[[WV:[a-zA-Z0-9_]+]] : tensor<?x?x256xf32, ["B", "S", ""]>, tensor<256x256xf32> -> tensor<?x?x256xf32, ["B", "S", ""]>
// CHECK-NEXT:    %[[V5:[a-zA-Z0-9_]+]] = graph.reshape %[[V4]] : tensor<?x?x256xf32, ["B", "S", ""]> -> tensor<?x?x4x64xf32, ["B", "S", "", ""]>
// CHECK-NEXT:    %[[V:[a-zA-Z0-9_]+]] = graph.transpose %[[V5]] perm = [0, 2, 1, 3] : tensor<?x?x4x64xf32, ["B", "S", "", ""]> -> tensor<?x4x?x64xf32, ["B", "", "S", ""]>
// CHECK-NEXT:    %[[V6:[a-zA-Z0-9_]+]] = graph.transpose %[[K]] perm = [0, 1, 3, 2] : tensor<?x4x?x64xf32, ["B", "", "S", ""]> -> tensor<?x4x64x?xf32, ["B", "", "", "S"]>
// CHECK-NEXT:    %[[V7:[a-zA-Z0-9_]+]] = graph.matmul %[[Q]], %[[V6]] : tensor<?x4x?x64xf32, ["B", "", "S", ""]>, tensor<?x4x64x?xf32, ["B", "", "", "S"]> -> tensor<?x4x?x?xf32, ["B", "", "S", "S"]>
// CHECK-NEXT:    %[[V8:[a-zA-Z0-9_]+]] = graph.constant dense<1.250000e-01> : tensor<f32>
// CHECK-NEXT:    %[[V9:[a-zA-Z0-9_]+]] = graph.broadcast %[[V8]] : tensor<f32> -> tensor<?x4x?x?xf32, ["B", "", "S", "S"]>
// CHECK-NEXT:    %[[SCORES:[a-zA-Z0-9_]+]] = graph.mul %[[V7]], %[[V9]] : tensor<?x4x?x?xf32, ["B", "", "S", "S"]>
// CHECK-NEXT:    %[[P:[a-zA-Z0-9_]+]] = graph.softmax %[[SCORES]] axis = 3 : tensor<?x4x?x?xf32, ["B", "", "S", "S"]>
// CHECK-NEXT:    %[[V10:[a-zA-Z0-9_]+]] = graph.matmul %[[P]], %[[V]] : tensor<?x4x?x?xf32, ["B", "", "S", "S"]>, tensor<?x4x?x64xf32, ["B", "", "S", ""]> -> tensor<?x4x?x64xf32, ["B", "", "S", ""]>
// CHECK-NEXT:    %[[O:[a-zA-Z0-9_]+]] = graph.transpose %[[V10]] perm = [0, 2, 1, 3] : tensor<?x4x?x64xf32, ["B", "", "S", ""]> -> tensor<?x?x4x64xf32, ["B", "S", "", ""]>
// CHECK-NEXT:    %[[V11:[a-zA-Z0-9_]+]] = graph.reshape %[[O]] : tensor<?x?x4x64xf32, ["B", "S", "", ""]> -> tensor<?x?x256xf32, ["B", "S", ""]>
// CHECK-NEXT:    %[[V12:[a-zA-Z0-9_]+]] = graph.matmul %[[V11]], %[[WO:[a-zA-Z0-9_]+]] : tensor<?x?x256xf32, ["B", "S", ""]>, tensor<256x256xf32> -> tensor<?x?x256xf32, ["B", "S", ""]>
// CHECK-NEXT:    func.return %[[V12]] : tensor<?x?x256xf32, ["B", "S", ""]>

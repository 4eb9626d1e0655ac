// The front end's IR for samples/mlp.tdsl, and its round trip through fusec-opt
// in custom and generic form.
// RUN: fusec %samples/mlp.tdsl --emit graph | filecheck %s
// RUN: fusec %samples/mlp.tdsl --emit graph | fusec-opt | fusec-opt --print-op-generic | fusec-opt | filecheck %s

// CHECK-LABEL: func.func @ffn(
// CHECK-NEXT:    %[[V0:[a-zA-Z0-9_]+]] = graph.matmul %[[X:[a-zA-Z0-9_]+]], %[[W1:[a-zA-Z0-9_]+]] : tensor<?x?xf32, ["T", "D"]>, tensor<?x?xf32, ["D", "F"]> -> tensor<?x?xf32, ["T", "F"]>
// CHECK-NEXT:    %[[V1:[a-zA-Z0-9_]+]] = graph.broadcast %[[B1:[a-zA-Z0-9_]+]] : tensor<?xf32, ["F"]> -> tensor<?x?xf32, ["T", "F"]>
// CHECK-NEXT:    %[[V2:[a-zA-Z0-9_]+]] = graph.add %[[V0]], %[[V1]] : tensor<?x?xf32, ["T", "F"]>
// CHECK-NEXT:    %[[H:[a-zA-Z0-9_]+]] = graph.gelu %[[V2]] : tensor<?x?xf32, ["T", "F"]>
// CHECK-NEXT:    %[[V3:[a-zA-Z0-9_]+]] = graph.matmul %[[H]], %[[W2:[a-zA-Z0-9_]+]] : tensor<?x?xf32, ["T", "F"]>, tensor<?x?xf32, ["F", "D"]> -> tensor<?x?xf32, ["T", "D"]>
// CHECK-NEXT:    %[[V4:[a-zA-Z0-9_]+]] = graph.add %[[X]], %[[V3]] : tensor<?x?xf32, ["T", "D"]>
// CHECK-NEXT:    %[[V5:[a-zA-Z0-9_]+]] = graph.broadcast %[[B2:[a-zA-Z0-9_]+]] : tensor<?xf32, ["D"]> -> tensor<?x?xf32, ["T", "D"]>
// CHECK-NEXT:    %[[V6:[a-zA-Z0-9_]+]] = graph.add %[[V4]], %[[V5]] : tensor<?x?xf32, ["T", "D"]>
// CHECK-NEXT:    func.return %[[V6]] : tensor<?x?xf32, ["T", "D"]>
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    %[[V0:[a-zA-Z0-9_]+]] = func.call @ffn(%[[X:[a-zA-Z0-9_]+]], %[[W1:[a-zA-Z0-9_]+]], %[[B1:[a-zA-Z0-9_]+]], %[[W2:[a-zA-Z0-9_]+]], %[[B2:[a-zA-Z0-9_]+]]) : (tensor<?x?xf32, ["T", "D"]>, tensor<?x?xf32, ["D", "F"]>, tensor<?xf32, ["F"]>, tensor<?x?xf32, ["F", "D"]>, tensor<?xf32, ["D"]>) -> tensor<?x?xf32, ["T", "D"]>
// CHECK-NEXT:    func.return %[[V0]] : tensor<?x?xf32, ["T", "D"]>

// The front end's IR for samples/bias_gelu_residual.tdsl, and its round trip through fusec-opt
// in custom and generic form.
// RUN: fusec %samples/bias_gelu_residual.tdsl --emit graph | filecheck %s
// RUN: fusec %samples/bias_gelu_residual.tdsl --emit graph | fusec-opt | fusec-opt --print-op-generic | fusec-opt | filecheck %s

// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    %[[V0:[a-zA-Z0-9_]+]] = graph.broadcast %[[B:[a-zA-Z0-9_]+]] : tensor<?xf32, ["D"]> -> tensor<?x?xf32, ["T", "D"]>
// CHECK-NEXT:    %[[V1:[a-zA-Z0-9_]+]] = graph.add %[[X:[a-zA-Z0-9_]+]], %[[V0]] : tensor<?x?xf32, ["T", "D"]>
// CHECK-NEXT:    %[[V2:[a-zA-Z0-9_]+]] = graph.gelu %[[V1]] : tensor<?x?xf32, ["T", "D"]>
// CHECK-NEXT:    %[[V3:[a-zA-Z0-9_]+]] = graph.add %[[V2]], %[[R:[a-zA-Z0-9_]+]] : tensor<?x?xf32, ["T", "D"]>
// CHECK-NEXT:    func.return %[[V3]] : tensor<?x?xf32, ["T", "D"]>

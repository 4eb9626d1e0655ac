// The front end's IR for samples/softmax.tdsl, and its round trip through fusec-opt
// in custom and generic form.
// RUN: fusec %samples/softmax.tdsl --emit graph | filecheck %s
// RUN: fusec %samples/softmax.tdsl --emit graph | fusec-opt | fusec-opt --print-op-generic | fusec-opt | filecheck %s

// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    %[[M:[a-zA-Z0-9_]+]] = graph.reduce max %[[X:[a-zA-Z0-9_]+]] axes = [1] keepdims : tensor<?x?xf32, ["B", "N"]> -> tensor<?x1xf32, ["B", ""]>
// CHECK-NEXT:    %[[V0:[a-zA-Z0-9_]+]] = graph.broadcast %[[M]] : tensor<?x1xf32, ["B", ""]> -> tensor<?x?xf32, ["B", "N"]>
// CHECK-NEXT:    %[[V1:[a-zA-Z0-9_]+]] = graph.sub %[[X]], %[[V0]] : tensor<?x?xf32, ["B", "N"]>
// CHECK-NEXT:    %[[E:[a-zA-Z0-9_]+]] = graph.exp %[[V1]] : tensor<?x?xf32, ["B", "N"]>
// CHECK-NEXT:    %[[V2:[a-zA-Z0-9_]+]] = graph.reduce sum %[[E]] axes = [1] keepdims : tensor<?x?xf32, ["B", "N"]> -> tensor<?x1xf32, ["B", ""]>
// CHECK-NEXT:    %[[V3:[a-zA-Z0-9_]+]] = graph.broadcast %[[V2]] : tensor<?x1xf32, ["B", ""]> -> tensor<?x?xf32, ["B", "N"]>
// CHECK-NEXT:    %[[V4:[a-zA-Z0-9_]+]] = graph.div %[[E]], %[[V3]] : tensor<?x?xf32, ["B", "N"]>
// CHECK-NEXT:    func.return %[[V4]] : tensor<?x?xf32, ["B", "N"]>

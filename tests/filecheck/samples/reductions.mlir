// The front end's IR for samples/reductions.tdsl, and its round trip through fusec-opt
// in custom and generic form.
// RUN: fusec %samples/reductions.tdsl --emit graph | filecheck %s
// RUN: fusec %samples/reductions.tdsl --emit graph | fusec-opt | fusec-opt --print-op-generic | fusec-opt | filecheck %s

// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    %[[V0:[a-zA-Z0-9_]+]] = graph.reduce sum %[[X:[a-zA-Z0-9_]+]] axes = [1] : tensor<?x?xf32, ["N", "D"]> -> tensor<?xf32, ["N"]>
// CHECK-NEXT:    %[[V1:[a-zA-Z0-9_]+]] = graph.reduce max %[[X]] axes = [1] : tensor<?x?xf32, ["N", "D"]> -> tensor<?xf32, ["N"]>
// CHECK-NEXT:    %[[V2:[a-zA-Z0-9_]+]] = graph.reduce mean %[[X]] axes = [1] : tensor<?x?xf32, ["N", "D"]> -> tensor<?xf32, ["N"]>
// CHECK-NEXT:    func.return %[[V0]], %[[V1]], %[[V2]] : tensor<?xf32, ["N"]>, tensor<?xf32, ["N"]>, tensor<?xf32, ["N"]>

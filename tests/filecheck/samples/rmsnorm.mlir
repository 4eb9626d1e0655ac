// The front end's IR for samples/rmsnorm.tdsl, and its round trip through fusec-opt
// in custom and generic form.
// RUN: fusec %samples/rmsnorm.tdsl --emit graph | filecheck %s
// RUN: fusec %samples/rmsnorm.tdsl --emit graph | fusec-opt | fusec-opt --print-op-generic | fusec-opt | filecheck %s

// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    %[[V0:[a-zA-Z0-9_]+]] = graph.rmsnorm %[[X:[a-zA-Z0-9_]+]], %[[G:[a-zA-Z0-9_]+]] eps = 1.000000e-06 : tensor<?x?xf32, ["T", "D"]>, tensor<?xf32, ["D"]>
// CHECK-NEXT:    %[[V1:[a-zA-Z0-9_]+]] = graph.add %[[X]], %[[V0]] : tensor<?x?xf32, ["T", "D"]>
// CHECK-NEXT:    func.return %[[V1]] : tensor<?x?xf32, ["T", "D"]>

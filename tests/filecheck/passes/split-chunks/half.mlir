// A half-float sum split along its size adds its partials in f32: the cut is a sum of
// the input cast to f32, rounded to the half float once, after the partials combine.
// A max of half floats is exact in any order and stays as it is.
// RUN: fusec-opt %s -p 'split-chunks{size=D sizes="D=64"}' | filecheck %s

// CHECK-LABEL: func.func @main.partial0(%x: tensor<?x?xf16, ["B", "D"]>) -> (tensor<?xf32, ["B"]>, tensor<?xf16, ["B"]>)
// CHECK-SAME:    combine = ["add", "max"]
// CHECK-NEXT:    %{{.*}} = graph.cast %x : tensor<?x?xf16, ["B", "D"]> -> tensor<?x?xf32, ["B", "D"]>
// CHECK-NEXT:    %[[S:.*]] = graph.reduce sum %{{.*}} axes = [1] : tensor<?x?xf32, ["B", "D"]> -> tensor<?xf32, ["B"]>
// CHECK-NEXT:    %[[M:.*]] = graph.reduce max %x axes = [1] : tensor<?x?xf16, ["B", "D"]> -> tensor<?xf16, ["B"]>
// CHECK-NEXT:    func.return %[[S]], %[[M]]
// CHECK-LABEL: func.func @main.chunk(%cut0: tensor<?xf32, ["B"]>, %cut1: tensor<?xf16, ["B"]>)
// CHECK-NEXT:    %[[H:.*]] = graph.cast %cut0 : tensor<?xf32, ["B"]> -> tensor<?xf16, ["B"]>
// CHECK-NEXT:    func.return %[[H]], %cut1
func.func @main(%x: tensor<?x?xf16, ["B", "D"]>) -> (tensor<?xf16, ["B"]>, tensor<?xf16, ["B"]>) {
  %s = graph.reduce sum %x axes = [1] : tensor<?x?xf16, ["B", "D"]> -> tensor<?xf16, ["B"]>
  %m = graph.reduce max %x axes = [1] : tensor<?x?xf16, ["B", "D"]> -> tensor<?xf16, ["B"]>
  func.return %s, %m : tensor<?xf16, ["B"]>, tensor<?xf16, ["B"]>
}

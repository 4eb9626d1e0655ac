// RUN: fusec-opt %s -p decompose-composites | filecheck %s
// logsumexp shifts by the row's max where it is finite (abs(m) < inf), else by 0;
// var is NumPy's two passes over the mean, divided by n - ddof; std its square root.

// CHECK-LABEL: func.func @logsumexp(
// CHECK-NEXT:    %[[M:.*]] = graph.reduce max %x axes = [1] keepdims : tensor<?x8xf32, ["N", ""]> -> tensor<?x1xf32, ["N", ""]>
// CHECK-NEXT:    %[[A:.*]] = graph.abs %[[M]] : tensor<?x1xf32, ["N", ""]>
// CHECK-NEXT:    %[[INF:.*]] = graph.constant dense<0x7f800000> : tensor<f32>
// CHECK-NEXT:    %[[INFB:.*]] = graph.broadcast %[[INF]] : tensor<f32> -> tensor<?x1xf32, ["N", ""]>
// CHECK-NEXT:    %[[FIN:.*]] = graph.cmp lt %[[A]], %[[INFB]] : tensor<?x1xf32, ["N", ""]> -> tensor<?x1xi1, ["N", ""]>
// CHECK-NEXT:    %[[Z:.*]] = graph.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[ZB:.*]] = graph.broadcast %[[Z]] : tensor<f32> -> tensor<?x1xf32, ["N", ""]>
// CHECK-NEXT:    %[[S:.*]] = graph.select %[[FIN]], %[[M]], %[[ZB]] : tensor<?x1xi1, ["N", ""]>, tensor<?x1xf32, ["N", ""]>
// CHECK-NEXT:    %[[SB:.*]] = graph.broadcast %[[S]] : tensor<?x1xf32, ["N", ""]> -> tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:    %[[D:.*]] = graph.sub %x, %[[SB]] : tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:    %[[E:.*]] = graph.exp %[[D]] : tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:    %[[T:.*]] = graph.reduce sum %[[E]] axes = [1] : tensor<?x8xf32, ["N", ""]> -> tensor<?xf32, ["N"]>
// CHECK-NEXT:    %[[SR:.*]] = graph.reshape %[[S]] : tensor<?x1xf32, ["N", ""]> -> tensor<?xf32, ["N"]>
// CHECK-NEXT:    %[[L:.*]] = graph.log %[[T]] : tensor<?xf32, ["N"]>
// CHECK-NEXT:    %[[Y:.*]] = graph.add %[[L]], %[[SR]] : tensor<?xf32, ["N"]>
// CHECK-NEXT:    func.return %[[Y]]
func.func @logsumexp(%x: tensor<?x8xf32, ["N", ""]>) -> tensor<?xf32, ["N"]> {
  %y = graph.logsumexp %x axes = [1] : tensor<?x8xf32, ["N", ""]> -> tensor<?xf32, ["N"]>
  func.return %y : tensor<?xf32, ["N"]>
}

// CHECK-LABEL: func.func @std(
// CHECK-NEXT:    %[[S:.*]] = graph.reduce sum %x axes = [1] keepdims : tensor<?x8xf32, ["N", ""]> -> tensor<?x1xf32, ["N", ""]>
// CHECK-NEXT:    %[[K:.*]] = graph.constant dense<1.250000e-01> : tensor<f32>
// CHECK-NEXT:    %[[KB:.*]] = graph.broadcast %[[K]] : tensor<f32> -> tensor<?x1xf32, ["N", ""]>
// CHECK-NEXT:    %[[MEAN:.*]] = graph.mul %[[S]], %[[KB]] : tensor<?x1xf32, ["N", ""]>
// CHECK-NEXT:    %[[MB:.*]] = graph.broadcast %[[MEAN]] : tensor<?x1xf32, ["N", ""]> -> tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:    %[[C:.*]] = graph.sub %x, %[[MB]] : tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:    %[[C2:.*]] = graph.mul %[[C]], %[[C]] : tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:    %[[SS:.*]] = graph.reduce sum %[[C2]] axes = [1] keepdims : tensor<?x8xf32, ["N", ""]> -> tensor<?x1xf32, ["N", ""]>
// CHECK-NEXT:    %[[N:.*]] = graph.constant dense<7.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[NB:.*]] = graph.broadcast %[[N]] : tensor<f32> -> tensor<?x1xf32, ["N", ""]>
// CHECK-NEXT:    %[[V:.*]] = graph.div %[[SS]], %[[NB]] : tensor<?x1xf32, ["N", ""]>
// CHECK-NEXT:    %[[Y:.*]] = graph.sqrt %[[V]] : tensor<?x1xf32, ["N", ""]>
// CHECK-NEXT:    func.return %[[Y]]
func.func @std(%x: tensor<?x8xf32, ["N", ""]>) -> tensor<?x1xf32, ["N", ""]> {
  %y = graph.std %x axes = [1] keepdims ddof = 1.0 : tensor<?x8xf32, ["N", ""]> -> tensor<?x1xf32, ["N", ""]>
  func.return %y : tensor<?x1xf32, ["N", ""]>
}

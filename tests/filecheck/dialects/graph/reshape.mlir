// RUN: fusec-opt %s | fusec-opt | filecheck %s
// RUN: fusec-opt %s --print-op-generic | fusec-opt | filecheck %s
// graph.reshape: row-major, same element count (equal integer products, same names).

// CHECK-LABEL: func.func @reshape_static(%x: tensor<4x8xf32>, %s: tensor<1xi64>)
// CHECK-NEXT:    %flat = graph.reshape %x : tensor<4x8xf32> -> tensor<32xf32>
// CHECK-NEXT:    %split = graph.reshape %x : tensor<4x8xf32> -> tensor<2x2x8xf32>
// CHECK-NEXT:    %scalar = graph.reshape %s : tensor<1xi64> -> tensor<i64>
func.func @reshape_static(%x: tensor<4x8xf32>, %s: tensor<1xi64>) -> (tensor<32xf32>, tensor<2x2x8xf32>, tensor<i64>) {
  %flat = graph.reshape %x : tensor<4x8xf32> -> tensor<32xf32>
  %split = graph.reshape %x : tensor<4x8xf32> -> tensor<2x2x8xf32>
  %scalar = graph.reshape %s : tensor<1xi64> -> tensor<i64>
  func.return %flat, %split, %scalar : tensor<32xf32>, tensor<2x2x8xf32>, tensor<i64>
}

// Split heads: [N, 768] -> [N, 12, 64]; names may move, 1s come and go.
// CHECK-LABEL: func.func @reshape_symbolic(%x: tensor<?x768xf32, ["N", ""]>, %y: tensor<?x?x1xf32, ["B", "N", ""]>)
// CHECK-NEXT:    %heads = graph.reshape %x : tensor<?x768xf32, ["N", ""]> -> tensor<?x12x64xf32, ["N", "", ""]>
// CHECK-NEXT:    %moved = graph.reshape %y : tensor<?x?x1xf32, ["B", "N", ""]> -> tensor<?x?xf32, ["N", "B"]>
func.func @reshape_symbolic(%x: tensor<?x768xf32, ["N", ""]>, %y: tensor<?x?x1xf32, ["B", "N", ""]>) -> (tensor<?x12x64xf32, ["N", "", ""]>, tensor<?x?xf32, ["N", "B"]>) {
  %heads = graph.reshape %x : tensor<?x768xf32, ["N", ""]> -> tensor<?x12x64xf32, ["N", "", ""]>
  %moved = graph.reshape %y : tensor<?x?x1xf32, ["B", "N", ""]> -> tensor<?x?xf32, ["N", "B"]>
  func.return %heads, %moved : tensor<?x12x64xf32, ["N", "", ""]>, tensor<?x?xf32, ["N", "B"]>
}

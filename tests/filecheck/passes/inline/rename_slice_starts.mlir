// A slice's starts name sizes too: inlined, the callee's E/2 is the caller's D/2, or 4
// where the call binds E = 8 (func.call wants equal types, so the input does not verify).
// RUN: fusec-opt %s --disable-verify -p inline | fusec-opt | filecheck %s

// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    %[[A:.*]] = graph.slice %x starts = ["0", "D/2"] steps = [1, 1] : tensor<?x?xf32, ["M", "D"]> -> tensor<?x?xf32, ["M", "D/2"]>
// CHECK-NEXT:    %[[B:.*]] = graph.slice %y starts = ["0", "4"] steps = [1, 1] : tensor<?x8xf32, ["M", ""]> -> tensor<?x4xf32, ["M", ""]>
// CHECK-NEXT:    func.return %[[A]], %[[B]]

func.func @half(%x: tensor<?x?xf32, ["N", "E"]>) -> tensor<?x?xf32, ["N", "E/2"]> {
  %h = graph.slice %x starts = ["0", "E/2"] steps = [1, 1] : tensor<?x?xf32, ["N", "E"]> -> tensor<?x?xf32, ["N", "E/2"]>
  func.return %h : tensor<?x?xf32, ["N", "E/2"]>
}
func.func @main(%x: tensor<?x?xf32, ["M", "D"]>, %y: tensor<?x8xf32, ["M", ""]>) -> (tensor<?x?xf32, ["M", "D/2"]>, tensor<?x4xf32, ["M", ""]>) {
  %a = func.call @half(%x) : (tensor<?x?xf32, ["M", "D"]>) -> tensor<?x?xf32, ["M", "D/2"]>
  %b = func.call @half(%y) : (tensor<?x8xf32, ["M", ""]>) -> tensor<?x4xf32, ["M", ""]>
  func.return %a, %b : tensor<?x?xf32, ["M", "D/2"]>, tensor<?x4xf32, ["M", ""]>
}

// A half-float matmul contracting the split size accumulates its partials in f32: the
// cut multiplies its operands cast to f32 (a product of two half floats is exact in f32)
// and rounds to the half float once, after the partials combine.
// RUN: fusec-opt %s -p 'split-chunks{size=K sizes="K=64"}' | filecheck %s

// CHECK-LABEL: func.func @main.partial0(%a: tensor<?x?xbf16, ["M", "K"]>, %b: tensor<?x?xbf16, ["N", "K"]>) -> tensor<?x?xf32, ["M", "N"]>
// CHECK-SAME:    combine = ["add"]
// CHECK-NEXT:    %[[A:.*]] = graph.cast %a : tensor<?x?xbf16, ["M", "K"]> -> tensor<?x?xf32, ["M", "K"]>
// CHECK-NEXT:    %[[B:.*]] = graph.cast %b : tensor<?x?xbf16, ["N", "K"]> -> tensor<?x?xf32, ["N", "K"]>
// CHECK-NEXT:    %[[P:.*]] = graph.matmul %[[A]], %[[B]] transpose_rhs : tensor<?x?xf32, ["M", "K"]>, tensor<?x?xf32, ["N", "K"]> -> tensor<?x?xf32, ["M", "N"]>
// CHECK-NEXT:    func.return %[[P]]
// CHECK-LABEL: func.func @main.chunk(%cut0: tensor<?x?xf32, ["M", "N"]>)
// CHECK-NEXT:    %[[H:.*]] = graph.cast %cut0 : tensor<?x?xf32, ["M", "N"]> -> tensor<?x?xbf16, ["M", "N"]>
// CHECK-NEXT:    func.return %[[H]]
func.func @main(%a: tensor<?x?xbf16, ["M", "K"]>, %b: tensor<?x?xbf16, ["N", "K"]>) -> tensor<?x?xbf16, ["M", "N"]> {
  %c = graph.matmul %a, %b transpose_rhs : tensor<?x?xbf16, ["M", "K"]>, tensor<?x?xbf16, ["N", "K"]> -> tensor<?x?xbf16, ["M", "N"]>
  func.return %c : tensor<?x?xbf16, ["M", "N"]>
}

// RUN: fusec-opt %s | fusec-opt | filecheck %s
// RUN: fusec-opt %s --print-op-generic | fusec-opt | filecheck %s
// bf16 tensors: float ops take them as they take f16, casts go to and from them, and a
// constant of -inf keeps its bits through printing and parsing.

// CHECK-LABEL: func.func @half(%x: tensor<4xbf16>, %y: tensor<4xbf16>) -> tensor<4xf16> {
// CHECK-NEXT:    %z = graph.add %x, %y : tensor<4xbf16>
// CHECK-NEXT:    %e = graph.exp %z : tensor<4xbf16>
// CHECK-NEXT:    %m = graph.constant dense<0xff80> : tensor<bf16>
// CHECK-NEXT:    %b = graph.broadcast %m : tensor<bf16> -> tensor<4xbf16>
// CHECK-NEXT:    %s = graph.maximum %e, %b : tensor<4xbf16>
// CHECK-NEXT:    %c = graph.cast %s : tensor<4xbf16> -> tensor<4xf16>
// CHECK-NEXT:    func.return %c : tensor<4xf16>
func.func @half(%x: tensor<4xbf16>, %y: tensor<4xbf16>) -> tensor<4xf16> {
  %z = graph.add %x, %y : tensor<4xbf16>
  %e = graph.exp %z : tensor<4xbf16>
  %m = graph.constant dense<0xFF80> : tensor<bf16>
  %b = graph.broadcast %m : tensor<bf16> -> tensor<4xbf16>
  %s = graph.maximum %e, %b : tensor<4xbf16>
  %c = graph.cast %s : tensor<4xbf16> -> tensor<4xf16>
  func.return %c : tensor<4xf16>
}

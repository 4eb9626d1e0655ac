// RUN: fusec-opt %s | fusec-opt | filecheck %s
// RUN: fusec-opt %s --print-op-generic | fusec-opt | filecheck %s
// graph.iota: each element is its index along one axis.

// CHECK-LABEL: func.func @arange() -> tensor<8xi64> {
// CHECK-NEXT:    %r = graph.iota axis = 0 : tensor<8xi64>
// CHECK-NEXT:    func.return %r : tensor<8xi64>
func.func @arange() -> tensor<8xi64> {
  %r = graph.iota axis = 0 : tensor<8xi64>
  func.return %r : tensor<8xi64>
}

// CHECK-LABEL: func.func @causal(%x: tensor<?x?xf32, ["S", "S"]>) -> tensor<?x?xi1, ["S", "S"]> {
// CHECK-NEXT:    %rows = graph.iota axis = 0 : tensor<?x?xi32, ["S", "S"]>
// CHECK-NEXT:    %cols = graph.iota axis = 1 : tensor<?x?xi32, ["S", "S"]>
// CHECK-NEXT:    %m = graph.cmp ge %rows, %cols : tensor<?x?xi32, ["S", "S"]> -> tensor<?x?xi1, ["S", "S"]>
func.func @causal(%x: tensor<?x?xf32, ["S", "S"]>) -> tensor<?x?xi1, ["S", "S"]> {
  %rows = graph.iota axis = 0 : tensor<?x?xi32, ["S", "S"]>
  %cols = graph.iota axis = 1 : tensor<?x?xi32, ["S", "S"]>
  %m = graph.cmp ge %rows, %cols : tensor<?x?xi32, ["S", "S"]> -> tensor<?x?xi1, ["S", "S"]>
  func.return %m : tensor<?x?xi1, ["S", "S"]>
}

// CHECK-LABEL: func.func @float_iota() -> tensor<4x3xf32> {
// CHECK-NEXT:    %r = graph.iota axis = 1 : tensor<4x3xf32>
func.func @float_iota() -> tensor<4x3xf32> {
  %r = graph.iota axis = 1 : tensor<4x3xf32>
  func.return %r : tensor<4x3xf32>
}

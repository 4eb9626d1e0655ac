// RUN: fusec-opt %s | fusec-opt | filecheck %s
// RUN: fusec-opt %s --print-op-generic | fusec-opt | filecheck %s
// graph.select: where(cond, a, b) with a bool condition of the values' shape.

// CHECK-LABEL: func.func @select_static(%c: tensor<4x8xi1>, %a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %r = graph.select %c, %a, %b : tensor<4x8xi1>, tensor<4x8xf32>
// CHECK-NEXT:    func.return %r : tensor<4x8xf32>
func.func @select_static(%c: tensor<4x8xi1>, %a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %r = graph.select %c, %a, %b : tensor<4x8xi1>, tensor<4x8xf32>
  func.return %r : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @select_symbolic(
// CHECK-NEXT:    %r = graph.select %c, %a, %b : tensor<?x?xi1, ["B", "N"]>, tensor<?x?xi32, ["B", "N"]>
// CHECK-NEXT:    func.return %r : tensor<?x?xi32, ["B", "N"]>
func.func @select_symbolic(%c: tensor<?x?xi1, ["B", "N"]>, %a: tensor<?x?xi32, ["B", "N"]>, %b: tensor<?x?xi32, ["B", "N"]>) -> tensor<?x?xi32, ["B", "N"]> {
  %r = graph.select %c, %a, %b : tensor<?x?xi1, ["B", "N"]>, tensor<?x?xi32, ["B", "N"]>
  func.return %r : tensor<?x?xi32, ["B", "N"]>
}

// The values may be bools too.
// CHECK-LABEL: func.func @select_bool_rank0(
// CHECK-NEXT:    %r = graph.select %c, %a, %b : tensor<i1>, tensor<i1>
func.func @select_bool_rank0(%c: tensor<i1>, %a: tensor<i1>, %b: tensor<i1>) -> tensor<i1> {
  %r = graph.select %c, %a, %b : tensor<i1>, tensor<i1>
  func.return %r : tensor<i1>
}

// RUN: fusec-opt %s | fusec-opt | filecheck %s
// RUN: fusec-opt %s --print-op-generic | fusec-opt | filecheck %s
// graph.cmp: every predicate, static and symbolic, giving a bool (i1) tensor.

// CHECK-LABEL: func.func @cmp_static(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>)
// CHECK-NEXT:    %lt = graph.cmp lt %a, %b : tensor<4x8xf32> -> tensor<4x8xi1>
// CHECK-NEXT:    %le = graph.cmp le %a, %b : tensor<4x8xf32> -> tensor<4x8xi1>
// CHECK-NEXT:    %gt = graph.cmp gt %a, %b : tensor<4x8xf32> -> tensor<4x8xi1>
// CHECK-NEXT:    %ge = graph.cmp ge %a, %b : tensor<4x8xf32> -> tensor<4x8xi1>
// CHECK-NEXT:    %eq = graph.cmp eq %a, %b : tensor<4x8xf32> -> tensor<4x8xi1>
// CHECK-NEXT:    %ne = graph.cmp ne %a, %b : tensor<4x8xf32> -> tensor<4x8xi1>
// CHECK-NEXT:    func.return %lt, %le, %gt, %ge, %eq, %ne : tensor<4x8xi1>, tensor<4x8xi1>, tensor<4x8xi1>, tensor<4x8xi1>, tensor<4x8xi1>, tensor<4x8xi1>
func.func @cmp_static(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> (tensor<4x8xi1>, tensor<4x8xi1>, tensor<4x8xi1>, tensor<4x8xi1>, tensor<4x8xi1>, tensor<4x8xi1>) {
  %lt = graph.cmp lt %a, %b : tensor<4x8xf32> -> tensor<4x8xi1>
  %le = graph.cmp le %a, %b : tensor<4x8xf32> -> tensor<4x8xi1>
  %gt = graph.cmp gt %a, %b : tensor<4x8xf32> -> tensor<4x8xi1>
  %ge = graph.cmp ge %a, %b : tensor<4x8xf32> -> tensor<4x8xi1>
  %eq = graph.cmp eq %a, %b : tensor<4x8xf32> -> tensor<4x8xi1>
  %ne = graph.cmp ne %a, %b : tensor<4x8xf32> -> tensor<4x8xi1>
  func.return %lt, %le, %gt, %ge, %eq, %ne : tensor<4x8xi1>, tensor<4x8xi1>, tensor<4x8xi1>, tensor<4x8xi1>, tensor<4x8xi1>, tensor<4x8xi1>
}

// CHECK-LABEL: func.func @cmp_symbolic(%a: tensor<?x8xf32, ["N", ""]>, %b: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xi1, ["N", ""]> {
// CHECK-NEXT:    %c = graph.cmp ge %a, %b : tensor<?x8xf32, ["N", ""]> -> tensor<?x8xi1, ["N", ""]>
// CHECK-NEXT:    func.return %c : tensor<?x8xi1, ["N", ""]>
func.func @cmp_symbolic(%a: tensor<?x8xf32, ["N", ""]>, %b: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xi1, ["N", ""]> {
  %c = graph.cmp ge %a, %b : tensor<?x8xf32, ["N", ""]> -> tensor<?x8xi1, ["N", ""]>
  func.return %c : tensor<?x8xi1, ["N", ""]>
}

// CHECK-LABEL: func.func @cmp_int_rank0(%a: tensor<i64>, %b: tensor<i64>) -> tensor<i1> {
// CHECK-NEXT:    %c = graph.cmp ne %a, %b : tensor<i64> -> tensor<i1>
func.func @cmp_int_rank0(%a: tensor<i64>, %b: tensor<i64>) -> tensor<i1> {
  %c = graph.cmp ne %a, %b : tensor<i64> -> tensor<i1>
  func.return %c : tensor<i1>
}

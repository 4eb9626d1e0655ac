// RUN: fusec-opt %s -p inline | filecheck %s
// RUN: fusec-opt %s -p 'inline{entry=nothing}' | filecheck %s --check-prefix=NOENTRY

// Nested calls are inlined into main; the callees are dropped (main is the entry).
// CHECK-NOT:   func.func @square
// CHECK-NOT:   func.func @twice
// CHECK-LABEL: func.func @main(%x: tensor<?xf32, ["N"]>, %y: tensor<?xf32, ["N"]>) -> tensor<?xf32, ["N"]> {
// CHECK-NEXT:    %[[S:.*]] = graph.mul %x, %x : tensor<?xf32, ["N"]>
// CHECK-NEXT:    %[[T:.*]] = graph.add %[[S]], %y : tensor<?xf32, ["N"]>
// CHECK-NEXT:    %[[E:.*]] = graph.exp %[[T]] : tensor<?xf32, ["N"]>
// CHECK-NEXT:    %[[R:.*]] = graph.mul %[[T]], %[[T]] : tensor<?xf32, ["N"]>
// CHECK-NEXT:    %[[Z:.*]] = graph.sub %[[R]], %[[E]] : tensor<?xf32, ["N"]>
// CHECK-NEXT:    func.return %[[Z]] : tensor<?xf32, ["N"]>
// CHECK-NOT:   func.call

// Without the entry, public functions stay (inlined too); the private one goes.
// NOENTRY-NOT:   func.func private @square
// NOENTRY-LABEL: func.func @twice(
// NOENTRY-NEXT:    graph.mul
// NOENTRY-LABEL: func.func @main(
// NOENTRY-NOT:     func.call

func.func private @square(%a: tensor<?xf32, ["N"]>) -> tensor<?xf32, ["N"]> {
  %s = graph.mul %a, %a : tensor<?xf32, ["N"]>
  func.return %s : tensor<?xf32, ["N"]>
}
func.func @twice(%a: tensor<?xf32, ["N"]>, %b: tensor<?xf32, ["N"]>) -> (tensor<?xf32, ["N"]>, tensor<?xf32, ["N"]>) {
  %s = func.call @square(%a) : (tensor<?xf32, ["N"]>) -> tensor<?xf32, ["N"]>
  %t = graph.add %s, %b : tensor<?xf32, ["N"]>
  %e = graph.exp %t : tensor<?xf32, ["N"]>
  func.return %t, %e : tensor<?xf32, ["N"]>, tensor<?xf32, ["N"]>
}
func.func @main(%x: tensor<?xf32, ["N"]>, %y: tensor<?xf32, ["N"]>) -> tensor<?xf32, ["N"]> {
  %p, %q = func.call @twice(%x, %y) : (tensor<?xf32, ["N"]>, tensor<?xf32, ["N"]>) -> (tensor<?xf32, ["N"]>, tensor<?xf32, ["N"]>)
  %r = func.call @square(%p) : (tensor<?xf32, ["N"]>) -> tensor<?xf32, ["N"]>
  %z = graph.sub %r, %q : tensor<?xf32, ["N"]>
  func.return %z : tensor<?xf32, ["N"]>
}

// A callee that returns a parameter: the call's result is the operand passed for it,
// also through a swap of arguments and a callee with size names of its own (whose calls
// do not verify before inlining, see rename_sizes.mlir).
// RUN: fusec-opt %s --disable-verify -p inline | fusec-opt | filecheck %s

// CHECK-NOT:   func.func private
// CHECK-LABEL: func.func @main(%x: tensor<?xf32, ["N"]>, %y: tensor<?xf32, ["N"]>) -> (tensor<?xf32, ["N"]>, tensor<?xf32, ["N"]>) {
// CHECK-NEXT:    %[[Z:.*]] = graph.exp %x : tensor<?xf32, ["N"]>
// CHECK-NEXT:    func.return %[[Z]], %y : tensor<?xf32, ["N"]>, tensor<?xf32, ["N"]>
// CHECK-NOT:   func.call

func.func private @identity(%a: tensor<?xf32, ["N"]>) -> tensor<?xf32, ["N"]> {
  func.return %a : tensor<?xf32, ["N"]>
}
func.func private @pick(%a: tensor<?xf32, ["N"]>, %b: tensor<?xf32, ["N"]>) -> tensor<?xf32, ["N"]> {
  func.return %b : tensor<?xf32, ["N"]>
}
func.func private @swap(%a: tensor<?xf32, ["N"]>, %b: tensor<?xf32, ["N"]>) -> (tensor<?xf32, ["N"]>, tensor<?xf32, ["N"]>) {
  func.return %b, %a : tensor<?xf32, ["N"]>, tensor<?xf32, ["N"]>
}
func.func private @renamed(%a: tensor<?xf32, ["M"]>) -> tensor<?xf32, ["M"]> {
  %r = func.call @identity(%a) : (tensor<?xf32, ["M"]>) -> tensor<?xf32, ["M"]>
  func.return %r : tensor<?xf32, ["M"]>
}
func.func @main(%x: tensor<?xf32, ["N"]>, %y: tensor<?xf32, ["N"]>) -> (tensor<?xf32, ["N"]>, tensor<?xf32, ["N"]>) {
  %i = func.call @identity(%x) : (tensor<?xf32, ["N"]>) -> tensor<?xf32, ["N"]>
  %p = func.call @pick(%y, %i) : (tensor<?xf32, ["N"]>, tensor<?xf32, ["N"]>) -> tensor<?xf32, ["N"]>
  %s, %t = func.call @swap(%y, %p) : (tensor<?xf32, ["N"]>, tensor<?xf32, ["N"]>) -> (tensor<?xf32, ["N"]>, tensor<?xf32, ["N"]>)
  %r = func.call @renamed(%s) : (tensor<?xf32, ["N"]>) -> tensor<?xf32, ["N"]>
  %z = graph.exp %r : tensor<?xf32, ["N"]>
  func.return %z, %t : tensor<?xf32, ["N"]>, tensor<?xf32, ["N"]>
}

// The operations inlining adds to a function are counted before anything is copied;
// past max-inlined-ops the pass stops with an error naming the call that crosses it.
// f1 adds 2 (two copies of f0's exp), f2 adds 2 * 3, f3 adds 2 * 7 = 14, main f3's 15.
// RUN: not fusec-opt %s -p 'inline{max-inlined-ops=10}' 2>&1 | filecheck %s --check-prefix=OVER
// RUN: fusec-opt %s -p 'inline{max-inlined-ops=15}' | filecheck %s --check-prefix=WITHIN

// OVER: fusec-opt: error: inlining this call of 'f2' takes 'f3' past the limit of 10 inlined operations (its calls would add 14): the calls nest too deep or too wide to inline
// OVER-NOT: Traceback

// WITHIN-LABEL: func.func @main(
// WITHIN-COUNT-8: graph.exp
// WITHIN-NOT:     func.call

func.func private @f0(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = graph.exp %a : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
func.func private @f1(%a: tensor<4xf32>) -> tensor<4xf32> {
  %p = func.call @f0(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %q = func.call @f0(%p) : (tensor<4xf32>) -> tensor<4xf32>
  %r = graph.add %p, %q : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
func.func private @f2(%a: tensor<4xf32>) -> tensor<4xf32> {
  %p = func.call @f1(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %q = func.call @f1(%p) : (tensor<4xf32>) -> tensor<4xf32>
  %r = graph.add %p, %q : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
func.func private @f3(%a: tensor<4xf32>) -> tensor<4xf32> {
  %p = func.call @f2(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %q = func.call @f2(%p) : (tensor<4xf32>) -> tensor<4xf32>
  %r = graph.add %p, %q : tensor<4xf32>
  func.return %r : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = func.call @f3(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// prod, any and all over a size split into partials combined by mul, or and and; an
// argmax over it needs all of it (a chunk's index is local to its chunk).
// RUN: fusec-opt %s -p partition-axes | filecheck %s

// CHECK-LABEL: func.func @combiners(
// CHECK-SAME:  partition = {B = "parallel", N = "reduction(mul, or, and; 1 pass)"}
func.func @combiners(%x: tensor<?x?xf32, ["B", "N"]>, %b: tensor<?x?xi1, ["B", "N"]>) -> (tensor<?xf32, ["B"]>, tensor<?xi1, ["B"]>, tensor<?xi1, ["B"]>) {
  %p = graph.reduce prod %x axes = [1] : tensor<?x?xf32, ["B", "N"]> -> tensor<?xf32, ["B"]>
  %a = graph.reduce any %b axes = [1] : tensor<?x?xi1, ["B", "N"]> -> tensor<?xi1, ["B"]>
  %l = graph.reduce all %b axes = [1] : tensor<?x?xi1, ["B", "N"]> -> tensor<?xi1, ["B"]>
  func.return %p, %a, %l : tensor<?xf32, ["B"]>, tensor<?xi1, ["B"]>, tensor<?xi1, ["B"]>
}

// CHECK-LABEL: func.func @argmax(
// CHECK-SAME:  partition = {B = "parallel", N = "unsplittable: argmax reduces N: it needs all of it"}
func.func @argmax(%x: tensor<?x?xf32, ["B", "N"]>) -> tensor<?xi64, ["B"]> {
  %i = graph.reduce argmax %x axes = [1] : tensor<?x?xf32, ["B", "N"]> -> tensor<?xi64, ["B"]>
  func.return %i : tensor<?xi64, ["B"]>
}

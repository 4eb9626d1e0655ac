// A split the function cannot take fails the pass with the reason.
// RUN: not fusec-opt %s -p 'split-chunks{size=S}' 2>&1 | filecheck %s --check-prefix=UNSPLITTABLE
// RUN: not fusec-opt %s -p 'split-chunks{size=Q}' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not fusec-opt %s -p 'split-chunks{sizes="S=x"}' 2>&1 | filecheck %s --check-prefix=SYNTAX
// RUN: not fusec-opt %s -p 'split-chunks{entry=nothing}' 2>&1 | filecheck %s --check-prefix=ENTRY

// UNSPLITTABLE: split-chunks: main cannot be split along S: graph.matmul has two axes of size S: a chunk of one needs all of the other
// UNKNOWN: split-chunks: Q is no size of main (sizes: S, D)
// SYNTAX: split-chunks: sizes='S=x': expected NAME=INTEGER,...
// ENTRY: split-chunks: no function @nothing with a body
func.func @main(%q: tensor<?x?xf32, ["S", "D"]>, %k: tensor<?x?xf32, ["S", "D"]>) -> tensor<?x?xf32, ["S", "S"]> {
  %s = graph.matmul %q, %k transpose_rhs : tensor<?x?xf32, ["S", "D"]>, tensor<?x?xf32, ["S", "D"]> -> tensor<?x?xf32, ["S", "S"]>
  func.return %s : tensor<?x?xf32, ["S", "S"]>
}

// A function split along a reduction size: a function per round of partials (each
// with its combiners) and one for the chunk's results, each taking what it reads.
// RUN: fusec-opt %s -p 'split-chunks{entry=softmax size=N sizes="N=4096"}' | filecheck %s --check-prefix=SOFTMAX
// RUN: fusec-opt %s -p 'split-chunks{entry=centre size=D sizes="D=512"}' | filecheck %s --check-prefix=CENTRE
// RUN: fusec-opt %s -p 'split-chunks{entry=matmul_sum size=K sizes="K=64"}' | filecheck %s --check-prefix=CONTRACT
// RUN: fusec-opt %s -p 'split-chunks{entry=softmax sizes="B=8"}' | filecheck %s --check-prefix=PARALLEL

// softmax's rows: the max, then the sum of exponentials after it, then the chunk
// SOFTMAX-LABEL: func.func @softmax.partial0(%x: tensor<?x?xf32, ["B", "N"]>) -> tensor<?x1xf32, ["B", ""]>
// SOFTMAX-SAME:    attributes {chunk_operands = ["x"], chunk_results = ["cut0"], combine = ["max"]}
// SOFTMAX-NEXT:    %m = graph.reduce max %x
// SOFTMAX-NEXT:    func.return %m
// SOFTMAX-LABEL: func.func @softmax.partial1(%x: tensor<?x?xf32, ["B", "N"]>, %cut0: tensor<?x1xf32, ["B", ""]>)
// SOFTMAX-SAME:    attributes {chunk_operands = ["x", "cut0"], chunk_results = ["cut1"], combine = ["add"]}
// SOFTMAX:         graph.broadcast %cut0
// SOFTMAX:         graph.exp
// SOFTMAX:         graph.reduce sum
// SOFTMAX-LABEL: func.func @softmax.chunk(%x: tensor<?x?xf32, ["B", "N"]>, %cut0: tensor<?x1xf32, ["B", ""]>, %cut1: tensor<?x1xf32, ["B", ""]>)
// SOFTMAX-SAME:    attributes {chunk_operands = ["x", "cut0", "cut1"]}
// SOFTMAX-NOT:     graph.reduce
// SOFTMAX:         graph.div
// PARALLEL-LABEL: func.func @softmax.chunk(%x: tensor<?x?xf32, ["B", "N"]>) -> tensor<?x?xf32, ["B", "N"]>
// PARALLEL-SAME:    attributes {chunk_operands = ["x"]}
// PARALLEL:         graph.reduce max
// PARALLEL:         graph.reduce sum
func.func @softmax(%x: tensor<?x?xf32, ["B", "N"]>) -> tensor<?x?xf32, ["B", "N"]> {
  %m = graph.reduce max %x axes = [1] keepdims : tensor<?x?xf32, ["B", "N"]> -> tensor<?x1xf32, ["B", ""]>
  %mb = graph.broadcast %m : tensor<?x1xf32, ["B", ""]> -> tensor<?x?xf32, ["B", "N"]>
  %d = graph.sub %x, %mb : tensor<?x?xf32, ["B", "N"]>
  %e = graph.exp %d : tensor<?x?xf32, ["B", "N"]>
  %s = graph.reduce sum %e axes = [1] keepdims : tensor<?x?xf32, ["B", "N"]> -> tensor<?x1xf32, ["B", ""]>
  %sb = graph.broadcast %s : tensor<?x1xf32, ["B", ""]> -> tensor<?x?xf32, ["B", "N"]>
  %r = graph.div %e, %sb : tensor<?x?xf32, ["B", "N"]>
  func.return %r : tensor<?x?xf32, ["B", "N"]>
}

// a mean divides by the whole size, not a chunk's: the dim_size becomes a constant;
// the centred rows need the combined sum and the parameter, not the partial function
// CENTRE-LABEL: func.func @centre.partial0(%x: tensor<?x?xf32, ["N", "D"]>)
// CENTRE-SAME:    combine = ["add"]
// CENTRE-NOT:     graph.dim_size
// CENTRE-LABEL: func.func @centre.chunk(%x: tensor<?x?xf32, ["N", "D"]>, %beta: tensor<?xf32, ["D"]>, %cut0: tensor<?x1xf32, ["N", ""]>)
// CENTRE-SAME:    attributes {chunk_operands = ["x", "beta", "cut0"]}
// CENTRE-NOT:     graph.dim_size
// CENTRE:         %{{.*}} = graph.constant dense<5.120000e+02> : tensor<f32>
// CENTRE-NOT:     graph.reduce
// CENTRE:         func.return
func.func @centre(%x: tensor<?x?xf32, ["N", "D"]>, %beta: tensor<?xf32, ["D"]>) -> tensor<?x?xf32, ["N", "D"]> {
  %s = graph.reduce sum %x axes = [1] keepdims : tensor<?x?xf32, ["N", "D"]> -> tensor<?x1xf32, ["N", ""]>
  %n = graph.dim_size %x[1] : tensor<?x?xf32, ["N", "D"]> -> tensor<f32>
  %nb = graph.broadcast %n : tensor<f32> -> tensor<?x1xf32, ["N", ""]>
  %mu = graph.div %s, %nb : tensor<?x1xf32, ["N", ""]>
  %mub = graph.broadcast %mu : tensor<?x1xf32, ["N", ""]> -> tensor<?x?xf32, ["N", "D"]>
  %c = graph.sub %x, %mub : tensor<?x?xf32, ["N", "D"]>
  %bb = graph.broadcast %beta : tensor<?xf32, ["D"]> -> tensor<?x?xf32, ["N", "D"]>
  %r = graph.add %c, %bb : tensor<?x?xf32, ["N", "D"]>
  func.return %r : tensor<?x?xf32, ["N", "D"]>
}

// a contraction over K is a partial product per chunk, added up; a result without K
// (its row sums) reads only the combined value
// CONTRACT-LABEL: func.func @matmul_sum.partial0(%x: tensor<?x?xf32, ["T", "K"]>, %w: tensor<?x8xf32, ["K", ""]>) -> tensor<?x8xf32, ["T", ""]>
// CONTRACT-SAME:    attributes {chunk_operands = ["x", "w"], chunk_results = ["cut0"], combine = ["add"]}
// CONTRACT-NEXT:    graph.matmul %x, %w
// CONTRACT-LABEL: func.func @matmul_sum.chunk(%cut0: tensor<?x8xf32, ["T", ""]>) -> (tensor<?x8xf32, ["T", ""]>, tensor<?xf32, ["T"]>)
// CONTRACT-SAME:    attributes {chunk_operands = ["cut0"]}
// CONTRACT-NEXT:    %{{.*}} = graph.reduce sum %cut0 axes = [1]
func.func @matmul_sum(%x: tensor<?x?xf32, ["T", "K"]>, %w: tensor<?x8xf32, ["K", ""]>) -> (tensor<?x8xf32, ["T", ""]>, tensor<?xf32, ["T"]>) {
  %y = graph.matmul %x, %w : tensor<?x?xf32, ["T", "K"]>, tensor<?x8xf32, ["K", ""]> -> tensor<?x8xf32, ["T", ""]>
  %r = graph.reduce sum %y axes = [1] : tensor<?x8xf32, ["T", ""]> -> tensor<?xf32, ["T"]>
  func.return %y, %r : tensor<?x8xf32, ["T", ""]>, tensor<?xf32, ["T"]>
}

// a result of the chunk's shape made from combined values alone still takes a
// parameter of that shape: the chunk's size D comes from it
// RUN: fusec-opt %s -p 'split-chunks{entry=spread size=D}' | filecheck %s --check-prefix=SPREAD
// SPREAD-LABEL: func.func @spread.chunk(%x: tensor<?x?xf32, ["N", "D"]>, %cut0: tensor<?x1xf32, ["N", ""]>) -> tensor<?x?xf32, ["N", "D"]>
// SPREAD-SAME:    attributes {chunk_operands = ["x", "cut0"]}
// SPREAD-NEXT:    graph.broadcast %cut0
func.func @spread(%x: tensor<?x?xf32, ["N", "D"]>) -> tensor<?x?xf32, ["N", "D"]> {
  %s = graph.reduce sum %x axes = [1] keepdims : tensor<?x?xf32, ["N", "D"]> -> tensor<?x1xf32, ["N", ""]>
  %b = graph.broadcast %s : tensor<?x1xf32, ["N", ""]> -> tensor<?x?xf32, ["N", "D"]>
  func.return %b : tensor<?x?xf32, ["N", "D"]>
}

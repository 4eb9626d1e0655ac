// `fusec --emit opt`: the graph rewrite pipeline on whole samples.
// RUN: fusec %samples/sincos.tdsl --emit opt | filecheck %s --check-prefix=SINCOS
// RUN: fusec %samples/transformer_block.tdsl --emit opt | filecheck %s --check-prefix=BLOCK
// RUN: fusec %samples/layernorm.tdsl --emit opt | filecheck %s --check-prefix=LN

// sin(x)**2 + cos(x)**2: the squares are multiplies
// SINCOS-LABEL: func.func @main(
// SINCOS-NEXT:    %[[S:.*]] = graph.sin %x
// SINCOS-NEXT:    %[[S2:.*]] = graph.mul %[[S]], %[[S]]
// SINCOS-NEXT:    %[[C:.*]] = graph.cos %x
// SINCOS-NEXT:    %[[C2:.*]] = graph.mul %[[C]], %[[C]]
// SINCOS-NEXT:    %[[Y:.*]] = graph.add %[[S2]], %[[C2]]
// SINCOS-NEXT:    func.return %[[Y]]

// The pre-norm block: one function, no call, no composite; heads split and merged
// through index maps; k's two transposes composed into one.
// BLOCK-NOT:     func.func @split_heads
// BLOCK-LABEL:   func.func @main(
// BLOCK-NOT:     func.call
// BLOCK-NOT:     graph.layernorm
// BLOCK-NOT:     graph.softmax
// BLOCK-NOT:     graph.gelu
// BLOCK:         graph.reshape %{{.*}} {index_map}
// BLOCK:         graph.transpose %{{.*}} perm = [0, 2, 1, 3] {index_map}
// BLOCK:         graph.transpose %{{.*}} perm = [0, 2, 3, 1] {index_map}
// BLOCK:         graph.reduce max
// BLOCK:         graph.transpose %{{.*}} perm = [0, 2, 1, 3] {index_map}
// BLOCK-NEXT:    graph.reshape %{{.*}} {index_map}
// BLOCK:         graph.tanh
// BLOCK-NOT:     graph.pow
// BLOCK:         func.return

// one size read, shared by both means (CSE after canonicalize)
// LN-LABEL: func.func @main(
// LN-COUNT-1:  graph.dim_size %x[1]
// LN-NOT:      graph.dim_size
// LN:          func.return

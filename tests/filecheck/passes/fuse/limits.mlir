// RUN: fusec-opt %s -p 'fuse{max-depth=2}' | filecheck %s --check-prefix=DEPTH
// RUN: fusec-opt %s -p 'fuse{max-live=1}' | filecheck %s --check-prefix=LIVE
// RUN: fusec-opt %s -p 'fuse{max-inputs=2}' | filecheck %s --check-prefix=INPUTS
// RUN: fusec-opt %s -p fuse | filecheck %s --check-prefix=DEFAULT
// Size limits bound a kernel by what it holds, not by how many ops it has: at most
// max-live values held at once, chains of at most max-depth dependent ops (the
// lowering recurses along them), at most max-inputs inputs.

!t = tensor<?x?xf32, ["N", "D"]>

// A chain holds one value at a time: only max-depth splits it.
// DEPTH-LABEL: func.func @chain4
// DEPTH-SAME:    {producer = "exp_1", consumer = "sin_2", reason = "kernel would chain 4 ops (max_depth=2, for lower-to-loops)"}
// DEPTH-COUNT-2: kind = "elementwise", rule = "ew_chain"
// DEPTH-NOT:     graph.fusion_group
// LIVE-LABEL:  func.func @chain4
// LIVE-COUNT-1:  graph.fusion_group
// INPUTS-LABEL: func.func @chain4
// INPUTS-COUNT-1: graph.fusion_group
// DEFAULT-LABEL: func.func @chain4
// DEFAULT-COUNT-1: graph.fusion_group
func.func @chain4(%x: !t) -> !t {
  %a = graph.neg %x : !t
  %b = graph.exp %a : !t
  %c = graph.sin %b : !t
  %d = graph.cos %c : !t
  func.return %d : !t
}

// %a is still needed when %b is made: the add holds two values.
// DEPTH-LABEL: func.func @held_twice
// LIVE-LABEL:  func.func @held_twice
// LIVE-SAME:     {producer = "neg_0", consumer = "exp_1", reason = "kernel would hold 2 values at once (max_live=1)"}
// LIVE-COUNT-2:  graph.fusion_group
// LIVE-NOT:      graph.fusion_group
// DEFAULT-LABEL: func.func @held_twice
// DEFAULT-COUNT-1: graph.fusion_group
func.func @held_twice(%x: !t) -> !t {
  %a = graph.neg %x : !t
  %b = graph.exp %a : !t
  %c = graph.add %a, %b : !t
  func.return %c : !t
}

// LIVE-LABEL:  func.func @sum4
// INPUTS-LABEL: func.func @sum4
// INPUTS-SAME:   reason = "group size limit (max_inputs=2)"
// INPUTS:        graph.fusion_group(%a, %b)
// INPUTS:        graph.fusion_group(%c, %{{.*}})
// INPUTS:        graph.fusion_group(%d, %{{.*}})
// INPUTS-NOT:    graph.fusion_group
// DEFAULT-LABEL: func.func @sum4
// DEFAULT:       graph.fusion_group(%a, %b, %c, %d)
// DEFAULT-NOT:   graph.fusion_group
func.func @sum4(%a: !t, %b: !t, %c: !t, %d: !t) -> !t {
  %s1 = graph.add %a, %b : !t
  %s2 = graph.add %s1, %c : !t
  %s3 = graph.add %s2, %d : !t
  func.return %s3 : !t
}

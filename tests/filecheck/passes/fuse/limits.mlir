// RUN: fusec-opt %s -p 'fuse{max-ops=2}' | filecheck %s --check-prefix=OPS
// RUN: fusec-opt %s -p 'fuse{max-inputs=2}' | filecheck %s --check-prefix=INPUTS
// RUN: fusec-opt %s -p fuse | filecheck %s --check-prefix=DEFAULT
// Size limits bound a kernel: at most max-ops ops, at most max-inputs inputs.

!t = tensor<?x?xf32, ["N", "D"]>

// OPS-LABEL: func.func @chain4
// OPS-SAME:    {producer = "exp_1", consumer = "sin_2", reason = "group size limit (max_ops=2)"}
// OPS-COUNT-2: kind = "elementwise", rule = "ew_chain"
// OPS-NOT:     graph.fusion_group
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

// OPS-LABEL: func.func @sum4
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

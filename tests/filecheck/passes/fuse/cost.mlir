// RUN: fusec-opt %s -p fuse | filecheck %s --check-prefix=GPU
// RUN: fusec-opt %s -p 'fuse{device=cpu-2core}' | filecheck %s --check-prefix=CPU
// RUN: fusec-opt %s -p 'fuse{device=cpu-2core dims="N=4"}' | filecheck %s --check-prefix=SMALL
// The cost model decides: a chain of tanh on a bias row, broadcast over every row
// of x, would be recomputed once per row if fused. The GPU has FLOPs to spare for
// that. On two CPU cores one tanh per element still hides under the memory time of
// the x + b kernel, a second would not: the chain is cut there. With few rows the
// launch saved outweighs everything.

!t = tensor<?x64xf32, ["N", ""]>
!v = tensor<64xf32>

// GPU-LABEL: func.func @recompute_bias
// GPU-SAME:    fusion.not_fused = []
// GPU:         graph.fusion_group(%x, %b) {kernel = "k0_tanh_add", kind = "elementwise", rule = "ew_chain"}
// GPU-NOT:     graph.fusion_group
// CPU-LABEL: func.func @recompute_bias
// CPU-SAME:    {producer = "tanh_2", consumer = "tanh_3", reason = "cost model: fusing would recompute {{.*}} FLOPs (score -{{.*}} us)"}
// CPU:         graph.fusion_group(%b) {kernel = "k0_tanh", kind = "elementwise", rule = "ew_chain"}
// CPU:         graph.fusion_group(%x, %{{.*}}) {kernel = "k1_tanh_add", kind = "elementwise", rule = "ew_chain"}
// CPU-NOT:     graph.fusion_group
// SMALL-LABEL: func.func @recompute_bias
// SMALL-COUNT-1: graph.fusion_group
// SMALL-NOT:     graph.fusion_group
func.func @recompute_bias(%x: !t, %b: !v) -> !t {
  %t1 = graph.tanh %b : !v
  %t2 = graph.tanh %t1 : !v
  %t3 = graph.tanh %t2 : !v
  %t4 = graph.tanh %t3 : !v
  %tb = graph.broadcast %t4 : !v -> !t
  %y = graph.add %x, %tb : !t
  func.return %y : !t
}

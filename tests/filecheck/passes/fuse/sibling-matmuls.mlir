// RUN: fusec-opt %s -p fuse | filecheck %s --check-prefix=LIBRARY
// RUN: fusec-opt %s -p 'fuse{library=false}' | filecheck %s --check-prefix=GPU
// RUN: fusec-opt %s -p 'fuse{device=cpu-2core library=false}' | filecheck %s --check-prefix=GPU
// Sibling matmuls (Q, K, V projections of one input) share a kernel where they can run as
// calls of the GEMM library, or where the device's generated kernel of several matmuls is
// as fast as its tiled GEMM (no device now). Without the library, one kernel of them would
// have no tiled GEMM (the GPU's, the CPU's register tile): each projection keeps its own.

!x = tensor<?x?xf16, ["T", "D"]>
!w = tensor<?x?xf16, ["D", "F"]>
!h = tensor<?x?xf16, ["T", "F"]>

// LIBRARY-LABEL: func.func @qkv_projections
// LIBRARY:         %q, %k, %v = graph.fusion_group(%x, %wq, %wk, %wv) {kernel = "k0_matmul3", kind = "matmul", rule = "horizontal_matmul"}
// LIBRARY-NOT:     graph.fusion_group
// GPU-LABEL:     func.func @qkv_projections
// GPU-COUNT-3:     = graph.fusion_group(%x, %w{{[qkv]}}) {kernel = "k{{[0-2]}}_matmul", kind = "matmul", rule = "none"}
// GPU-NOT:         graph.fusion_group
func.func @qkv_projections(%x: !x, %wq: !w, %wk: !w, %wv: !w) -> (!h, !h, !h) {
  %q = graph.matmul %x, %wq : !x, !w -> !h
  %k = graph.matmul %x, %wk : !x, !w -> !h
  %v = graph.matmul %x, %wv : !x, !w -> !h
  func.return %q, %k, %v : !h, !h, !h
}

// A projection split into heads beside siblings kept flat (a Llama layer's Q beside its
// V): one kernel writes its outputs in one layout, so the split one keeps its own.
// LIBRARY-LABEL: func.func @one_projection_split_into_heads
// LIBRARY:         %q = graph.fusion_group(%x, %wq) {kernel = "k0_matmul", kind = "matmul", rule = "matmul_epilogue"}
// LIBRARY:         %k, %v = graph.fusion_group(%x, %wk, %wv) {kernel = "k1_matmul2", kind = "matmul", rule = "horizontal_matmul"}
// LIBRARY-NOT:     graph.fusion_group
// GPU-LABEL:     func.func @one_projection_split_into_heads
// GPU-COUNT-3:     = graph.fusion_group(%x, %w{{[qkv]}}) {kernel = "k{{[0-2]}}_matmul", kind = "matmul"
// GPU-NOT:         graph.fusion_group
func.func @one_projection_split_into_heads(%x: tensor<64x128xf16>, %wq: tensor<128x128xf16>, %wk: tensor<128x128xf16>, %wv: tensor<128x128xf16>) -> (tensor<2x4x32x32xf16>, tensor<64x128xf16>, tensor<64x128xf16>) {
  %p = graph.matmul %x, %wq : tensor<64x128xf16>, tensor<128x128xf16> -> tensor<64x128xf16>
  %r = graph.reshape %p {index_map} : tensor<64x128xf16> -> tensor<2x32x4x32xf16>
  %q = graph.transpose %r perm = [0, 2, 1, 3] {index_map} : tensor<2x32x4x32xf16> -> tensor<2x4x32x32xf16>
  %k = graph.matmul %x, %wk : tensor<64x128xf16>, tensor<128x128xf16> -> tensor<64x128xf16>
  %v = graph.matmul %x, %wv : tensor<64x128xf16>, tensor<128x128xf16> -> tensor<64x128xf16>
  func.return %q, %k, %v : tensor<2x4x32x32xf16>, tensor<64x128xf16>, tensor<64x128xf16>
}

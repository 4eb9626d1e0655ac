// RUN: fusec %samples/attention.tdsl --target cuda --emit tiled | filecheck %s
// RUN: env NUMBA_ENABLE_CUDASIM=0 fusec %samples/attention.tdsl --target cuda --emit kernel | filecheck %s --check-prefix=KERNEL
// Attention on the GPU (a simple mapping in this issue): Q||V and K as one block per
// (batch, head); the attention group as one block per query row, its scores and
// exponentials in registers, its probabilities in a per-block workspace that every
// thread reads whole (for P @ V), behind barriers.

// CHECK:      loop.kernel @k0_matmul3 {{.*}}gpu.strategy = "rows"
// CHECK:      loop.kernel @k1_attention {{.*}}gpu.strategy = "rows"
// CHECK:        loop.parallel {{.*}} map(blocks) {
// CHECK:          loop.scratch({{.*}}) {gpu.memory = "global"}
// CHECK-NEXT:     loop.scratch({{.*}}) {gpu.memory = "registers"}
// CHECK-NEXT:     loop.scratch({{.*}}) {gpu.memory = "registers"}
// The scores of a query row: one key per thread, the dot product over the head serial.
// CHECK-NEXT:     loop.parallel {{.*}} map(threads) {
// CHECK-NEXT:       loop.reduce add {{.*}} map(serial) {
// The output projection: a tiled matmul, its heads merged in the index of its input.
// CHECK:      loop.kernel @k2_matmul {{.*}}gpu.strategy = "gemm"

// KERNEL-LABEL: # ---- kernel 'k1_attention' (exact) ----
// KERNEL:       def kernel(a0, a1, a2, a3, w0):
// KERNEL:         w0[cuda.blockIdx.x, np.uint64({{.*}})] = 
// KERNEL:         cuda.syncthreads()

// RUN: fusec %samples/attention.tdsl --target cuda --dims B=16,S=512 --emit tiled | filecheck %s
// RUN: env NUMBA_ENABLE_CUDASIM=0 fusec %samples/attention.tdsl --target cuda --dims B=16,S=512 --emit kernel | filecheck %s --check-prefix=KERNEL
// At a GPU's sizes. Attention on the GPU without its GEMM library (the simulator has no
// CuPy): the three projections as three generated GEMMs writing plain rows (with cuBLAS at
// hand, one group of three library calls); the attention group as a flash kernel reading
// them through the head split's index maps and writing its result through the head
// merge's: one block per (batch, head, 64 query rows), keys and values streamed through
// shared memory 32 at a time with an online softmax.

// CHECK-COUNT-3: loop.kernel @k{{[0-2]}}_matmul {{.*}} outs(%0: memref<?x?x256xf32>) {{.*}}gpu.schedule = "gemm"
// CHECK:      loop.kernel @k3_attention {{.*}} outs(%3: memref<?x?x256xf32>) {{.*}}gpu.schedule = "flash", gpu.threads = 64 : i64, gpu.per_thread = 8 : i64, gpu.tile = [64 : i64, 32 : i64]
// The batch, query-row and head loops go to the grid (the heads split out of the merged
// output's columns); output columns and keys to a block's threads, the head dimension's
// dot product serial in each.
// CHECK:        loop.parallel {{.*}} map(blocks) {
// CHECK-NEXT:     loop.parallel {{.*}} map(blocks) {
// CHECK-NEXT:       loop.parallel {{.*}} map(blocks) {
// CHECK-NEXT:         loop.parallel {{.*}} map(threads) {
// CHECK:                loop.parallel {{.*}} map(threads) {
// CHECK-NEXT:             loop.reduce add {{.*}} map(serial) {
// CHECK:                loop.reduce max {{.*}} map(threads) {
// CHECK:                loop.reduce add {{.*}} map(threads) {
// CHECK:                loop.store {{.*}} : memref<?x?x256xf32>
// The output projection: a tiled matmul of plain rows.
// CHECK:      loop.kernel @k4_matmul {{.*}}gpu.schedule = "gemm"

// KERNEL-LABEL: # ---- kernel 'k3_attention' (loop) ----
// KERNEL:       def kernel(a0, a1, a2, a3):
// KERNEL:         shm = cuda.shared.array({{[0-9]+}}, np.float32, alignment=16)
// KERNEL:         for key0 in range(0, {{.*}}, 32):
// KERNEL:           for d in range(0, 64, 4):
// KERNEL:           o{{[0-9]+}} = cuda.shfl_xor_sync(0xFFFFFFFF, tm_0, 4)
// KERNEL:           al_0 = select(live_0, math.exp(mx_0 - mn_0), 
// KERNEL:           for j in range(0, 32, 4):
// KERNEL-NOT:   w0[

// RUN: fusec %samples/softmax.tdsl --target cuda --emit tiled | filecheck %s --check-prefix=TILED
// RUN: env NUMBA_ENABLE_CUDASIM=0 fusec %samples/softmax.tdsl --target cuda --emit kernel | filecheck %s --check-prefix=KERNEL
// RUN: env NUMBA_ENABLE_CUDASIM=1 fusec %samples/softmax.tdsl --target cuda --emit kernel | filecheck %s --check-prefix=SIM
// Softmax on the GPU: one block a row, the row held in registers, read once.

// TILED:      loop.kernel @k0_softmax {{.*}}gpu.schedule = "rows", gpu.threads = 256 : i64, gpu.per_thread = 16 : i64
// TILED:        loop.parallel %[[ROW:.*]] = {{.*}} map(blocks) {
// TILED-NEXT:     loop.scratch({{.*}}) {gpu.memory = "registers"}
// TILED-NEXT:     loop.reduce max {{.*}} map(threads) {
// TILED-NEXT:       loop.load %x[%[[ROW]], {{.*}}] {gpu.row_cache}

// Three variants: exact (no guards), registers (guarded), loop (any row length).
// KERNEL-LABEL: # ---- kernel 'k0_softmax' (exact) ----
// KERNEL:       def kernel(a0, a1):
// KERNEL:         bd = 256
// KERNEL:         for r0 in range(cuda.blockIdx.x, v0, cuda.gridDim.x):
// The 16 elements of a thread are loaded first, then reduced:
// KERNEL:           x0 = a0[np.uint64(i0), np.uint64(i1)]
// KERNEL:           x15 = a0[np.uint64(i0), np.uint64(i16)]
// The max is NumPy's maximum, NaN-propagating; every lane shuffles, outside the select:
// KERNEL-NEXT:      r1 = select(((r1 > x0) | (r1 != r1)), r1, x0)
// KERNEL:           [[O:o[0-9]+]] = cuda.shfl_down_sync(0xFFFFFFFF, r1, 16)
// KERNEL-NEXT:      r1 = select(((r1 > [[O]]) | (r1 != r1)), r1, [[O]])
// KERNEL:           cuda.syncthreads()
// The exponentials stay in registers (s0..s15) and x0 is not loaded again:
// KERNEL:           v{{[0-9]+}} = math.exp(v{{[0-9]+}})
// KERNEL-NEXT:      s0 = v{{[0-9]+}}
// KERNEL-NOT:       = a0[
// KERNEL:           a1[np.uint64(i0), {{.*}}] = {{.*}}
// KERNEL:       def sizes(a0, a1):
// KERNEL-LABEL: # ---- kernel 'k0_softmax' (registers) ----
// KERNEL:           ok0 = t{{[0-9]+}} < n0
// KERNEL-LABEL: # ---- kernel 'k0_softmax' (loop) ----
// KERNEL:       def kernel(a0, a1, w0):
// KERNEL:           for t{{[0-9]+}} in range(tid, n0, bd):

// The simulator has no warp shuffles: a shared-memory tree instead.
// SIM-LABEL: # ---- kernel 'k0_softmax' (exact) ----
// SIM-NOT:   shfl
// SIM:       while h{{[0-9]+}} > 0:

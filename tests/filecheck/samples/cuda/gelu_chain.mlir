// RUN: fusec %samples/gelu_chain.tdsl --target cuda --emit tiled | filecheck %s --check-prefix=TILED
// RUN: env NUMBA_ENABLE_CUDASIM=0 fusec %samples/gelu_chain.tdsl --target cuda --emit kernel | filecheck %s
// An elementwise chain on the GPU: rows over the grid's y axis, a row's elements over
// the threads, eight a thread, every load issued before any store.

// TILED:      gpu.schedule = "elementwise", gpu.threads = 256 : i64, gpu.per_thread = 8 : i64
// TILED:      loop.parallel {{.*}} map(blocks) {
// TILED-NEXT:   loop.parallel {{.*}} map(threads) {

// CHECK-LABEL: # ---- kernel 'k0_mul_add_tanh' (exact) ----
// CHECK:       U = 8
// CHECK:       for o0 in range(cuda.blockIdx.y, v0, cuda.gridDim.y):
// CHECK:         b0 = cuda.blockIdx.x * (bd * U) + tid
// CHECK-COUNT-8: = a0[
// CHECK-NOT:     a1[
// CHECK:         v{{[0-9]+}} = c0 * x0
// CHECK:         a1[np.uint64(i0), np.uint64(i1)] = v{{[0-9]+}}
// CHECK-LABEL: # ---- kernel 'k0_mul_add_tanh' (loop) ----
// CHECK:         ok0 = t0 < n0
// CHECK:         i{{[0-9]+}} = min(t0, m0)

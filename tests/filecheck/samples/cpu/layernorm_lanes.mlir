// RUN: fusec %samples/layernorm.tdsl --target cpu --emit kernel | filecheck %s
// The CPU kernel of layernorm: each row sum (the mean, then the variance) adds all its
// terms in 64 lanes, term j into lane j mod 64, combined pairwise in a fixed order (lane
// k with k + 32, then k + 16, ...: lane_sum, in registers) and added to the start value,
// which keeps a NaN it holds (as a lane does: the same NaN on any number of threads).
// The lanes are one vector value (lane_start); each block of 64 terms is written to a
// tile (lane_buffer) that lane_fold_sum adds to them, the blocks counted by number; the
// last, partial block fills the rest of its tile with -0.0, which leaves a lane as it is.
// The loops over a block are elementwise, so LLVM vectorises them without reassociating
// (no kernel is compiled with reassoc).
// CHECK:      from runtime.cpu_math import {{.*}}lane_buffer{{.*}}lane_fold_sum{{.*}}lane_start, lane_sum
// CHECK:      [[ZERO:c[0-9]+]] = np.float32(-0.0)
// CHECK:      for i0 in prange(v0):
// CHECK-NEXT:   [[R:r[0-9]+]] = c{{[0-9]+}}
// CHECK-NEXT:   if 0 < v1:
// CHECK-NEXT:     [[L:l[0-9]+]] = lane_start([[ZERO]], 64)
// CHECK-NEXT:     [[W:w[0-9]+]] = lane_buffer([[ZERO]], 64)
// CHECK-NEXT:     [[Q:q[0-9]+]] = v1 // 64
// CHECK-NEXT:     [[E:e[0-9]+]] = [[Q]] * 64
// CHECK-NEXT:     for [[T:t[0-9]+]] in range([[Q]]):
// CHECK-NEXT:       for [[K:k[0-9]+]] in range(64):
// CHECK-NEXT:         [[I:i[0-9]+]] = [[T]] * 64 + [[K]]
// CHECK-NEXT:         [[V:v[0-9]+]] = a0[i0, [[I]]]
// CHECK-NEXT:         [[W]][[[K]]] = [[V]]
// CHECK-NEXT:       [[L]] = lane_fold_sum([[L]], [[W]])
// CHECK-NEXT:     if [[E]] < v1:
// CHECK-NEXT:       [[M:m[0-9]+]] = v1 - [[E]]
// CHECK-NEXT:       for [[K]] in range(64):
// CHECK-NEXT:         if [[K]] < [[M]]:
// CHECK-NEXT:           [[J:i[0-9]+]] = [[E]] + [[K]]
// CHECK-NEXT:           [[U:v[0-9]+]] = a0[i0, [[J]]]
// CHECK-NEXT:           [[W]][[[K]]] = [[U]]
// CHECK-NEXT:         else:
// CHECK-NEXT:           [[W]][[[K]]] = [[ZERO]]
// CHECK-NEXT:       [[L]] = lane_fold_sum([[L]], [[W]])
// CHECK-NEXT:     [[R]] = ([[R]] if [[R]] != [[R]] else [[R]] + lane_sum([[L]]))
// CHECK:        if 0 < v1:
// CHECK:          lane_fold_sum(
// CHECK-NOT:  reassoc

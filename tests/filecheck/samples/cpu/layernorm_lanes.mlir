// RUN: fusec %samples/layernorm.tdsl --target cpu --emit kernel | filecheck %s
// The CPU kernel of layernorm: each row sum (the mean, then the variance) adds its
// first 64 * floor(D / 64) terms in 64 lanes of a stack buffer, term j into lane
// j mod 64, combined pairwise in a fixed order (lane k with k + 32, then k + 16, ...:
// lane_sum, in registers), then the rest in order. The loop over a block's lanes is
// elementwise, so LLVM vectorises it without reassociating (no kernel is compiled with
// reassoc).
// CHECK:      from runtime.cpu_math import {{.*}}lane_buffer
// CHECK:      [[ZERO:c[0-9]+]] = np.float32(-0.0)
// CHECK:      for i0 in prange(v0):
// CHECK-NEXT:   [[R:r[0-9]+]] = c{{[0-9]+}}
// CHECK-NEXT:   [[E:e[0-9]+]] = (v1 // 64) * 64
// CHECK-NEXT:   if [[E]] != 0:
// CHECK-NEXT:     [[L:l[0-9]+]] = lane_buffer([[ZERO]], 64)
// CHECK-NEXT:     for [[K:k[0-9]+]] in range(64):
// CHECK-NEXT:       [[L]][[[K]]] = [[ZERO]]
// CHECK-NEXT:     for [[T:t[0-9]+]] in range(0, [[E]], 64):
// CHECK-NEXT:       for [[K]] in range(64):
// CHECK-NEXT:         [[I:i[0-9]+]] = [[T]] + [[K]]
// CHECK-NEXT:         [[V:v[0-9]+]] = a0[i0, [[I]]]
// CHECK-NEXT:         [[L]][[[K]]] = [[L]][[[K]]] + [[V]]
// CHECK-NEXT:     [[R]] = [[R]] + lane_sum([[L]], 64)
// CHECK-NEXT:   for {{i[0-9]+}} in range([[E]], v1):
// CHECK:        [[R]] = [[R]] + v{{[0-9]+}}
// CHECK:        if {{e[0-9]+}} != 0:
// CHECK-NOT:  reassoc

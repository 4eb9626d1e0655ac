// RUN: fusec-opt %s -p lower-to-loops | filecheck %s
// Reductions: a loop.reduce with its combiner and identity inside the nest of its
// consumer; one broadcast back along its own axis (softmax, layernorm) runs once per
// row, before the row's elementwise loop.

!t = tensor<?x?xf32, ["B", "N"]>
!r = tensor<?x1xf32, ["B", ""]>

// Softmax: per row, the max, then exp(x - max) kept in a scratch row (it is read by
// the sum and by the output), the sum, then the row's elementwise loop.
// CHECK-LABEL: loop.kernel @k0_softmax ins(%a: memref<?x?xf32>) outs(%r: memref<?x?xf32>)
// CHECK-DAG:     %[[NINF:.*]] = arith.constant 0xff800000 : f32
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:         loop.parallel %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      %[[ROW:.*]] = loop.scratch(%{{.*}}) : memref<?xf32>
// CHECK-NEXT:      %[[M:.*]] = loop.reduce max %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} init(%[[NINF]]) : f32 {
// CHECK-NEXT:        %[[X:.*]] = loop.load %a[%[[I]], %[[K]]] : memref<?x?xf32>
// CHECK-NEXT:        loop.yield %[[X]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      loop.parallel %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        %[[X:.*]] = loop.load %a[%[[I]], %[[T]]] : memref<?x?xf32>
// CHECK-NEXT:        %[[D:.*]] = arith.subf %[[X]], %[[M]] : f32
// CHECK-NEXT:        %[[E:.*]] = math.exp %[[D]] : f32
// CHECK-NEXT:        loop.store %[[E]], %[[ROW]][%[[T]]] : memref<?xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[S:.*]] = loop.reduce add %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} init(%[[ZERO]]) : f32 {
// CHECK-NEXT:        %[[E:.*]] = loop.load %[[ROW]][%[[K]]] : memref<?xf32>
// CHECK-NEXT:        loop.yield %[[E]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      loop.parallel %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        %[[E:.*]] = loop.load %[[ROW]][%[[J]]] : memref<?xf32>
// CHECK-NEXT:        %[[Y:.*]] = arith.divf %[[E]], %[[S]] : f32
// CHECK-NEXT:        loop.store %[[Y]], %r[%[[I]], %[[J]]] : memref<?x?xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:  }
func.func @softmax(%x: !t) -> !t {
  %y = graph.fusion_group(%x) {kernel = "k0_softmax", kind = "reduction"} : (!t) -> !t {
  ^bb0(%a: !t):
    %m = graph.reduce max %a axes = [1] keepdims : !t -> !r
    %mb = graph.broadcast %m : !r -> !t
    %d = graph.sub %a, %mb : !t
    %e = graph.exp %d : !t
    %s = graph.reduce sum %e axes = [1] keepdims : !t -> !r
    %sb = graph.broadcast %s : !r -> !t
    %r = graph.div %e, %sb : !t
    graph.yield %r : !t
  }
  func.return %y : !t
}

// Layernorm: the mean and the variance are two reductions per row (the centred value
// is cheap: recomputed, not kept); mean divides by the row length read from the buffer.
// CHECK-LABEL: loop.kernel @k0_layernorm
// CHECK:         %[[D:.*]] = loop.dim %a, 1 : memref<?x?xf32>
// CHECK:         %[[DI:.*]] = arith.index_cast %[[D]] : index to i64
// CHECK-NEXT:    %[[DF:.*]] = arith.sitofp %[[DI]] : i64 to f32
// CHECK:         loop.parallel %[[I:.*]] = {{.*}} {
// CHECK-NEXT:      %[[SUM:.*]] = loop.reduce add
// CHECK:           %[[MEAN:.*]] = arith.divf %[[SUM]], %[[DF]] : f32
// CHECK-NEXT:      %[[SS:.*]] = loop.reduce add
// CHECK:             arith.subf %{{.*}}, %[[MEAN]] : f32
// CHECK:           %[[VAR:.*]] = arith.divf %[[SS]], %[[DF]] : f32
// CHECK:           %[[RS:.*]] = math.rsqrt %{{.*}} : f32
// CHECK-NEXT:      loop.parallel %[[J:.*]] = {{.*}} {
// CHECK:             arith.mulf %{{.*}}, %[[RS]] : f32
// CHECK:             loop.store %{{.*}}, %{{.*}}[%[[I]], %[[J]]] : memref<?x?xf32>
// CHECK-NOT:     loop.scratch
!d = tensor<?xf32, ["N"]>
func.func @layernorm(%x: !t, %g: !d, %b: !d) -> !t {
  %y = graph.fusion_group(%x, %g, %b) {kernel = "k0_layernorm", kind = "reduction"} : (!t, !d, !d) -> !t {
  ^bb0(%a: !t, %gamma: !d, %beta: !d):
    %mean = graph.reduce mean %a axes = [1] keepdims : !t -> !r
    %mb = graph.broadcast %mean : !r -> !t
    %c = graph.sub %a, %mb : !t
    %sq = graph.mul %c, %c : !t
    %var = graph.reduce mean %sq axes = [1] keepdims : !t -> !r
    %eps = graph.constant dense<1.0e-5> : tensor<f32>
    %epsb = graph.broadcast %eps : tensor<f32> -> !r
    %ve = graph.add %var, %epsb : !r
    %rs = graph.rsqrt %ve : !r
    %rsb = graph.broadcast %rs : !r -> !t
    %xn = graph.mul %c, %rsb : !t
    %gb = graph.broadcast %gamma : !d -> !t
    %bb = graph.broadcast %beta : !d -> !t
    %sc = graph.mul %xn, %gb : !t
    %o = graph.add %sc, %bb : !t
    graph.yield %o : !t
  }
  func.return %y : !t
}

// Over axis 0 the reduction runs down each column; over all axes it is a nest of
// reductions at the top of the kernel and a store into a rank-0 buffer.
// CHECK-LABEL: loop.kernel @k0_columns ins(%a: memref<?x?xi32>) outs(%s: memref<?xi32>, %m: memref<i32>)
// CHECK:         %[[IMIN:.*]] = arith.constant -2147483648 : i32
// CHECK:         %[[M:.*]] = loop.reduce max %[[K0:.*]] = {{.*}} init(%[[IMIN]]) : i32 {
// CHECK-NEXT:      %[[INNER:.*]] = loop.reduce max %[[K1:.*]] = {{.*}} init(%[[IMIN]]) : i32 {
// CHECK-NEXT:        %[[V:.*]] = loop.load %a[%[[K0]], %[[K1]]] : memref<?x?xi32>
// CHECK-NEXT:        loop.yield %[[V]] : i32
// CHECK-NEXT:      }
// CHECK-NEXT:      loop.yield %[[INNER]] : i32
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.store %[[M]], %m[] : memref<i32>
// CHECK-NEXT:    %[[IZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT:    loop.parallel %[[J:.*]] = {{.*}} {
// CHECK-NEXT:      %[[S:.*]] = loop.reduce add %[[K:.*]] = {{.*}} init(%[[IZERO]]) : i32 {
// CHECK-NEXT:        %[[V:.*]] = loop.load %a[%[[K]], %[[J]]] : memref<?x?xi32>
// CHECK-NEXT:        loop.yield %[[V]] : i32
// CHECK-NEXT:      }
// CHECK-NEXT:      loop.store %[[S]], %s[%[[J]]] : memref<?xi32>
// CHECK-NEXT:    }
!i = tensor<?x?xi32, ["M", "N"]>
func.func @columns(%x: !i) -> (tensor<?xi32, ["N"]>, tensor<i32>) {
  %r:2 = graph.fusion_group(%x) {kernel = "k0_columns", kind = "reduction"} : (!i) -> (tensor<?xi32, ["N"]>, tensor<i32>) {
  ^bb0(%a: !i):
    %s = graph.reduce sum %a axes = [0] : !i -> tensor<?xi32, ["N"]>
    %m = graph.reduce max %a axes = [0, 1] : !i -> tensor<i32>
    graph.yield %s, %m : tensor<?xi32, ["N"]>, tensor<i32>
  }
  func.return %r#0, %r#1 : tensor<?xi32, ["N"]>, tensor<i32>
}

// Several outputs share the loops of their common leading sizes: the row sum and
// the row itself in one pass over each row; the costly row is computed once.
// CHECK-LABEL: loop.kernel @k0_sincos ins(%a: memref<?x?xf32>) outs(%y: memref<?x?xf32>, %t: memref<?xf32>)
// CHECK:         loop.parallel %[[I:.*]] = {{.*}} {
// CHECK-NEXT:      %[[ROW:.*]] = loop.scratch
// CHECK-NEXT:      loop.parallel
// CHECK-COUNT-1:     math.sin
// CHECK:           %[[T:.*]] = loop.reduce add
// CHECK:           loop.store %[[T]], %t[%[[I]]] : memref<?xf32>
// CHECK-NEXT:      loop.parallel %[[J:.*]] = {{.*}} {
// CHECK-NEXT:        %[[V:.*]] = loop.load %[[ROW]][%[[J]]] : memref<?xf32>
// CHECK-NEXT:        loop.store %[[V]], %y[%[[I]], %[[J]]] : memref<?x?xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:  }
func.func @sincos(%x: !t) -> (!t, tensor<?xf32, ["B"]>) {
  %r:2 = graph.fusion_group(%x) {kernel = "k0_sincos", kind = "reduction"} : (!t) -> (!t, tensor<?xf32, ["B"]>) {
  ^bb0(%a: !t):
    %s = graph.sin %a : !t
    %c = graph.cos %a : !t
    %s2 = graph.mul %s, %s : !t
    %c2 = graph.mul %c, %c : !t
    %y = graph.add %s2, %c2 : !t
    %t = graph.reduce sum %y axes = [1] : !t -> tensor<?xf32, ["B"]>
    graph.yield %y, %t : !t, tensor<?xf32, ["B"]>
  }
  func.return %r#0, %r#1 : !t, tensor<?xf32, ["B"]>
}

// RUN: fusec-opt %s -p lower-to-loops | filecheck %s
// Layout ops are index maps, never copies: a transpose permutes the indices of the
// load, a reshape linearises the index and splits it again with div/mod, a
// broadcast drops leading indices and zeroes those of size-1 dimensions.

// Split heads: [N, 12] -> [N, 3, 4] -> [3, N, 4]: the trailing [3, 4] of the target
// is linearised (h * 4 + d) into the source's column; N maps one to one.
// CHECK-LABEL: loop.kernel @k0_heads ins(%a: memref<?x12xf32>) outs(%e: memref<3x?x4xf32>)
// CHECK:         %[[C4:.*]] = arith.constant 4 : index
// CHECK:         loop.parallel %[[H:.*]] = {{.*}} {
// CHECK-NEXT:      %[[HD:.*]] = arith.muli %[[H]], %[[C4]] : index
// CHECK-NEXT:      loop.parallel %[[N:.*]] = {{.*}} {
// CHECK-NEXT:        loop.parallel %[[D:.*]] = {{.*}} {
// CHECK-NEXT:          %[[COL:.*]] = arith.addi %[[HD]], %[[D]] : index
// CHECK-NEXT:          %[[X:.*]] = loop.load %a[%[[N]], %[[COL]]] : memref<?x12xf32>
// CHECK-NEXT:          %[[Y:.*]] = math.exp %[[X]] : f32
// CHECK-NEXT:          loop.store %[[Y]], %e[%[[H]], %[[N]], %[[D]]] : memref<3x?x4xf32>
// CHECK-NOT:     loop.scratch
!x = tensor<?x12xf32, ["N", ""]>
!h = tensor<?x3x4xf32, ["N", "", ""]>
!t = tensor<3x?x4xf32, ["", "N", ""]>
func.func @heads(%x: !x) -> !t {
  %y = graph.fusion_group(%x) {kernel = "k0_heads", kind = "injective"} : (!x) -> !t {
  ^bb0(%a: !x):
    %h = graph.reshape %a {index_map} : !x -> !h
    %t = graph.transpose %h perm = [1, 0, 2] {index_map} : !h -> !t
    %e = graph.exp %t : !t
    graph.yield %e : !t
  }
  func.return %y : !t
}

// Flattening with a symbolic size: [A, B] -> [A * B] is not expressible with size
// names, so here [2, N] -> [N, 2]: linear = i * 2 + j, then (linear / N, linear % N).
// CHECK-LABEL: loop.kernel @k0_flat ins(%a: memref<2x?xf32>) outs(%r: memref<?x2xf32>)
// CHECK:         %[[N:.*]] = loop.dim %a, 1 : memref<2x?xf32>
// CHECK:         loop.parallel %[[I:.*]] = {{.*}} {
// CHECK:           loop.parallel %[[J:.*]] = {{.*}} {
// CHECK-NEXT:        %[[L:.*]] = arith.addi %{{.*}}, %[[J]] : index
// CHECK-NEXT:        %[[COL:.*]] = arith.remui %[[L]], %[[N]] : index
// CHECK-NEXT:        %[[ROW:.*]] = arith.divui %[[L]], %[[N]] : index
// CHECK-NEXT:        %[[V:.*]] = loop.load %a[%[[ROW]], %[[COL]]] : memref<2x?xf32>
// CHECK-NEXT:        loop.store %[[V]], %r[%[[I]], %[[J]]] : memref<?x2xf32>
!f = tensor<2x?xf32, ["", "N"]>
!g = tensor<?x2xf32, ["N", ""]>
func.func @flat(%x: !f) -> !g {
  %y = graph.fusion_group(%x) {kernel = "k0_flat", kind = "injective"} : (!f) -> !g {
  ^bb0(%a: !f):
    %r = graph.reshape %a : !f -> !g
    graph.yield %r : !g
  }
  func.return %y : !g
}

// Broadcasting [1, N] and a scalar over [M, N]: the size-1 row index is a constant 0,
// the scalar is loaded from a rank-0 buffer outside the loops. (Index arithmetic
// too is placed in the outermost loop it depends on, as h * 4 above.)
// CHECK-LABEL: loop.kernel @k0_bcast ins(%a: memref<?x?xf32>, %b: memref<1x?xf32>, %c: memref<f32>) outs(%s2: memref<?x?xf32>)
// CHECK:         %[[Z:.*]] = arith.constant 0 : index
// CHECK:         %[[C:.*]] = loop.load %c[] : memref<f32>
// CHECK:         loop.parallel %[[I:.*]] = {{.*}} {
// CHECK-NEXT:      loop.parallel %[[J:.*]] = {{.*}} {
// CHECK-NEXT:        %[[X:.*]] = loop.load %a[%[[I]], %[[J]]] : memref<?x?xf32>
// CHECK-NEXT:        %[[B:.*]] = loop.load %b[%[[Z]], %[[J]]] : memref<1x?xf32>
!m = tensor<?x?xf32, ["M", "N"]>
!r = tensor<1x?xf32, ["", "N"]>
func.func @bcast(%x: !m, %y: !r, %s: tensor<f32>) -> !m {
  %o = graph.fusion_group(%x, %y, %s) {kernel = "k0_bcast", kind = "elementwise"} : (!m, !r, tensor<f32>) -> !m {
  ^bb0(%a: !m, %b: !r, %c: tensor<f32>):
    %bb = graph.broadcast %b : !r -> !m
    %cb = graph.broadcast %c : tensor<f32> -> !m
    %s1 = graph.add %a, %bb : !m
    %s2 = graph.mul %s1, %cb : !m
    graph.yield %s2 : !m
  }
  func.return %o : !m
}

// RUN: fusec-opt %s -p lower-to-loops | filecheck %s
// concat and pad are index maps, never copies: a select between values read at
// clamped indices (both sides of an arith.select are computed, so no load may leave
// its buffer), keeping the operand that covers the index, or the padding value.

// Rotate-half: concat((-x2, x1), axis=1) reads x2 at min(j, 3) and x1 at max(j - 4, 0),
// and j < 4 picks the first.
// CHECK-LABEL: loop.kernel @k0_rotate ins(%a: memref<?x4xf32>, %b: memref<?x4xf32>) outs(%r: memref<?x8xf32>)
// CHECK-DAG:     %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG:     %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK:         loop.parallel %[[I:.*]] = {{.*}} {
// CHECK-NEXT:      loop.parallel %[[J:.*]] = {{.*}} {
// CHECK-NEXT:        %[[JB:.*]] = arith.minsi %[[J]], %[[C3]] : index
// CHECK-NEXT:        %[[SHIFT:.*]] = arith.subi %[[J]], %[[C4]] : index
// CHECK-NEXT:        %[[JA:.*]] = arith.maxsi %[[SHIFT]], %[[C0]] : index
// CHECK-NEXT:        %[[XB:.*]] = loop.load %b[%[[I]], %[[JB]]] : memref<?x4xf32>
// CHECK-NEXT:        %[[NEG:.*]] = arith.negf %[[XB]] : f32
// CHECK-NEXT:        %[[XA:.*]] = loop.load %a[%[[I]], %[[JA]]] : memref<?x4xf32>
// CHECK-NEXT:        %[[FIRST:.*]] = arith.cmpi slt, %[[J]], %[[C4]] : index
// CHECK-NEXT:        %[[V:.*]] = arith.select %[[FIRST]], %[[NEG]], %[[XA]] : f32
// CHECK-NEXT:        loop.store %[[V]], %r[%[[I]], %[[J]]] : memref<?x8xf32>
!h = tensor<?x4xf32, ["N", ""]>
!f = tensor<?x8xf32, ["N", ""]>
func.func @rotate(%x1: !h, %x2: !h) -> !f {
  %y = graph.fusion_group(%x1, %x2) {kernel = "k0_rotate", kind = "elementwise"} : (!h, !h) -> !f {
  ^bb0(%a: !h, %b: !h):
    %n = graph.neg %b : !h
    %r = graph.concat %n, %a axis = 1 {index_map} : !h, !h -> !f
    graph.yield %r : !f
  }
  func.return %y : !f
}

// Concat along a symbolic axis: the first operand ends at N (a loop.dim), the
// second starts there.
// CHECK-LABEL: loop.kernel @k0_rows ins(%a: memref<?x2xf32>, %b: memref<?x2xf32>) outs(%r: memref<?x2xf32>)
// CHECK:         %[[N:.*]] = loop.dim %a, 0 : memref<?x2xf32>
// CHECK-NEXT:    %[[TOP:.*]] = arith.subi %[[N]], %{{.*}} : index
// CHECK-NEXT:    loop.parallel %[[I:.*]] = {{.*}} {
// CHECK-NEXT:      %[[IA:.*]] = arith.minsi %[[I]], %[[TOP]] : index
// CHECK-NEXT:      %[[SHIFT:.*]] = arith.subi %[[I]], %[[N]] : index
// CHECK-NEXT:      %[[IB:.*]] = arith.maxsi %[[SHIFT]], %{{.*}} : index
// CHECK-NEXT:      %[[FIRST:.*]] = arith.cmpi slt, %[[I]], %[[N]] : index
// CHECK-NEXT:      loop.parallel %[[J:.*]] = {{.*}} {
// CHECK-NEXT:        %[[XA:.*]] = loop.load %a[%[[IA]], %[[J]]] : memref<?x2xf32>
// CHECK-NEXT:        %[[XB:.*]] = loop.load %b[%[[IB]], %[[J]]] : memref<?x2xf32>
// CHECK-NEXT:        %[[V:.*]] = arith.select %[[FIRST]], %[[XA]], %[[XB]] : f32
// CHECK-NEXT:        loop.store %[[V]], %r[%[[I]], %[[J]]] : memref<?x2xf32>
!n = tensor<?x2xf32, ["N", ""]>
!n2 = tensor<?x2xf32, ["2*N", ""]>
func.func @rows(%x: !n, %z: !n) -> !n2 {
  %y = graph.fusion_group(%x, %z) {kernel = "k0_rows", kind = "injective"} : (!n, !n) -> !n2 {
  ^bb0(%a: !n, %b: !n):
    %r = graph.concat %a, %b axis = 0 : !n, !n -> !n2
    graph.yield %r : !n2
  }
  func.return %y : !n2
}

// Pad then sum (one kernel): inside the reduction, k is in the input where
// 0 < k and k - 1 < 6, read at clamp(k - 1, 0, 5); elsewhere the value is -2.5.
// CHECK-LABEL: loop.kernel @k0_pad_sum ins(%a: memref<?x6xf32>) outs(%s: memref<?xf32>)
// CHECK-DAG:     %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG:     %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG:     %[[C5:.*]] = arith.constant 5 : index
// CHECK-DAG:     %[[C6:.*]] = arith.constant 6 : index
// CHECK-DAG:     %[[PAD:.*]] = arith.constant -2.500000e+00 : f32
// CHECK:         loop.parallel %[[I:.*]] = {{.*}} {
// CHECK-NEXT:      loop.reduce add %[[K:.*]] = {{.*}} {
// CHECK-NEXT:        %[[SHIFT:.*]] = arith.subi %[[K]], %[[C1]] : index
// CHECK-NEXT:        %[[LOW:.*]] = arith.cmpi slt, %[[C0]], %[[K]] : index
// CHECK-NEXT:        %[[HIGH:.*]] = arith.cmpi slt, %[[SHIFT]], %[[C6]] : index
// CHECK-NEXT:        %[[IN:.*]] = arith.andi %[[LOW]], %[[HIGH]] : i1
// CHECK-NEXT:        %[[UP:.*]] = arith.maxsi %[[SHIFT]], %[[C0]] : index
// CHECK-NEXT:        %[[AT:.*]] = arith.minsi %[[UP]], %[[C5]] : index
// CHECK-NEXT:        %[[X:.*]] = loop.load %a[%[[I]], %[[AT]]] : memref<?x6xf32>
// CHECK-NEXT:        %[[V:.*]] = arith.select %[[IN]], %[[X]], %[[PAD]] : f32
// CHECK-NEXT:        loop.yield %[[V]] : f32
!p = tensor<?x6xf32, ["N", ""]>
!q = tensor<?x8xf32, ["N", ""]>
!s = tensor<?xf32, ["N"]>
func.func @pad_sum(%x: !p) -> !s {
  %y = graph.fusion_group(%x) {kernel = "k0_pad_sum", kind = "reduction"} : (!p) -> !s {
  ^bb0(%a: !p):
    %p = graph.pad %a low = [0, 1] high = [0, 1] value = -2.500000e+00 {index_map} : !p -> !q
    %s = graph.reduce sum %p axes = [1] : !q -> !s
    graph.yield %s : !s
  }
  func.return %y : !s
}

// RUN: fusec-opt %s -p lower-to-loops | filecheck %s
// RUN: fusec-opt %s -p lower-to-loops | fusec-opt | filecheck %s
// The math library's scalar lowerings (dialects/elementwise.py): float // and % are
// loop.floordivf / loop.modf (NumPy's, computed apart from the CPU's arcp); sign keeps
// nan and gives +0.0 for a zero; round is halves-to-even from floor; an integer // -1 is
// a wrapping negation (a division there would trap); isnan is an unordered compare,
// isinf |x| == inf, not a xor with true.

// CHECK-LABEL: loop.kernel @k0_math
// CHECK:         loop.parallel %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      %[[A:.*]] = loop.load %a[%[[I]]] : memref<?xf32>
// CHECK-NEXT:      %[[C:.*]] = loop.load %c[%[[I]]] : memref<?xf32>
// CHECK-NEXT:      %[[Q:.*]] = loop.floordivf %[[A]], %[[C]] : f32
// CHECK-NEXT:      %[[R:.*]] = loop.modf %[[Q]], %[[C]] : f32
// CHECK-NEXT:      %[[POS:.*]] = arith.cmpf ogt, %[[R]], %[[ZERO:.*]] : f32
// CHECK-NEXT:      %[[NEG:.*]] = arith.cmpf olt, %[[R]], %[[ZERO]] : f32
// CHECK-NEXT:      %[[ISNAN:.*]] = arith.cmpf uno, %[[R]], %[[R]] : f32
// CHECK-NEXT:      %[[REST:.*]] = arith.select %[[ISNAN]], %[[R]], %[[ZERO]] : f32
// CHECK-NEXT:      %[[S1:.*]] = arith.select %[[NEG]], %{{.*}}, %[[REST]] : f32
// CHECK-NEXT:      %[[SIGN:.*]] = arith.select %[[POS]], %{{.*}}, %[[S1]] : f32
// CHECK-NEXT:      %[[FL:.*]] = math.floor %[[SIGN]] : f32
// CHECK-NEXT:      %[[FRAC:.*]] = arith.subf %[[SIGN]], %[[FL]] : f32
// CHECK-NEXT:      %[[HALF:.*]] = arith.mulf %[[FL]], %{{.*}} : f32
// CHECK-NEXT:      %[[FLHALF:.*]] = math.floor %[[HALF]] : f32
// CHECK-NEXT:      %[[TWICE:.*]] = arith.mulf %{{.*}}, %[[FLHALF]] : f32
// CHECK-NEXT:      %[[EVEN:.*]] = arith.cmpf oeq, %[[TWICE]], %[[FL]] : f32
// CHECK-NEXT:      %[[ABOVE:.*]] = arith.cmpf ogt, %[[FRAC]], %{{.*}} : f32
// CHECK-NEXT:      %[[BELOW:.*]] = arith.cmpf olt, %[[FRAC]], %{{.*}} : f32
// CHECK-NEXT:      %[[UP:.*]] = arith.addf %[[FL]], %{{.*}} : f32
// CHECK-NEXT:      %[[TIE:.*]] = arith.select %[[EVEN]], %[[FL]], %[[UP]] : f32
// CHECK-NEXT:      %[[LOW:.*]] = arith.select %[[BELOW]], %[[FL]], %[[TIE]] : f32
// CHECK-NEXT:      %[[ROUND:.*]] = arith.select %[[ABOVE]], %[[UP]], %[[LOW]] : f32
// CHECK-NEXT:      %[[M:.*]] = loop.load %m[%[[I]]] : memref<?xi32>
// CHECK-NEXT:      %[[N:.*]] = loop.load %n[%[[I]]] : memref<?xi32>
// CHECK-NEXT:      %[[MINUS1:.*]] = arith.cmpi eq, %[[N]], %{{.*}} : i32
// CHECK-NEXT:      %[[NEGM:.*]] = arith.subi %{{.*}}, %[[M]] : i32
// CHECK-NEXT:      %[[FD:.*]] = arith.floordivsi %[[M]], %[[N]] : i32
// CHECK-NEXT:      %[[P:.*]] = arith.select %[[MINUS1]], %[[NEGM]], %[[FD]] : i32
// CHECK-NEXT:      %[[NAN2:.*]] = arith.cmpf uno, %[[ROUND]], %[[ROUND]] : f32
// CHECK-NEXT:      %[[ABS:.*]] = math.absf %[[A]] : f32
// CHECK-NEXT:      %[[INF:.*]] = arith.cmpf oeq, %[[ABS]], %{{.*}} : f32
// CHECK-NEXT:      %[[OR:.*]] = arith.ori %[[NAN2]], %[[INF]] : i1
// CHECK-NEXT:      %[[NOT:.*]] = arith.xori %[[OR]], %{{.*}} : i1
// CHECK-NEXT:      loop.store %[[ROUND]], %t[%[[I]]] : memref<?xf32>
// CHECK-NEXT:      loop.store %[[P]], %p[%[[I]]] : memref<?xi32>
// CHECK-NEXT:      loop.store %[[NOT]], %not[%[[I]]] : memref<?xi1>

!f = tensor<?xf32, ["N"]>
!i = tensor<?xi32, ["N"]>
!b = tensor<?xi1, ["N"]>
func.func @math(%x: !f, %y: !f, %k: !i, %j: !i) -> (!f, !i, !b) {
  %r:3 = graph.fusion_group(%x, %y, %k, %j) {kernel = "k0_math", kind = "elementwise"} : (!f, !f, !i, !i) -> (!f, !i, !b) {
  ^bb0(%a: !f, %c: !f, %m: !i, %n: !i):
    %q = graph.floordiv %a, %c : !f
    %r = graph.mod %q, %c : !f
    %s = graph.sign %r : !f
    %t = graph.round %s : !f
    %p = graph.floordiv %m, %n : !i
    %nan = graph.isnan %t : !f -> !b
    %inf = graph.isinf %a : !f -> !b
    %or = graph.logical_or %nan, %inf : !b
    %not = graph.logical_not %or : !b
    graph.yield %t, %p, %not : !f, !i, !b
  }
  func.return %r#0, %r#1, %r#2 : !f, !i, !b
}

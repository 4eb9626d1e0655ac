// RUN: fusec-opt %s -p lower-to-loops | filecheck %s
// argmax: a max reduction, then a min reduction over the indices whose value is that
// max or NaN (the first occurrence wins, whatever order threads fold in). any: a max of
// the bools as 0/1 from false, compared with 0. prod: a mul reduction from 1.

// CHECK-LABEL: loop.kernel @{{.*}} ins(%a: memref<?x?xf32>) outs(%i: memref<?xi64>)
// CHECK-DAG:     %[[NINF:.*]] = arith.constant 0xff800000 : f32
// CHECK-DAG:     %[[NONE:.*]] = arith.constant 9223372036854775807 : i64
// CHECK:         loop.parallel %[[R:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      %[[M:.*]] = loop.reduce max %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} init(%[[NINF]]) : f32 {
// CHECK-NEXT:        %[[X:.*]] = loop.load %a[%[[R]], %[[K]]] : memref<?x?xf32>
// CHECK-NEXT:        loop.yield %[[X]] : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[I:.*]] = loop.reduce min %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} init(%[[NONE]]) : i64 {
// CHECK-NEXT:        %[[X:.*]] = loop.load %a[%[[R]], %[[K]]] : memref<?x?xf32>
// CHECK-NEXT:        %[[EQ:.*]] = arith.cmpf oeq, %[[X]], %[[M]] : f32
// CHECK-NEXT:        %[[NAN:.*]] = arith.cmpf une, %[[X]], %[[X]] : f32
// CHECK-NEXT:        %[[MATCH:.*]] = arith.ori %[[EQ]], %[[NAN]] : i1
// CHECK-NEXT:        %[[K64:.*]] = arith.index_cast %[[K]] : index to i64
// CHECK-NEXT:        %[[V:.*]] = arith.select %[[MATCH]], %[[K64]], %[[NONE]] : i64
// CHECK-NEXT:        loop.yield %[[V]] : i64
// CHECK-NEXT:      }
// CHECK-NEXT:      loop.store %[[I]], %i[%[[R]]] : memref<?xi64>
func.func @argmax_rows(%x: tensor<?x?xf32, ["B", "N"]>) -> tensor<?xi64, ["B"]> {
  %0 = graph.fusion_group(%x) : (tensor<?x?xf32, ["B", "N"]>) -> tensor<?xi64, ["B"]> {
  ^bb0(%a: tensor<?x?xf32, ["B", "N"]>):
    %i = graph.reduce argmax %a axes = [1] : tensor<?x?xf32, ["B", "N"]> -> tensor<?xi64, ["B"]>
    graph.yield %i : tensor<?xi64, ["B"]>
  }
  func.return %0 : tensor<?xi64, ["B"]>
}

// Without an axis the index counts row-major over both reduced loops: k0 * N + k1,
// the row's offset hoisted out of the inner loop.
// CHECK-LABEL: loop.kernel @{{.*}} ins(%a: memref<?x?xi32>) outs(%i: memref<i64>)
// CHECK:         %[[N:.*]] = loop.dim %a, 1 : memref<?x?xi32>
// CHECK:         %[[M:.*]] = loop.reduce min %{{.*}} : i32 {
// CHECK:         %[[NONE:.*]] = arith.constant 9223372036854775807 : i64
// CHECK-NEXT:    %[[I:.*]] = loop.reduce min %[[K0:.*]] = %{{.*}} to %{{.*}} step %{{.*}} init(%[[NONE]]) : i64 {
// CHECK-NEXT:      %[[ROW:.*]] = arith.muli %[[K0]], %[[N]] : index
// CHECK-NEXT:      loop.reduce min %[[K1:.*]] = %{{.*}} to %[[N]] step %{{.*}} init(%[[NONE]]) : i64 {
// CHECK-NEXT:        %[[X:.*]] = loop.load %a[%[[K0]], %[[K1]]] : memref<?x?xi32>
// CHECK-NEXT:        %[[EQ:.*]] = arith.cmpi eq, %[[X]], %[[M]] : i32
// CHECK-NEXT:        %[[FLAT:.*]] = arith.addi %[[ROW]], %[[K1]] : index
// CHECK-NEXT:        %[[K64:.*]] = arith.index_cast %[[FLAT]] : index to i64
// CHECK-NEXT:        arith.select %[[EQ]], %[[K64]], %[[NONE]] : i64
// CHECK:         loop.store %[[I]], %i[] : memref<i64>
func.func @argmin_flat(%x: tensor<?x?xi32, ["B", "N"]>) -> tensor<i64> {
  %0 = graph.fusion_group(%x) : (tensor<?x?xi32, ["B", "N"]>) -> tensor<i64> {
  ^bb0(%a: tensor<?x?xi32, ["B", "N"]>):
    %i = graph.reduce argmin %a axes = [0, 1] : tensor<?x?xi32, ["B", "N"]> -> tensor<i64>
    graph.yield %i : tensor<i64>
  }
  func.return %0 : tensor<i64>
}

// CHECK-LABEL: loop.kernel @{{.*}} ins(%a: memref<?x?xi1>, %c: memref<?x?xi32>) outs(%r: memref<?xi1>, %p: memref<?xi32>)
// CHECK-DAG:     %[[FALSE:.*]] = arith.constant 0 : i32
// CHECK-DAG:     %[[ONE:.*]] = arith.constant 1 : i32
// CHECK:         loop.parallel %[[R:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      %[[M:.*]] = loop.reduce max %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} init(%[[FALSE]]) : i32 {
// CHECK-NEXT:        %[[B:.*]] = loop.load %a[%[[R]], %[[K]]] : memref<?x?xi1>
// CHECK-NEXT:        %[[B32:.*]] = arith.extui %[[B]] : i1 to i32
// CHECK-NEXT:        loop.yield %[[B32]] : i32
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[ANY:.*]] = arith.cmpi ne, %[[M]], %[[FALSE]] : i32
// CHECK-NEXT:      %[[P:.*]] = loop.reduce mul %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} init(%[[ONE]]) : i32 {
// CHECK-NEXT:        %[[V:.*]] = loop.load %c[%[[R]], %[[K]]] : memref<?x?xi32>
// CHECK-NEXT:        loop.yield %[[V]] : i32
// CHECK-NEXT:      }
// CHECK-NEXT:      loop.store %[[ANY]], %r[%[[R]]] : memref<?xi1>
// CHECK-NEXT:      loop.store %[[P]], %p[%[[R]]] : memref<?xi32>
func.func @any_prod(%b: tensor<?x?xi1, ["B", "N"]>, %k: tensor<?x?xi32, ["B", "N"]>) -> (tensor<?xi1, ["B"]>, tensor<?xi32, ["B"]>) {
  %0:2 = graph.fusion_group(%b, %k) : (tensor<?x?xi1, ["B", "N"]>, tensor<?x?xi32, ["B", "N"]>) -> (tensor<?xi1, ["B"]>, tensor<?xi32, ["B"]>) {
  ^bb0(%a: tensor<?x?xi1, ["B", "N"]>, %c: tensor<?x?xi32, ["B", "N"]>):
    %r = graph.reduce any %a axes = [1] : tensor<?x?xi1, ["B", "N"]> -> tensor<?xi1, ["B"]>
    %p = graph.reduce prod %c axes = [1] : tensor<?x?xi32, ["B", "N"]> -> tensor<?xi32, ["B"]>
    graph.yield %r, %p : tensor<?xi1, ["B"]>, tensor<?xi32, ["B"]>
  }
  func.return %0#0, %0#1 : tensor<?xi1, ["B"]>, tensor<?xi32, ["B"]>
}

// A computed operand of an argmax is kept in a scratch row: both loops read the same bits
// (fast math may compute a value twice differently, and then no index would match).
// CHECK-LABEL: loop.kernel @{{.*}} ins(%a: memref<?x?xf32>, %b: memref<?x?xf32>) outs(%i: memref<?xi64>)
// CHECK:         loop.parallel %[[R:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      %[[ROW:.*]] = loop.scratch(%{{.*}}) : memref<?xf32>
// CHECK-NEXT:      loop.parallel %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:             loop.store %{{.*}}, %[[ROW]][%[[T]]] : memref<?xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[M:.*]] = loop.reduce max %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} init(%{{.*}}) : f32 {
// CHECK-NEXT:        loop.load %[[ROW]][%[[K]]] : memref<?xf32>
// CHECK:           loop.reduce min %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} init(%{{.*}}) : i64 {
// CHECK-NEXT:        %[[X:.*]] = loop.load %[[ROW]][%[[K]]] : memref<?xf32>
// CHECK-NEXT:        arith.cmpf oeq, %[[X]], %[[M]] : f32
func.func @argmax_of_computed(%x: tensor<?x?xf32, ["B", "N"]>, %y: tensor<?x?xf32, ["B", "N"]>) -> tensor<?xi64, ["B"]> {
  %0 = graph.fusion_group(%x, %y) : (tensor<?x?xf32, ["B", "N"]>, tensor<?x?xf32, ["B", "N"]>) -> tensor<?xi64, ["B"]> {
  ^bb0(%a: tensor<?x?xf32, ["B", "N"]>, %b: tensor<?x?xf32, ["B", "N"]>):
    %s = graph.mul %a, %b : tensor<?x?xf32, ["B", "N"]>
    %t = graph.add %s, %a : tensor<?x?xf32, ["B", "N"]>
    %i = graph.reduce argmax %t axes = [1] : tensor<?x?xf32, ["B", "N"]> -> tensor<?xi64, ["B"]>
    graph.yield %i : tensor<?xi64, ["B"]>
  }
  func.return %0 : tensor<?xi64, ["B"]>
}

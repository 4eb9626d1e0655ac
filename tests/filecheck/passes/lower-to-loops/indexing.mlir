// RUN: fusec-opt %s -p lower-to-loops | filecheck %s
// RUN: fusec-opt %s -p lower-to-loops | fusec-opt | filecheck %s
// iota is its loop index, cast to its dtype; gather is a load at an index read from
// its indices through loop.check_index (negative ones wrapped, bad ones recorded).

!tab = tensor<?x?xf32, ["V", "D"]>
!ids = tensor<?xi32, ["T"]>
!out = tensor<?x?xf32, ["T", "D"]>

// CHECK-LABEL: loop.kernel @k0_gather ins(%tab: memref<?x?xf32>, %rows: memref<?xi32>) outs(%out: memref<?x?xf32>) attributes {kind = "elementwise"} {
// CHECK:         %[[V:.*]] = loop.dim %tab, 0 : memref<?x?xf32>
// CHECK:         loop.parallel %[[T:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      %[[RAW:.*]] = loop.load %rows[%[[T]]] : memref<?xi32>
// CHECK-NEXT:      %[[ROW:.*]] = loop.check_index %[[RAW]], %[[V]] "gather of tab along axis 0" : i32
// CHECK-NEXT:      loop.parallel %[[D:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        %[[X:.*]] = loop.load %tab[%[[ROW]], %[[D]]] : memref<?x?xf32>
// CHECK-NEXT:        %[[Y:.*]] = arith.mulf %[[X]], %{{.*}} : f32
// CHECK-NEXT:        loop.store %[[Y]], %out[%[[T]], %[[D]]] : memref<?x?xf32>
// CHECK-LABEL: func.func @embed(
// CHECK:         loop.launch @k0_gather(%table, %ids, %e)
func.func @embed(%table: !tab, %ids: !ids) -> !out {
  %e = graph.fusion_group(%table, %ids) {kernel = "k0_gather", kind = "elementwise"} : (!tab, !ids) -> !out {
  ^bb0(%tab: !tab, %rows: !ids):
    %g = graph.gather %tab[%rows] axis = 0 : !tab, !ids -> !out
    %c = graph.constant dense<2.0> : tensor<f32>
    %b = graph.broadcast %c : tensor<f32> -> !out
    %out = graph.mul %g, %b : !out
    graph.yield %out : !out
  }
  func.return %e : !out
}

// A gather along the last axis at indices computed in the kernel (n - 1 - iota).
// CHECK-LABEL: loop.kernel @k1_flip ins(%a: memref<?x8xf32>) outs(%g: memref<?x8xf32>) attributes {kind = "elementwise"} {
// CHECK:         loop.parallel %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      loop.parallel %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        %[[K:.*]] = arith.index_cast %[[J]] : index to i64
// CHECK-NEXT:        %[[R:.*]] = arith.subi %{{.*}}, %[[K]] : i64
// CHECK-NEXT:        %[[COL:.*]] = loop.check_index %[[R]], %{{.*}} "gather of a along axis 1" : i64
// CHECK-NEXT:        %{{.*}} = loop.load %a[%[[I]], %[[COL]]] : memref<?x8xf32>
func.func @flip(%x: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
  %y = graph.fusion_group(%x) {kernel = "k1_flip", kind = "elementwise"} : (tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
  ^bb0(%a: tensor<?x8xf32, ["N", ""]>):
    %seven = graph.constant dense<7> : tensor<8xi64>
    %iota = graph.iota axis = 0 : tensor<8xi64>
    %rev = graph.sub %seven, %iota : tensor<8xi64>
    %g = graph.gather %a[%rev] axis = 1 : tensor<?x8xf32, ["N", ""]>, tensor<8xi64> -> tensor<?x8xf32, ["N", ""]>
    graph.yield %g : tensor<?x8xf32, ["N", ""]>
  }
  func.return %y : tensor<?x8xf32, ["N", ""]>
}

// A float iota: the index through i64.
// CHECK-LABEL: loop.kernel @k2_iota ins() outs(%i: memref<?x4xf32>) attributes {kind = "single"} {
// CHECK:         loop.parallel %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:      loop.parallel %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        %[[K:.*]] = arith.index_cast %[[J]] : index to i64
// CHECK-NEXT:        %[[F:.*]] = arith.sitofp %[[K]] : i64 to f32
// CHECK-NEXT:        loop.store %[[F]], %i[%{{.*}}, %[[J]]] : memref<?x4xf32>
func.func @columns(%x: tensor<?xf32, ["N"]>) -> tensor<?x4xf32, ["N", ""]> {
  %r = graph.fusion_group() {kernel = "k2_iota", kind = "single"} : () -> tensor<?x4xf32, ["N", ""]> {
    %i = graph.iota axis = 1 : tensor<?x4xf32, ["N", ""]>
    graph.yield %i : tensor<?x4xf32, ["N", ""]>
  }
  func.return %r : tensor<?x4xf32, ["N", ""]>
}

// A gather without wraparound checks its index so: a negative one is out of range.
// CHECK-LABEL: loop.kernel @k3_select ins(%t: memref<?x?xf32>, %r: memref<?xi32>) outs(%g: memref<?x?xf32>) attributes {kind = "elementwise"} {
// CHECK:         %{{.*}} = loop.check_index %{{.*}}, %{{.*}} "gather of t along axis 0" no_wraparound : i32
func.func @select(%table: !tab, %ids: !ids) -> !out {
  %e = graph.fusion_group(%table, %ids) {kernel = "k3_select", kind = "elementwise"} : (!tab, !ids) -> !out {
  ^bb0(%t: !tab, %r: !ids):
    %g = graph.gather %t[%r] axis = 0 no_wraparound : !tab, !ids -> !out
    graph.yield %g : !out
  }
  func.return %e : !out
}

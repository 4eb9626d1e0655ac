// RUN: fusec-opt %s -p lower-to-loops | filecheck %s
// A matmul is a parallel (i, j) nest around a reduction over k; its epilogue is
// applied to the reduction's result before the store. Batch dimensions broadcast.

!x = tensor<?x16xf32, ["T", ""]>
!w = tensor<16x24xf32>
!y = tensor<?x24xf32, ["T", ""]>

// CHECK-LABEL: loop.kernel @k0_matmul ins(%a: memref<?x16xf32>, %wt: memref<16x24xf32>, %bias: memref<24xf32>) outs(%g: memref<?x24xf32>)
// CHECK:         loop.parallel %[[I:.*]] = {{.*}} {
// CHECK-NEXT:      loop.parallel %[[J:.*]] = {{.*}} {
// CHECK-NEXT:        %[[C:.*]] = loop.reduce add %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} init(%{{.*}}) : f32 {
// CHECK-NEXT:          %[[A:.*]] = loop.load %a[%[[I]], %[[K]]] : memref<?x16xf32>
// CHECK-NEXT:          %[[B:.*]] = loop.load %wt[%[[K]], %[[J]]] : memref<16x24xf32>
// CHECK-NEXT:          %[[P:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT:          loop.yield %[[P]] : f32
// CHECK-NEXT:        }
// CHECK-NEXT:        %[[BI:.*]] = loop.load %bias[%[[J]]] : memref<24xf32>
// CHECK-NEXT:        %[[S:.*]] = arith.addf %[[C]], %[[BI]] : f32
// CHECK:             %[[R:.*]] = arith.maximumf %[[S]], %{{.*}} : f32
// CHECK-NEXT:        loop.store %[[R]], %g[%[[I]], %[[J]]] : memref<?x24xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
func.func @matmul_bias_relu(%x: !x, %w: !w, %b: tensor<24xf32>) -> !y {
  %y = graph.fusion_group(%x, %w, %b) {kernel = "k0_matmul", kind = "matmul"} : (!x, !w, tensor<24xf32>) -> !y {
  ^bb0(%a: !x, %wt: !w, %bias: tensor<24xf32>):
    %mm = graph.matmul %a, %wt : !x, !w -> !y
    %bb = graph.broadcast %bias : tensor<24xf32> -> !y
    %s = graph.add %mm, %bb : !y
    %g = graph.relu %s : !y
    graph.yield %g : !y
  }
  func.return %y : !y
}

// A transposed operand is an index map: through a graph.transpose, or a transpose_rhs
// flag on the stored operand (the same loads). A batch of 1 broadcasts: its index is 0.
// Integer matmuls use integer ops.
// CHECK-LABEL: loop.kernel @k0_bmm ins(%a: memref<?x?x8xi64>, %b: memref<1x?x8xi64>) outs(%mm: memref<?x?x?xi64>)
// CHECK:         %[[Z:.*]] = arith.constant 0 : index
// CHECK:         loop.parallel %[[BT:.*]] = {{.*}} {
// CHECK-NEXT:      loop.parallel %[[I:.*]] = {{.*}} {
// CHECK-NEXT:        loop.parallel %[[J:.*]] = {{.*}} {
// CHECK-NEXT:          %{{.*}} = loop.reduce add %[[K:.*]] = {{.*}} : i64 {
// CHECK-NEXT:            %[[A:.*]] = loop.load %a[%[[BT]], %[[I]], %[[K]]] : memref<?x?x8xi64>
// CHECK-NEXT:            %[[B:.*]] = loop.load %b[%[[Z]], %[[J]], %[[K]]] : memref<1x?x8xi64>
// CHECK-NEXT:            %{{.*}} = arith.muli %[[A]], %[[B]] : i64
!q = tensor<?x?x8xi64, ["H", "S", ""]>
!k = tensor<1x?x8xi64, ["", "S", ""]>
!kt = tensor<1x8x?xi64, ["", "", "S"]>
!s = tensor<?x?x?xi64, ["H", "S", "S"]>
func.func @bmm(%q: !q, %k: !k) -> !s {
  %y = graph.fusion_group(%q, %k) {kernel = "k0_bmm", kind = "matmul"} : (!q, !k) -> !s {
  ^bb0(%a: !q, %b: !k):
    %bt = graph.transpose %b perm = [0, 2, 1] {index_map} : !k -> !kt
    %mm = graph.matmul %a, %bt : !q, !kt -> !s
    graph.yield %mm : !s
  }
  func.return %y : !s
}

// CHECK-LABEL: loop.kernel @k0_flagged ins(%a: memref<?x?x8xi64>, %b: memref<1x?x8xi64>) outs(%mm: memref<?x?x?xi64>)
// CHECK:         %[[Z:.*]] = arith.constant 0 : index
// CHECK:         loop.parallel %[[BT:.*]] = {{.*}} {
// CHECK-NEXT:      loop.parallel %[[I:.*]] = {{.*}} {
// CHECK-NEXT:        loop.parallel %[[J:.*]] = {{.*}} {
// CHECK-NEXT:          %{{.*}} = loop.reduce add %[[K:.*]] = {{.*}} : i64 {
// CHECK-NEXT:            %[[A:.*]] = loop.load %a[%[[BT]], %[[I]], %[[K]]] : memref<?x?x8xi64>
// CHECK-NEXT:            %[[B:.*]] = loop.load %b[%[[Z]], %[[J]], %[[K]]] : memref<1x?x8xi64>
// CHECK-NEXT:            %{{.*}} = arith.muli %[[A]], %[[B]] : i64
func.func @flagged(%q: !q, %k: !k) -> !s {
  %y = graph.fusion_group(%q, %k) {kernel = "k0_flagged", kind = "matmul"} : (!q, !k) -> !s {
  ^bb0(%a: !q, %b: !k):
    %mm = graph.matmul %a, %b transpose_rhs : !q, !k -> !s
    graph.yield %mm : !s
  }
  func.return %y : !s
}

// With transpose_lhs, A is read as A[k, i].
// CHECK-LABEL: loop.kernel @k0_tlhs
// CHECK:           loop.reduce add %[[K:.*]] = {{.*}} : f32 {
// CHECK-NEXT:        %{{.*}} = loop.load %a[%[[K]], %[[I:.*]]] : memref<8x?xf32>
// CHECK-NEXT:        %{{.*}} = loop.load %b[%[[K]], %[[J:.*]]] : memref<8x4xf32>
func.func @tlhs(%x: tensor<8x?xf32, ["", "T"]>, %w: tensor<8x4xf32>) -> tensor<?x4xf32, ["T", ""]> {
  %y = graph.fusion_group(%x, %w) {kernel = "k0_tlhs", kind = "matmul"} : (tensor<8x?xf32, ["", "T"]>, tensor<8x4xf32>) -> tensor<?x4xf32, ["T", ""]> {
  ^bb0(%a: tensor<8x?xf32, ["", "T"]>, %b: tensor<8x4xf32>):
    %mm = graph.matmul %a, %b transpose_lhs : tensor<8x?xf32, ["", "T"]>, tensor<8x4xf32> -> tensor<?x4xf32, ["T", ""]>
    graph.yield %mm : tensor<?x4xf32, ["T", ""]>
  }
  func.return %y : tensor<?x4xf32, ["T", ""]>
}

// Attention: the scores of a row are a matmul read by the max, the sum and the
// second matmul, and the probabilities a costly operand of the second matmul: each
// is computed once per row into a scratch row, not once per column of the output.
// CHECK-LABEL: loop.kernel @k0_attention
// CHECK:         loop.parallel %[[I:.*]] = {{.*}} {
// CHECK-NEXT:      %[[P:.*]] = loop.scratch(%{{.*}}) : memref<?xf32>
// CHECK-NEXT:      %[[E:.*]] = loop.scratch(%{{.*}}) : memref<?xf32>
// CHECK-NEXT:      %[[S:.*]] = loop.scratch(%{{.*}}) : memref<?xf32>
// CHECK-NEXT:      loop.parallel %[[T:.*]] = {{.*}} {
// CHECK-NEXT:        %[[QK:.*]] = loop.reduce add
// CHECK:             loop.store %[[QK]], %[[S]][%[[T]]] : memref<?xf32>
// CHECK:           %[[M:.*]] = loop.reduce max
// CHECK:             loop.load %[[S]]
// CHECK:           loop.parallel
// CHECK:             math.exp
// CHECK:             loop.store %{{.*}}, %[[E]]
// CHECK:           %[[SUM:.*]] = loop.reduce add
// CHECK:             loop.load %[[E]]
// CHECK:           loop.parallel
// CHECK:             arith.divf %{{.*}}, %[[SUM]] : f32
// CHECK:             loop.store %{{.*}}, %[[P]]
// CHECK:           loop.parallel %[[D:.*]] = {{.*}} {
// CHECK-NEXT:        %[[O:.*]] = loop.reduce add %[[K:.*]] = {{.*}} {
// CHECK-NEXT:          %[[PK:.*]] = loop.load %[[P]][%[[K]]] : memref<?xf32>
// CHECK-NEXT:          %[[VK:.*]] = loop.load %vv[%[[K]], %[[D]]] : memref<?x8xf32>
// CHECK-NEXT:          arith.mulf %[[PK]], %[[VK]] : f32
// CHECK:             loop.store %[[O]], %o[%[[I]], %[[D]]] : memref<?x8xf32>
// CHECK-NOT:     math.exp
!h = tensor<?x8xf32, ["S", ""]>
!ht = tensor<8x?xf32, ["", "S"]>
!ss = tensor<?x?xf32, ["S", "S"]>
!sr = tensor<?x1xf32, ["S", ""]>
func.func @attention(%q: !h, %k: !h, %v: !h) -> !h {
  %y = graph.fusion_group(%q, %k, %v) {kernel = "k0_attention", kind = "attention"} : (!h, !h, !h) -> !h {
  ^bb0(%a: !h, %b: !h, %vv: !h):
    %bt = graph.transpose %b perm = [1, 0] : !h -> !ht
    %s = graph.matmul %a, %bt : !h, !ht -> !ss
    %m = graph.reduce max %s axes = [1] keepdims : !ss -> !sr
    %mb = graph.broadcast %m : !sr -> !ss
    %d = graph.sub %s, %mb : !ss
    %e = graph.exp %d : !ss
    %su = graph.reduce sum %e axes = [1] keepdims : !ss -> !sr
    %sb = graph.broadcast %su : !sr -> !ss
    %p = graph.div %e, %sb : !ss
    %o = graph.matmul %p, %vv : !ss, !h -> !h
    graph.yield %o : !h
  }
  func.return %y : !h
}

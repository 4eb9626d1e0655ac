// RUN: fusec-opt %s -p lower-to-loops | filecheck %s
// A slice is an index map, never a copy: result index i along an axis reads the input
// at start + i * step (start - i * |step| for a negative step), where start may be a
// size (D/2) or a size minus an integer (N-1). The host checks at run time that the
// first and last index each slice reads lie inside the axis (loop.index_bounds) where
// the sizes are symbolic, unless the slice's length along the axis is 0 (it reads
// nothing); index 0 and size-1 need no check where another check of the axis or a
// length that is the axis's size keeps the axis from being empty.

// RoPE-style halves of D in one elementwise kernel: the upper half's column is D/2 + i1,
// D/2 read from the size of a buffer that has it.
// CHECK-LABEL: loop.kernel @k0_rope ins(%a: memref<?x?xf32>, %ca: memref<?x?xf32>, %sa: memref<?x?xf32>) outs(%r: memref<?x?xf32>)
// CHECK:         %[[HALF:.*]] = loop.dim %ca, 1 : memref<?x?xf32>
// CHECK:         loop.parallel %[[I:.*]] = {{.*}} {
// CHECK-NEXT:      loop.parallel %[[J:.*]] = {{.*}} {
// CHECK-NEXT:        %[[LO:.*]] = loop.load %a[%[[I]], %[[J]]] : memref<?x?xf32>
// CHECK:             %[[COL:.*]] = arith.addi %[[HALF]], %[[J]] : index
// CHECK-NEXT:        %[[HI:.*]] = loop.load %a[%[[I]], %[[COL]]] : memref<?x?xf32>
// CHECK-NOT:     loop.scratch
// CHECK-LABEL: func.func @rope(
// CHECK-SAME:    loop.derived_sizes = #loop.shape<["D/2"]>, loop.index_bounds = #loop.shape<["D/2-1", "D", "D/2", "D/2", "D", "D/2"]>
!x = tensor<?x?xf32, ["N", "D"]>
!h = tensor<?x?xf32, ["N", "D/2"]>
func.func @rope(%x: !x, %c: !h, %s: !h) -> !h {
  %y = graph.fusion_group(%x, %c, %s) {kernel = "k0_rope", kind = "elementwise"} : (!x, !h, !h) -> !h {
  ^bb0(%a: !x, %ca: !h, %sa: !h):
    %lo = graph.slice %a starts = ["0", "0"] steps = [1, 1] {index_map} : !x -> !h
    %hi = graph.slice %a starts = ["0", "D/2"] steps = [1, 1] {index_map} : !x -> !h
    %p = graph.mul %lo, %ca : !h
    %q = graph.mul %hi, %sa : !h
    %r = graph.add %p, %q : !h
    graph.yield %r : !h
  }
  func.return %y : !h
}

// Rows backwards from N-1, every other column backwards from 7: subtractions, so no
// index is ever negative; the static columns need no run-time check.
// CHECK-LABEL: loop.kernel @k0_flip ins(%a: memref<?x8xf32>) outs(%f: memref<?x4xf32>)
// CHECK:         %[[N:.*]] = loop.dim %a, 0 : memref<?x8xf32>
// CHECK:         %[[C1:.*]] = arith.constant 1 : index
// CHECK:         %[[LAST:.*]] = arith.subi %[[N]], %[[C1]] : index
// CHECK:         %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[C7:.*]] = arith.constant 7 : index
// CHECK-NEXT:    loop.parallel %[[I:.*]] = {{.*}} {
// CHECK-NEXT:      %[[ROW:.*]] = arith.subi %[[LAST]], %[[I]] : index
// CHECK-NEXT:      loop.parallel %[[J:.*]] = {{.*}} {
// CHECK-NEXT:        %[[J2:.*]] = arith.muli %[[J]], %[[C2]] : index
// CHECK-NEXT:        %[[COL:.*]] = arith.subi %[[C7]], %[[J2]] : index
// CHECK-NEXT:        %[[V:.*]] = loop.load %a[%[[ROW]], %[[COL]]] : memref<?x8xf32>
// CHECK-NEXT:        loop.store %[[V]], %f[%[[I]], %[[J]]] : memref<?x4xf32>
// CHECK-LABEL: func.func @flip_rows(
// CHECK-NOT:     loop.index_bounds
// CHECK:         loop.launch @k0_flip
func.func @flip_rows(%x: tensor<?x8xf32, ["N", ""]>) -> tensor<?x4xf32, ["N", ""]> {
  %y = graph.fusion_group(%x) {kernel = "k0_flip", kind = "injective"} : (tensor<?x8xf32, ["N", ""]>) -> tensor<?x4xf32, ["N", ""]> {
  ^bb0(%a: tensor<?x8xf32, ["N", ""]>):
    %f = graph.slice %a starts = ["N-1", "7"] steps = [-1, -2] : tensor<?x8xf32, ["N", ""]> -> tensor<?x4xf32, ["N", ""]>
    graph.yield %f : tensor<?x4xf32, ["N", ""]>
  }
  func.return %y : tensor<?x4xf32, ["N", ""]>
}

// The last two rows of N: the host checks N-2 >= 0 (N-1 needs no check).
// CHECK-LABEL: func.func @tail(
// CHECK-SAME:    loop.index_bounds = #loop.shape<["N-2", "N", 2]>
func.func @tail(%x: tensor<?x8xf32, ["N", ""]>) -> tensor<2x8xf32> {
  %t = graph.slice %x starts = ["N-2", "0"] steps = [1, 1] : tensor<?x8xf32, ["N", ""]> -> tensor<2x8xf32>
  func.return %t : tensor<2x8xf32>
}

// The first row of N: index 0 is read even where N is 0, so it is checked (length 1).
// CHECK-LABEL: func.func @head(
// CHECK-SAME:    loop.index_bounds = #loop.shape<["0", "N", 1]>
func.func @head(%x: tensor<?x8xf32, ["N", ""]>) -> tensor<1x8xf32> {
  %t = graph.slice %x starts = ["0", "0"] steps = [1, 1] : tensor<?x8xf32, ["N", ""]> -> tensor<1x8xf32>
  func.return %t : tensor<1x8xf32>
}

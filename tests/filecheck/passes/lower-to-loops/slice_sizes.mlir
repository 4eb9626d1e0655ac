// RUN: fusec-opt %s -p lower-to-loops | filecheck %s
// A size no buffer of the kernel has is made from one that has a multiple of it: the
// start D/8 of a slice of an [N, D/2] buffer into [N, D/4] is (D/2 * 2) / 8.
// CHECK-LABEL: loop.kernel @k0_window ins(%a: memref<?x?xf32>) outs(%w: memref<?x?xf32>)
// CHECK:         %[[HALF:.*]] = loop.dim %a, 1 : memref<?x?xf32>
// CHECK:         %[[C2:.*]] = arith.constant 2 : index
// CHECK-NEXT:    %[[D:.*]] = arith.muli %[[HALF]], %[[C2]] : index
// CHECK-NEXT:    %[[C8:.*]] = arith.constant 8 : index
// CHECK-NEXT:    %[[START:.*]] = arith.divui %[[D]], %[[C8]] : index
// CHECK:         arith.addi %[[START]], %{{.*}} : index
!h = tensor<?x?xf32, ["N", "D/2"]>
!q = tensor<?x?xf32, ["N", "D/4"]>
func.func @window(%h: !h) -> !q {
  %y = graph.fusion_group(%h) {kernel = "k0_window", kind = "injective"} : (!h) -> !q {
  ^bb0(%a: !h):
    %w = graph.slice %a starts = ["0", "D/8"] steps = [1, 1] : !h -> !q
    graph.yield %w : !q
  }
  func.return %y : !q
}

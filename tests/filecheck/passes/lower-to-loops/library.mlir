// RUN: fusec-opt %s -p lower-to-loops | filecheck %s
// A library group lowers to host ops: strided views of its operands (loop.permute for
// a transpose, loop.view for a reshape) and a loop.gemm into a new buffer; the
// epilogue after it (here the head split of the product and a relu) is a kernel of its
// own. No kernel computes the product.

!x = tensor<?x?x256xf32, ["B", "S", ""]>
!h = tensor<?x?x4x64xf32, ["B", "S", "", ""]>
!t = tensor<?x4x?x64xf32, ["B", "", "S", ""]>

// CHECK-NOT:   loop.kernel @k0_matmul_gemm0
// CHECK:       loop.kernel @k0_matmul_epilogue1 ins(%m: memref<?x?x256xf32>) outs(%g: memref<?x4x?x64xf32>)
// CHECK-LABEL: func.func @merge_heads
// CHECK:         %[[P:.*]] = loop.permute %t [0, 2, 1, 3] : memref<?x4x?x64xf32> -> memref<?x?x4x64xf32>
// CHECK-NEXT:    %[[V:.*]] = loop.view %[[P]] ["B", "S", 256] : memref<?x?x4x64xf32> -> memref<?x?x256xf32>
// CHECK-NEXT:    %[[C:.*]] = loop.alloc ["B", "S", 256] : memref<?x?x256xf32>
// CHECK-NEXT:    loop.gemm %[[V]], %w, %[[C]] transpose_rhs {kernel = "k0_matmul_gemm0"} : memref<?x?x256xf32>, memref<256x256xf32>, memref<?x?x256xf32>
// CHECK:         loop.launch @k0_matmul_epilogue1
func.func @merge_heads(%t: !t, %w: tensor<256x256xf32>) -> !t {
  %y = graph.fusion_group(%t, %w) {kernel = "k0_matmul", kind = "matmul", strategy = "library"} : (!t, tensor<256x256xf32>) -> !t {
  ^bb0(%a: !t, %b: tensor<256x256xf32>):
    %p = graph.transpose %a perm = [0, 2, 1, 3] {index_map} : !t -> !h
    %r = graph.reshape %p {index_map} : !h -> !x
    %m = graph.matmul %r, %b transpose_rhs : !x, tensor<256x256xf32> -> !x
    %s = graph.reshape %m {index_map} : !x -> !h
    %o = graph.transpose %s perm = [0, 2, 1, 3] {index_map} : !h -> !t
    %g = graph.relu %o : !t
    graph.yield %g : !t
  }
  func.return %y : !t
}

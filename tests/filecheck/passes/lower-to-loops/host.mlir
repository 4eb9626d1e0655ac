// RUN: fusec-opt %s -p lower-to-loops | filecheck %s
// RUN: fusec-opt %s -p lower-to-loops | fusec-opt | filecheck %s
// The host side: each function over tensors becomes one over buffers, each group a
// loop.alloc per output (of its symbolic shape) and a loop.launch of its kernel;
// buffers that are not returned are freed before the return.

!t = tensor<?x?xf32, ["N", "D"]>
!w = tensor<?x?xf32, ["D", "D"]>

// CHECK-LABEL: loop.kernel @k0_tanh ins(%a: memref<?x?xf32>) outs(%e: memref<?x?xf32>)
// CHECK-LABEL: loop.kernel @k1_mm ins(%a: memref<?x?xf32>, %b: memref<?x?xf32>) outs(%m: memref<?x?xf32>)
// CHECK-LABEL: func.func @two_kernels(%x: memref<?x?xf32> {loop.shape = #loop.shape<["N", "D"]>}, %w: memref<?x?xf32> {loop.shape = #loop.shape<["D", "D"]>}) -> (memref<?x?xf32>, memref<?x?xf32>) {
// CHECK-NEXT:    %h = loop.alloc ["N", "D"] : memref<?x?xf32>
// CHECK-NEXT:    loop.launch @k0_tanh(%x, %h) : (memref<?x?xf32>, memref<?x?xf32>)
// CHECK-NEXT:    %y = loop.alloc ["N", "D"] : memref<?x?xf32>
// CHECK-NEXT:    loop.launch @k1_mm(%h, %w, %y) : (memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>)
// CHECK-NEXT:    loop.dealloc %h : memref<?x?xf32>
// CHECK-NEXT:    func.return %y, %x : memref<?x?xf32>, memref<?x?xf32>
// CHECK-NEXT:  }
func.func @two_kernels(%x: !t, %w: !w) -> (!t, !t) {
  %h = graph.fusion_group(%x) {kernel = "k0_tanh", kind = "elementwise"} : (!t) -> !t {
  ^bb0(%a: !t):
    %e = graph.tanh %a : !t
    graph.yield %e : !t
  }
  %y = graph.fusion_group(%h, %w) {kernel = "k1_mm", kind = "matmul"} : (!t, !w) -> !t {
  ^bb0(%a: !t, %b: !w):
    %m = graph.matmul %a, %b : !t, !w -> !t
    graph.yield %m : !t
  }
  func.return %y, %x : !t, !t
}

// Kernel names are symbols of the module: a name another function already took
// gets a suffix.
// CHECK-LABEL: loop.kernel @k0_tanh_1 ins
// CHECK-LABEL: func.func @same_name(
// CHECK-NEXT:    %y = loop.alloc ["N", "D"] : memref<?x?xf32>
// CHECK-NEXT:    loop.launch @k0_tanh_1(%x, %y)
func.func @same_name(%x: !t) -> !t {
  %y = graph.fusion_group(%x) {kernel = "k0_tanh", kind = "elementwise"} : (!t) -> !t {
  ^bb0(%a: !t):
    %e = graph.tanh %a : !t
    graph.yield %e : !t
  }
  func.return %y : !t
}

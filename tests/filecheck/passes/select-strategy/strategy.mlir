// RUN: fusec-opt %s -p 'select-strategy{device=cpu-2core dims="T=4096"}' | filecheck %s
// RUN: fusec-opt %s -p 'select-strategy{device=cpu-2core dims="T=4096" library=false}' | filecheck %s --check-prefix=NOLIB
// RUN: fusec-opt %s -p 'select-strategy{device=cpu-2core dims="T=4096" prefer=generated}' | filecheck %s --check-prefix=NOLIB
// RUN: fusec-opt %s -p 'select-strategy{device=gpu-h200 dims="T=65536"}' | filecheck %s --check-prefix=GPU
// RUN: not fusec-opt %s -p 'select-strategy{prefer=cublas}' 2>&1 | filecheck %s --check-prefix=BAD
// A matmul group gets the strategy its target runs fastest: on the CPU NumPy's BLAS
// beats the generated loops by far; without a library (or when told) it is generated.
// A group without a matmul gets none. An unknown option value is a usage error.
// On the GPU cuBLAS's rate wins.
// BAD: fusec-opt: error: select-strategy: prefer must be auto, generated or library, not 'cublas'

!x = tensor<?x1024xf32, ["T", ""]>
!w = tensor<1024x1024xf32>

// CHECK:      kernel = "k0_matmul", kind = "matmul", strategy = "library"
// CHECK:      kernel = "k1_relu", kind = "elementwise"}
// NOLIB:      kernel = "k0_matmul", kind = "matmul", strategy = "generated"
// NOLIB:      kernel = "k1_relu", kind = "elementwise"}
// GPU:        kernel = "k0_matmul", kind = "matmul", strategy = "library"
func.func @main(%x: !x, %w: !w) -> !x {
  %y = graph.fusion_group(%x, %w) {kernel = "k0_matmul", kind = "matmul"} : (!x, !w) -> !x {
  ^bb0(%a: !x, %b: !w):
    %m = graph.matmul %a, %b : !x, !w -> !x
    graph.yield %m : !x
  }
  %r = graph.fusion_group(%y) {kernel = "k1_relu", kind = "elementwise"} : (!x) -> !x {
  ^bb0(%a: !x):
    %g = graph.relu %a : !x
    graph.yield %g : !x
  }
  func.return %r : !x
}

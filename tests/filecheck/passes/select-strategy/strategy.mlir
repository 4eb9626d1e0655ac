// RUN: fusec-opt %s -p 'select-strategy{device=cpu-2core dims="T=4096"}' | filecheck %s
// RUN: fusec-opt %s -p 'select-strategy{device=cpu-2core dims="T=4096" library=false}' | filecheck %s --check-prefix=NOLIB
// RUN: fusec-opt %s -p 'select-strategy{device=cpu-2core dims="T=4096" prefer=generated}' | filecheck %s --check-prefix=NOLIB
// RUN: fusec-opt %s -p 'select-strategy{device=gpu-h200 dims="T=65536"}' | filecheck %s --check-prefix=GPU
// RUN: not fusec-opt %s -p 'select-strategy{prefer=cublas}' 2>&1 | filecheck %s --check-prefix=BAD
// RUN: fusec-opt %s -p 'select-strategy{device=cpu-2core dims="T=4096" calibration="matmul:generated=0.3,matmul:library=2"}' | filecheck %s --check-prefix=CAL
// RUN: not fusec-opt %s -p 'select-strategy{calibration="matmul:cublas=2"}' 2>&1 | filecheck %s --check-prefix=BADCAL
// A matmul group gets the strategy its target runs fastest: on the CPU NumPy's BLAS
// beats the generated loops by far; without a library (or when told) it is generated.
// A group without a matmul gets none. An unknown option value is a usage error.
// On the GPU cuBLAS's rate wins. Factors calibration measured per kind and strategy
// (`calibration`) overrule the model past a margin, and the function says so.
// BAD: fusec-opt: error: select-strategy: prefer must be auto, generated or library, not 'cublas'
// BADCAL: fusec-opt: error: bad calibration factor 'matmul:cublas=2': {{.*}} STRATEGY one of generated, library
// CAL:        strategy.calibrated = [{kernel = "k0_matmul", decision = "calibration chose generated for k0_matmul: model library {{[0-9.]+}} us (generated {{[0-9.]+}} us), calibrated generated {{[0-9.]+}} us (library {{[0-9.]+}} us), margin 15%"}]
// CAL:        kernel = "k0_matmul", kind = "matmul", strategy = "generated"

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

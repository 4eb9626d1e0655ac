// RUN: fusec-opt %s -p map-cpu | filecheck %s
// map-cpu gives a matmul nest of f32 (or f64) factors the gemm schedule: the kernel is
// generated as a cache-blocked product with a register tile (runtime/cpu/codegen_gemm.py),
// its outer loop the prange. A product of integers keeps the interchanged loop nest.

// CHECK-LABEL: loop.kernel @matmul_relu
// CHECK-SAME:    attributes {cpu.schedule = "gemm"}
// CHECK:         loop.parallel {{.*}} map(prange) {
// CHECK:           %{{.*}} = loop.reduce add {{.*}} map(vector) {
// CHECK-NOT:     loop.for
loop.kernel @matmul_relu ins(%a: memref<?x16xf32>, %b: memref<16x24xf32>) outs(%y: memref<?x24xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c24 = arith.constant 24 : index
  %z = arith.constant 0.0 : f32
  %t = loop.dim %a, 0 : memref<?x16xf32>
  loop.parallel %i = %c0 to %t step %c1 {
    loop.parallel %j = %c0 to %c24 step %c1 {
      %r = loop.reduce add %k = %c0 to %c16 step %c1 init(%z) : f32 {
        %x = loop.load %a[%i, %k] : memref<?x16xf32>
        %w = loop.load %b[%k, %j] : memref<16x24xf32>
        %p = arith.mulf %x, %w : f32
        loop.yield %p : f32
      }
      %o = arith.maximumf %r, %z : f32
      loop.store %o, %y[%i, %j] : memref<?x24xf32>
    }
  }
}

// CHECK-LABEL: loop.kernel @integer_matmul
// CHECK-NOT:     cpu.schedule
// CHECK:         loop.for
loop.kernel @integer_matmul ins(%a: memref<?x16xi32>, %b: memref<16x24xi32>) outs(%y: memref<?x24xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c24 = arith.constant 24 : index
  %z = arith.constant 0 : i32
  %t = loop.dim %a, 0 : memref<?x16xi32>
  loop.parallel %i = %c0 to %t step %c1 {
    loop.parallel %j = %c0 to %c24 step %c1 {
      %r = loop.reduce add %k = %c0 to %c16 step %c1 init(%z) : i32 {
        %x = loop.load %a[%i, %k] : memref<?x16xi32>
        %w = loop.load %b[%k, %j] : memref<16x24xi32>
        %p = arith.muli %x, %w : i32
        loop.yield %p : i32
      }
      loop.store %r, %y[%i, %j] : memref<?x24xi32>
    }
  }
}

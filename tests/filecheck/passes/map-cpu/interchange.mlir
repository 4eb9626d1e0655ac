// RUN: fusec-opt %s -p 'map-cpu{gemm=false}' | filecheck %s
// RUN: fusec-opt %s -p 'map-cpu{gemm=false interchange=false}' | filecheck %s --check-prefix=OFF
// map-cpu turns a reduction that reads a buffer along the columns (b[k, j]) inside a
// parallel loop over j into a loop.for over k that updates a row of accumulators:
// the innermost loop then runs along contiguous memory. The epilogue runs on the row.
// (gemm=false: this f32 product would otherwise get the gemm schedule, gemm.mlir.)

// CHECK-LABEL: loop.kernel @matmul_relu
// CHECK:         loop.parallel %[[I:.*]] = {{.*}} map(prange) {
// CHECK-NEXT:      %[[ACC:.*]] = loop.scratch() : memref<24xf32>
// CHECK-NEXT:      loop.parallel %[[J0:.*]] = {{.*}} map(vector) {
// CHECK-NEXT:        loop.store %[[ZERO:.*]], %[[ACC]][%[[J0]]] : memref<24xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:      loop.for %[[K:.*]] = {{.*}} map(serial) {
// CHECK-NEXT:        %[[A:.*]] = loop.load %a[%[[I]], %[[K]]] : memref<?x16xf32>
// CHECK-NEXT:        loop.parallel %[[J1:.*]] = {{.*}} map(vector) {
// CHECK-NEXT:          %[[B:.*]] = loop.load %b[%[[K]], %[[J1]]] : memref<16x24xf32>
// CHECK-NEXT:          %[[P:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT:          %[[OLD:.*]] = loop.load %[[ACC]][%[[J1]]] : memref<24xf32>
// CHECK-NEXT:          %[[NEW:.*]] = arith.addf %[[OLD]], %[[P]] : f32
// CHECK-NEXT:          loop.store %[[NEW]], %[[ACC]][%[[J1]]] : memref<24xf32>
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:      loop.parallel %[[J2:.*]] = {{.*}} map(vector) {
// CHECK-NEXT:        %[[R:.*]] = loop.load %[[ACC]][%[[J2]]] : memref<24xf32>
// CHECK-NEXT:        %[[Y:.*]] = arith.maximumf %[[R]], %[[ZERO]] : f32
// CHECK-NEXT:        loop.store %[[Y]], %y[%[[I]], %[[J2]]] : memref<?x24xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// OFF-LABEL: loop.kernel @matmul_relu
// OFF-NOT:     loop.for
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

// A row of dynamic length, a max combiner.
// CHECK-LABEL: loop.kernel @column_max
// CHECK:         %[[ACC:.*]] = loop.scratch(%[[N:.*]]) : memref<?xf32>
// CHECK:         loop.for
// CHECK:           arith.maximumf
loop.kernel @column_max ins(%x: memref<?x?x?xf32>) outs(%y: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ninf = arith.constant 0xFF800000 : f32
  %b = loop.dim %x, 0 : memref<?x?x?xf32>
  %m = loop.dim %x, 1 : memref<?x?x?xf32>
  %n = loop.dim %x, 2 : memref<?x?x?xf32>
  loop.parallel %i = %c0 to %b step %c1 {
    loop.parallel %j = %c0 to %n step %c1 {
      %r = loop.reduce max %k = %c0 to %m step %c1 init(%ninf) : f32 {
        %v = loop.load %x[%i, %k, %j] : memref<?x?x?xf32>
        loop.yield %v : f32
      }
      loop.store %r, %y[%i, %j] : memref<?x?xf32>
    }
  }
}

// Left alone: a reduction reading along k (contiguous already), and one at the top
// of a kernel (its loop over k would be outside every prange).
// CHECK-LABEL: loop.kernel @rows
// CHECK-NOT:     loop.for
// CHECK-LABEL: loop.kernel @top_level_columns
// CHECK-NOT:     loop.for
loop.kernel @rows ins(%x: memref<?x?xf32>) outs(%y: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  %m = loop.dim %x, 0 : memref<?x?xf32>
  %n = loop.dim %x, 1 : memref<?x?xf32>
  loop.parallel %i = %c0 to %m step %c1 {
    loop.parallel %j = %c0 to %m step %c1 {
      %r = loop.reduce add %k = %c0 to %n step %c1 init(%z) : f32 {
        %a = loop.load %x[%i, %k] : memref<?x?xf32>
        %b = loop.load %x[%j, %k] : memref<?x?xf32>
        %p = arith.mulf %a, %b : f32
        loop.yield %p : f32
      }
      loop.store %r, %y[%i, %j] : memref<?x?xf32>
    }
  }
}
loop.kernel @top_level_columns ins(%x: memref<?x?xf32>) outs(%y: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  %m = loop.dim %x, 0 : memref<?x?xf32>
  %n = loop.dim %x, 1 : memref<?x?xf32>
  loop.parallel %j = %c0 to %n step %c1 {
    %r = loop.reduce add %k = %c0 to %m step %c1 init(%z) : f32 {
      %v = loop.load %x[%k, %j] : memref<?x?xf32>
      loop.yield %v : f32
    }
    loop.store %r, %y[%j] : memref<?xf32>
  }
}

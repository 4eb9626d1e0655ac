// RUN: fusec-opt %s -p map-cpu | filecheck %s
// RUN: fusec-opt %s -p 'map-cpu{collapse=false}' | filecheck %s --check-prefix=NOCOLLAPSE
// map-cpu: the outer loop of each nest is a prange, loops with no loop inside are
// vector loops, the others serial; perfectly nested outer parallel loops are merged
// into one prange first (keeping the innermost loop out of the merge).

// A row loop holding reductions: prange over rows; the reductions and the row's
// elementwise loop are vector loops.
// CHECK-LABEL: loop.kernel @softmax_like
// CHECK:         loop.parallel %{{.*}} map(prange) {
// CHECK-NEXT:      %{{.*}} = loop.reduce max {{.*}} map(vector) {
// CHECK:           loop.parallel {{.*}} map(vector) {
loop.kernel @softmax_like ins(%x: memref<?x?xf32>) outs(%y: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ninf = arith.constant 0xFF800000 : f32
  %m = loop.dim %x, 0 : memref<?x?xf32>
  %n = loop.dim %x, 1 : memref<?x?xf32>
  loop.parallel %i = %c0 to %m step %c1 {
    %s = loop.reduce max %k = %c0 to %n step %c1 init(%ninf) : f32 {
      %v = loop.load %x[%i, %k] : memref<?x?xf32>
      loop.yield %v : f32
    }
    loop.parallel %j = %c0 to %n step %c1 {
      %v = loop.load %x[%i, %j] : memref<?x?xf32>
      %r = arith.subf %v, %s : f32
      loop.store %r, %y[%i, %j] : memref<?x?xf32>
    }
  }
}

// [B, H, S, D]: B, H and S merge into one prange over B * H * S (split back with
// div/mod, index arithmetic sunk into the merged loop); D stays the vector loop.
// CHECK-LABEL: loop.kernel @heads
// CHECK:         %[[BH:.*]] = arith.muli %[[B:.*]], %[[H:.*]] : index
// CHECK-NEXT:    %[[BHS:.*]] = arith.muli %[[BH]], %[[S:.*]] : index
// CHECK-NEXT:    loop.parallel %[[F:.*]] = %{{.*}} to %[[BHS]] step %{{.*}} map(prange) {
// CHECK-NEXT:      %[[SI:.*]] = arith.remui %[[F]], %[[S]] : index
// CHECK-NEXT:      %[[Q:.*]] = arith.divui %[[F]], %[[S]] : index
// CHECK-NEXT:      %[[HI:.*]] = arith.remui %[[Q]], %[[H]] : index
// CHECK-NEXT:      %[[BI:.*]] = arith.divui %[[Q]], %[[H]] : index
// CHECK-NEXT:      %[[HD:.*]] = arith.muli %[[HI]], %{{.*}} : index
// CHECK-NEXT:      loop.parallel %[[D:.*]] = {{.*}} map(vector) {
// CHECK-NEXT:        %[[COL:.*]] = arith.addi %[[HD]], %[[D]] : index
// CHECK-NEXT:        %[[V:.*]] = loop.load %x[%[[BI]], %[[SI]], %[[COL]]] : memref<?x?x?xf32>
// CHECK-NEXT:        loop.store %[[V]], %y[%[[BI]], %[[HI]], %[[SI]], %[[D]]] : memref<?x4x?x8xf32>
// NOCOLLAPSE-LABEL: loop.kernel @heads
// NOCOLLAPSE:         loop.parallel {{.*}} map(prange) {
// NOCOLLAPSE-NEXT:      loop.parallel {{.*}} map(serial) {
loop.kernel @heads ins(%x: memref<?x?x?xf32>) outs(%y: memref<?x4x?x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %b = loop.dim %x, 0 : memref<?x?x?xf32>
  %s = loop.dim %x, 1 : memref<?x?x?xf32>
  loop.parallel %i = %c0 to %b step %c1 {
    loop.parallel %h = %c0 to %c4 step %c1 {
      %hd = arith.muli %h, %c8 : index
      loop.parallel %t = %c0 to %s step %c1 {
        loop.parallel %d = %c0 to %c8 step %c1 {
          %col = arith.addi %hd, %d : index
          %v = loop.load %x[%i, %t, %col] : memref<?x?x?xf32>
          loop.store %v, %y[%i, %h, %t, %d] : memref<?x4x?x8xf32>
        }
      }
    }
  }
}

// A reduction to a scalar at the top of a kernel is a parallel reduction.
// CHECK-LABEL: loop.kernel @total
// CHECK:         %{{.*}} = loop.reduce add {{.*}} map(prange) {
// CHECK-NEXT:      %{{.*}} = loop.reduce add {{.*}} map(vector) {
loop.kernel @total ins(%x: memref<?x?xf32>) outs(%y: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  %m = loop.dim %x, 0 : memref<?x?xf32>
  %n = loop.dim %x, 1 : memref<?x?xf32>
  %s = loop.reduce add %i = %c0 to %m step %c1 init(%z) : f32 {
    %r = loop.reduce add %j = %c0 to %n step %c1 init(%z) : f32 {
      %v = loop.load %x[%i, %j] : memref<?x?xf32>
      loop.yield %v : f32
    }
    loop.yield %r : f32
  }
  loop.store %s, %y[] : memref<f32>
}

// Loops after tiling (a non-zero lower bound or a step) are never merged.
// CHECK-LABEL: loop.kernel @stepped
// CHECK:         loop.parallel %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} map(prange) {
// CHECK-NEXT:      loop.parallel %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} map(serial) {
// CHECK-NEXT:        loop.parallel %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} map(vector) {
loop.kernel @stepped ins(%x: memref<?x?x?xf32>) outs(%y: memref<?x?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %a = loop.dim %x, 0 : memref<?x?x?xf32>
  %b = loop.dim %x, 1 : memref<?x?x?xf32>
  %c = loop.dim %x, 2 : memref<?x?x?xf32>
  loop.parallel %i = %c0 to %a step %c2 {
    loop.parallel %j = %c0 to %b step %c1 {
      loop.parallel %k = %c0 to %c step %c1 {
        %v = loop.load %x[%i, %j, %k] : memref<?x?x?xf32>
        loop.store %v, %y[%i, %j, %k] : memref<?x?x?xf32>
      }
    }
  }
}

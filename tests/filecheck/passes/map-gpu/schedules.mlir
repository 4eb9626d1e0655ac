// RUN: fusec-opt %s -p map-gpu | filecheck %s
// map-gpu picks one schedule per kernel and maps its loops to blocks, threads or
// serial; the decisions are attributes of the kernel, its temporaries and its loads.

// An elementwise nest: the outer loops merge into one loop over the grid (blocks),
// the innermost goes to a block's threads, 8 elements per thread.
// CHECK-LABEL: loop.kernel @add_rows
// CHECK-SAME:    {gpu.schedule = "elementwise", gpu.threads = 256 : i64, gpu.per_thread = 8 : i64}
// CHECK:         loop.parallel %{{.*}} map(blocks) {
// CHECK-NEXT:      loop.parallel %{{.*}} map(threads) {
// CHECK-NOT:     map(
loop.kernel @add_rows ins(%x: memref<?x?xf32>, %b: memref<?xf32>) outs(%y: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = loop.dim %x, 0 : memref<?x?xf32>
  %n = loop.dim %x, 1 : memref<?x?xf32>
  loop.parallel %i = %c0 to %m step %c1 {
    loop.parallel %j = %c0 to %n step %c1 {
      %v = loop.load %x[%i, %j] : memref<?x?xf32>
      %w = loop.load %b[%j] : memref<?xf32>
      %s = arith.addf %v, %w : f32
      loop.store %s, %y[%i, %j] : memref<?x?xf32>
    }
  }
}

// f64 elements: half as many per thread, the same bytes in flight.
// CHECK-LABEL: loop.kernel @copy64
// CHECK-SAME:    {gpu.schedule = "elementwise", gpu.threads = 256 : i64, gpu.per_thread = 4 : i64}
// CHECK:         loop.parallel %{{.*}} map(threads) {
loop.kernel @copy64 ins(%x: memref<?xf64>) outs(%y: memref<?xf64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = loop.dim %x, 0 : memref<?xf64>
  loop.parallel %i = %c0 to %n step %c1 {
    %v = loop.load %x[%i] : memref<?xf64>
    loop.store %v, %y[%i] : memref<?xf64>
  }
}

// A softmax row: one block per row, the row's loops shared by the threads. The row of
// exponentials is only ever touched at a threads loop's own index, so it lives in
// registers; the input row is read once (row_cache) for both loops that read it.
// CHECK-LABEL: loop.kernel @softmax
// CHECK-SAME:    {gpu.schedule = "rows", gpu.threads = 256 : i64, gpu.per_thread = 16 : i64}
// CHECK:         loop.parallel %[[I:.*]] = {{.*}} map(blocks) {
// CHECK-NEXT:      %[[E:.*]] = loop.scratch(%{{.*}}) {gpu.memory = "registers"} : memref<?xf32>
// CHECK-NEXT:      %{{.*}} = loop.reduce max {{.*}} map(threads) {
// CHECK-NEXT:        %{{.*}} = loop.load %x[%[[I]], %{{.*}}] {gpu.row_cache} : memref<?x?xf32>
// CHECK:           loop.parallel {{.*}} map(threads) {
// CHECK-NEXT:        %{{.*}} = loop.load %x[%[[I]], %{{.*}}] {gpu.row_cache} : memref<?x?xf32>
// CHECK:           %{{.*}} = loop.reduce add {{.*}} map(threads) {
// CHECK-NEXT:        %{{.*}} = loop.load %[[E]][%{{.*}}] : memref<?xf32>
// CHECK:           loop.parallel {{.*}} map(threads) {
loop.kernel @softmax ins(%x: memref<?x?xf32>) outs(%y: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %m = loop.dim %x, 0 : memref<?x?xf32>
  %n = loop.dim %x, 1 : memref<?x?xf32>
  loop.parallel %i = %c0 to %m step %c1 {
    %e = loop.scratch(%n) : memref<?xf32>
    %mx = loop.reduce max %k = %c0 to %n step %c1 init(%ninf) : f32 {
      %v = loop.load %x[%i, %k] : memref<?x?xf32>
      loop.yield %v : f32
    }
    loop.parallel %t = %c0 to %n step %c1 {
      %v = loop.load %x[%i, %t] : memref<?x?xf32>
      %d = arith.subf %v, %mx : f32
      %x1 = math.exp %d : f32
      loop.store %x1, %e[%t] : memref<?xf32>
    }
    %s = loop.reduce add %k = %c0 to %n step %c1 init(%zero) : f32 {
      %v = loop.load %e[%k] : memref<?xf32>
      loop.yield %v : f32
    }
    loop.parallel %j = %c0 to %n step %c1 {
      %v = loop.load %e[%j] : memref<?xf32>
      %r = arith.divf %v, %s : f32
      loop.store %r, %y[%i, %j] : memref<?x?xf32>
    }
  }
}

// A temporary read at another index than the loop that wrote it (every thread reads
// every element, as attention's probabilities): a per-block workspace in global memory.
// Loops inside a loop.for are shared by the threads; the loop.for runs in each thread.
// CHECK-LABEL: loop.kernel @reversed
// CHECK:         %{{.*}} = loop.scratch(%{{.*}}) {gpu.memory = "global"} : memref<?xf32>
// CHECK:         loop.for {{.*}} map(serial) {
// CHECK-NEXT:      loop.parallel {{.*}} map(threads) {
loop.kernel @reversed ins(%x: memref<?x?xf32>) outs(%y: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = loop.dim %x, 0 : memref<?x?xf32>
  %n = loop.dim %x, 1 : memref<?x?xf32>
  %last = arith.subi %n, %c1 : index
  loop.parallel %i = %c0 to %m step %c1 {
    %e = loop.scratch(%n) : memref<?xf32>
    loop.parallel %t = %c0 to %n step %c1 {
      %v = loop.load %x[%i, %t] : memref<?x?xf32>
      loop.store %v, %e[%t] : memref<?xf32>
    }
    loop.for %r = %c0 to %c1 step %c1 {
      loop.parallel %j = %c0 to %n step %c1 {
        %k = arith.subi %last, %j : index
        %v = loop.load %e[%k] : memref<?xf32>
        loop.store %v, %y[%i, %j] : memref<?x?xf32>
      }
    }
  }
}

// A column sum: the reduction walks down a column, so one thread per column (adjacent
// threads read adjacent elements), the reduction serial in each.
// CHECK-LABEL: loop.kernel @column_sum
// CHECK-SAME:    {gpu.schedule = "threads", gpu.threads = 256 : i64
// CHECK:         loop.parallel %{{.*}} map(threads) {
// CHECK-NEXT:      %{{.*}} = loop.reduce add {{.*}} map(serial) {
loop.kernel @column_sum ins(%x: memref<?x?xf32>) outs(%y: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  %m = loop.dim %x, 0 : memref<?x?xf32>
  %n = loop.dim %x, 1 : memref<?x?xf32>
  loop.parallel %j = %c0 to %n step %c1 {
    %s = loop.reduce add %i = %c0 to %m step %c1 init(%z) : f32 {
      %v = loop.load %x[%i, %j] : memref<?x?xf32>
      loop.yield %v : f32
    }
    loop.store %s, %y[%j] : memref<?xf32>
  }
}

// A reduction of a whole tensor: its rows over the grid's blocks, a row over a block's
// threads (adjacent threads read adjacent elements); each block writes a partial that
// the last block combines.
// CHECK-LABEL: loop.kernel @total
// CHECK-SAME:    {gpu.schedule = "split", gpu.threads = 256 : i64, gpu.per_thread = 4 : i64}
// CHECK:         %[[S:.*]] = loop.reduce add {{.*}} map(blocks) {
// CHECK-NEXT:      %[[R:.*]] = loop.reduce add {{.*}} map(threads) {
// CHECK-NEXT:        loop.load %x
// CHECK:         loop.store %[[S]], %y[] : memref<f32>
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

// x / sum(x): the reduction's result feeds another loop of the kernel, so the whole
// kernel is one block, its threads sharing both loops.
// CHECK-LABEL: loop.kernel @normalise
// CHECK-SAME:    {gpu.schedule = "block", gpu.threads = 1024 : i64
// CHECK:         %{{.*}} = loop.reduce add {{.*}} map(threads) {
// CHECK:         loop.parallel {{.*}} map(threads) {
loop.kernel @normalise ins(%x: memref<?xf32>) outs(%y: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  %n = loop.dim %x, 0 : memref<?xf32>
  %s = loop.reduce add %i = %c0 to %n step %c1 init(%z) : f32 {
    %v = loop.load %x[%i] : memref<?xf32>
    loop.yield %v : f32
  }
  loop.parallel %j = %c0 to %n step %c1 {
    %v = loop.load %x[%j] : memref<?xf32>
    %r = arith.divf %v, %s : f32
    loop.store %r, %y[%j] : memref<?xf32>
  }
}

// Three levels: the outer two merge into one (over the grid), the innermost stays
// whole (over a block's threads).
// CHECK-LABEL: loop.kernel @total3
// CHECK:         %[[AB:.*]] = arith.muli %{{.*}}, %[[B:.*]] : index
// CHECK-NEXT:    %{{.*}} = loop.reduce max %[[F:.*]] = %{{.*}} to %[[AB]] step %{{.*}} map(blocks) {
// CHECK-NEXT:      %[[I:.*]] = arith.divui %[[F]], %[[B]] : index
// CHECK-NEXT:      %[[J:.*]] = arith.remui %[[F]], %[[B]] : index
// CHECK-NEXT:      %{{.*}} = loop.reduce max {{.*}} map(threads) {
// CHECK-NEXT:        loop.load %x[%[[I]], %[[J]], %{{.*}}] : memref<?x?x?xf32>
loop.kernel @total3 ins(%x: memref<?x?x?xf32>) outs(%y: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ninf = arith.constant 0xFF800000 : f32
  %a = loop.dim %x, 0 : memref<?x?x?xf32>
  %b = loop.dim %x, 1 : memref<?x?x?xf32>
  %c = loop.dim %x, 2 : memref<?x?x?xf32>
  %s = loop.reduce max %i = %c0 to %a step %c1 init(%ninf) : f32 {
    %r = loop.reduce max %j = %c0 to %b step %c1 init(%ninf) : f32 {
      %q = loop.reduce max %k = %c0 to %c step %c1 init(%ninf) : f32 {
        %v = loop.load %x[%i, %j, %k] : memref<?x?x?xf32>
        loop.yield %v : f32
      }
      loop.yield %q : f32
    }
    loop.yield %r : f32
  }
  loop.store %s, %y[] : memref<f32>
}

// RUN: fusec-opt %s -p plan-memory | filecheck %s
// RUN: fusec-opt %s -p 'plan-memory{reuse=false}' | filecheck %s --check-prefix=NOREUSE
// plan-memory: results go into caller-provided buffers; every other buffer is freed
// after its last use, and a later buffer of the same element type and provably as
// many elements reuses it (the same shape directly, another shape through a view).

loop.kernel @k ins(%x: memref<?x8xf32>) outs(%y: memref<?x8xf32>) {
}
loop.kernel @kt ins(%x: memref<?x8xf32>) outs(%y: memref<8x?xf32>) {
}
loop.kernel @tk ins(%x: memref<8x?xf32>) outs(%y: memref<?x8xf32>) {
}
loop.kernel @km ins(%x: memref<?x8xf32>) outs(%y: memref<?x8xf32>) {
}

// A chain of four kernels: %b cannot take %a's place (both live across k1), %c
// takes %a's memory through a view (8 x N elements = N x 8), the result %d is the
// caller's buffer, and each intermediate is freed right after its last use.
// CHECK-LABEL: func.func @chain(%x: memref<?x8xf32> {loop.shape = #loop.shape<["N", 8]>}, %out0: memref<?x8xf32> {loop.shape = #loop.shape<["N", 8]>, loop.result = 0 : i64}) {
// CHECK-NEXT:    %a = loop.alloc ["N", 8] : memref<?x8xf32>
// CHECK-NEXT:    loop.launch @k(%x, %a) : (memref<?x8xf32>, memref<?x8xf32>)
// CHECK-NEXT:    %b = loop.alloc ["N", 8] : memref<?x8xf32>
// CHECK-NEXT:    loop.launch @k(%a, %b) : (memref<?x8xf32>, memref<?x8xf32>)
// CHECK-NEXT:    %c = loop.view %a [8, "N"] : memref<?x8xf32> -> memref<8x?xf32>
// CHECK-NEXT:    loop.launch @kt(%b, %c) : (memref<?x8xf32>, memref<8x?xf32>)
// CHECK-NEXT:    loop.dealloc %b : memref<?x8xf32>
// CHECK-NEXT:    loop.launch @tk(%c, %out0) : (memref<8x?xf32>, memref<?x8xf32>)
// CHECK-NEXT:    loop.dealloc %a : memref<?x8xf32>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// NOREUSE-LABEL: func.func @chain(
// NOREUSE:         %c = loop.alloc [8, "N"] : memref<8x?xf32>
// NOREUSE-NOT:     loop.view
func.func @chain(%x: memref<?x8xf32> {loop.shape = #loop.shape<["N", 8]>}) -> memref<?x8xf32> {
  %a = loop.alloc ["N", 8] : memref<?x8xf32>
  loop.launch @k(%x, %a) : (memref<?x8xf32>, memref<?x8xf32>)
  %b = loop.alloc ["N", 8] : memref<?x8xf32>
  loop.launch @k(%a, %b) : (memref<?x8xf32>, memref<?x8xf32>)
  %c = loop.alloc [8, "N"] : memref<8x?xf32>
  loop.launch @kt(%b, %c) : (memref<?x8xf32>, memref<8x?xf32>)
  %d = loop.alloc ["N", 8] : memref<?x8xf32>
  loop.launch @tk(%c, %d) : (memref<8x?xf32>, memref<?x8xf32>)
  loop.dealloc %a : memref<?x8xf32>
  loop.dealloc %b : memref<?x8xf32>
  loop.dealloc %c : memref<8x?xf32>
  func.return %d : memref<?x8xf32>
}

// Sizes are only equal when provably so: "N" and "M" may differ at run time, so
// %c gets memory of its own although %a is dead; %d, of %a's shape, reuses %a.
// CHECK-LABEL: func.func @symbolic(
// CHECK-NEXT:    %a = loop.alloc ["N", 8] : memref<?x8xf32>
// CHECK-NEXT:    loop.launch @k(%x, %a)
// CHECK-NEXT:    %b = loop.alloc ["M", 8] : memref<?x8xf32>
// CHECK-NEXT:    loop.launch @km(%a, %b)
// CHECK-NEXT:    %c = loop.alloc ["M", 8] : memref<?x8xf32>
// CHECK-NEXT:    loop.launch @k(%b, %c)
// CHECK-NEXT:    loop.dealloc %b : memref<?x8xf32>
// CHECK-NEXT:    loop.launch @k(%c, %a)
// CHECK-NEXT:    loop.dealloc %c : memref<?x8xf32>
// CHECK-NEXT:    loop.launch @k(%a, %out0)
// CHECK-NEXT:    loop.dealloc %a : memref<?x8xf32>
// CHECK-NEXT:    func.return
func.func @symbolic(%x: memref<?x8xf32> {loop.shape = #loop.shape<["N", 8]>}) -> memref<?x8xf32> {
  %a = loop.alloc ["N", 8] : memref<?x8xf32>
  loop.launch @k(%x, %a) : (memref<?x8xf32>, memref<?x8xf32>)
  %b = loop.alloc ["M", 8] : memref<?x8xf32>
  loop.launch @km(%a, %b) : (memref<?x8xf32>, memref<?x8xf32>)
  %c = loop.alloc ["M", 8] : memref<?x8xf32>
  loop.launch @k(%b, %c) : (memref<?x8xf32>, memref<?x8xf32>)
  %d = loop.alloc ["N", 8] : memref<?x8xf32>
  loop.launch @k(%c, %d) : (memref<?x8xf32>, memref<?x8xf32>)
  %e = loop.alloc ["N", 8] : memref<?x8xf32>
  loop.launch @k(%d, %e) : (memref<?x8xf32>, memref<?x8xf32>)
  func.return %e : memref<?x8xf32>
}

// A result that is an argument, or returned twice, is copied into its buffer.
// CHECK-LABEL: func.func @copies(%x: memref<?x8xf32> {loop.shape = #loop.shape<["N", 8]>}, %out0: memref<?x8xf32> {loop.shape = #loop.shape<["N", 8]>, loop.result = 0 : i64}, %out1: memref<?x8xf32> {loop.shape = #loop.shape<["N", 8]>, loop.result = 1 : i64}, %out2: memref<?x8xf32> {loop.shape = #loop.shape<["N", 8]>, loop.result = 2 : i64}) {
// CHECK-NEXT:    loop.launch @k(%x, %out0)
// CHECK-NEXT:    loop.copy %x, %out1 : memref<?x8xf32>, memref<?x8xf32>
// CHECK-NEXT:    loop.copy %out0, %out2 : memref<?x8xf32>, memref<?x8xf32>
// CHECK-NEXT:    func.return
func.func @copies(%x: memref<?x8xf32> {loop.shape = #loop.shape<["N", 8]>}) -> (memref<?x8xf32>, memref<?x8xf32>, memref<?x8xf32>) {
  %a = loop.alloc ["N", 8] : memref<?x8xf32>
  loop.launch @k(%x, %a) : (memref<?x8xf32>, memref<?x8xf32>)
  func.return %a, %x, %a : memref<?x8xf32>, memref<?x8xf32>, memref<?x8xf32>
}

// Element types must match: an i32 buffer never takes an f32 buffer's memory.
// CHECK-LABEL: func.func @dtypes(
// CHECK:         %b = loop.alloc ["N", 8] : memref<?x8xi32>
loop.kernel @ki ins(%x: memref<?x8xf32>) outs(%y: memref<?x8xi32>) {
}
loop.kernel @ii ins(%x: memref<?x8xi32>) outs(%y: memref<?x8xi32>) {
}
func.func @dtypes(%x: memref<?x8xf32> {loop.shape = #loop.shape<["N", 8]>}) -> memref<?x8xi32> {
  %a = loop.alloc ["N", 8] : memref<?x8xf32>
  loop.launch @k(%x, %a) : (memref<?x8xf32>, memref<?x8xf32>)
  %i = loop.alloc ["N", 8] : memref<?x8xi32>
  loop.launch @ki(%a, %i) : (memref<?x8xf32>, memref<?x8xi32>)
  %b = loop.alloc ["N", 8] : memref<?x8xi32>
  loop.launch @ii(%i, %b) : (memref<?x8xi32>, memref<?x8xi32>)
  %r = loop.alloc ["N", 8] : memref<?x8xi32>
  loop.launch @ii(%b, %r) : (memref<?x8xi32>, memref<?x8xi32>)
  func.return %r : memref<?x8xi32>
}

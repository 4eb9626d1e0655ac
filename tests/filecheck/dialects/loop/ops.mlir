// RUN: fusec-opt %s | fusec-opt | filecheck %s
// RUN: fusec-opt %s --print-op-generic | fusec-opt | filecheck %s
// RUN: fusec-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// Every op of the loop dialect, printed and parsed back in custom and generic form.

// GENERIC: "loop.kernel"() <{sym_name = "softmax_rows", num_inputs = 1 : i64, kind = "reduction"}> ({
// GENERIC: "loop.parallel"(%{{.*}}, %{{.*}}, %{{.*}}) <{map = #loop<map prange>}> ({
// GENERIC: "loop.reduce"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{combiners = [#loop<combiner max>], map = #loop<map vector>}> ({
// GENERIC: "loop.alloc"() <{shape = #loop.shape<["B", "N"]>}> : () -> memref<?x?xf32>
// GENERIC: "loop.launch"(%{{.*}}, %{{.*}}) <{callee = @softmax_rows}> : (memref<?x?xf32>, memref<?x?xf32>) -> ()
// GENERIC: "loop.view"(%{{.*}}) <{shape = #loop.shape<["N", "B"]>}> : (memref<?x?xf32>) -> memref<?x?xf32>

// CHECK-LABEL: loop.kernel @softmax_rows ins(%x: memref<?x?xf32>) outs(%y: memref<?x?xf32>) attributes {kind = "reduction"} {
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %rows = loop.dim %x, 0 : memref<?x?xf32>
// CHECK-NEXT:    %cols = loop.dim %x, 1 : memref<?x?xf32>
// CHECK-NEXT:    %ninf = arith.constant 0xff800000 : f32
// CHECK-NEXT:    %zero = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    loop.parallel %i = %c0 to %rows step %c1 map(prange) {
// CHECK-NEXT:      %m = loop.reduce max %j = %c0 to %cols step %c1 init(%ninf) : f32 map(vector) {
// CHECK-NEXT:        %v = loop.load %x[%i, %j] : memref<?x?xf32>
// CHECK-NEXT:        loop.yield %v : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      %s = loop.reduce add %j_1 = %c0 to %cols step %c1 init(%zero) : f32 {
// CHECK-NEXT:        %v_1 = loop.load %x[%i, %j_1] : memref<?x?xf32>
// CHECK-NEXT:        %d = arith.subf %v_1, %m : f32
// CHECK-NEXT:        %e = math.exp %d : f32
// CHECK-NEXT:        loop.yield %e : f32
// CHECK-NEXT:      }
// CHECK-NEXT:      loop.parallel %j_2 = %c0 to %cols step %c1 map(vector) {
// CHECK-NEXT:        %v_2 = loop.load %x[%i, %j_2] : memref<?x?xf32>
// CHECK-NEXT:        %d_1 = arith.subf %v_2, %m : f32
// CHECK-NEXT:        %e_1 = math.exp %d_1 : f32
// CHECK-NEXT:        %r = arith.divf %e_1, %s : f32
// CHECK-NEXT:        loop.store %r, %y[%i, %j_2] : memref<?x?xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// CHECK-LABEL: loop.kernel @everything ins(%a: memref<8x?xf64>) outs(%b: memref<f64>, %c: memref<8x?xi1>) attributes {tile_sizes = array<i64: 4>} {
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %c4 = arith.constant 4 : index
// CHECK-NEXT:    %c8 = arith.constant 8 : index
// CHECK-NEXT:    %n = loop.dim %a, 1 : memref<8x?xf64>
// CHECK-NEXT:    %z = arith.constant 0.000000e+00 : f64
// CHECK-NEXT:    %o = arith.constant 1.000000e+00 : f64
// CHECK-NEXT:    %s, %p = loop.reduce add, mul %i = %c0 to %c8 step %c1 init(%z, %o) : f64, f64 map(prange) {
// CHECK-NEXT:      %r = loop.reduce min %j = %c0 to %n step %c1 init(%o) : f64 map(serial) {
// CHECK-NEXT:        %v = loop.load %a[%i, %j] : memref<8x?xf64>
// CHECK-NEXT:        loop.yield %v : f64
// CHECK-NEXT:      }
// CHECK-NEXT:      loop.yield %r, %r : f64, f64
// CHECK-NEXT:    }
// CHECK-NEXT:    %sp = arith.addf %s, %p : f64
// CHECK-NEXT:    loop.store %sp, %b[] : memref<f64>
// CHECK-NEXT:    loop.for %k = %c0 to %c8 step %c1 map(serial) {
// CHECK-NEXT:      %v_1 = loop.load %a[%k, %c0] : memref<8x?xf64>
// CHECK-NEXT:      %w = loop.load %b[] : memref<f64>
// CHECK-NEXT:      %u = arith.addf %v_1, %w : f64
// CHECK-NEXT:      loop.store %u, %b[] : memref<f64>
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.for %k_1 = %c0 to %c8 step %c1 {
// CHECK-NEXT:    }
// CHECK-NEXT:    loop.parallel %t = %c0 to %c8 step %c4 map(blocks) attributes {tile_size = 4 : i64} {
// CHECK-NEXT:      %e = arith.addi %t, %c4 : index
// CHECK-NEXT:      loop.parallel %i_1 = %t to %e step %c1 map(threads) {
// CHECK-NEXT:        %row = loop.scratch(%n) : memref<?xf64>
// CHECK-NEXT:        loop.parallel %j_1 = %c0 to %n step %c1 map(warps) {
// CHECK-NEXT:          %v_2 = loop.load %a[%i_1, %j_1] : memref<8x?xf64>
// CHECK-NEXT:          loop.store %v_2, %row[%j_1] : memref<?xf64>
// CHECK-NEXT:        }
// CHECK-NEXT:        loop.parallel %j_2 = %c0 to %n step %c1 {
// CHECK-NEXT:          %v_3 = loop.load %row[%j_2] : memref<?xf64>
// CHECK-NEXT:          %q = arith.cmpf ogt, %v_3, %z : f64
// CHECK-NEXT:          loop.store %q, %c[%i_1, %j_2] : memref<8x?xi1>
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// CHECK-LABEL: func.func @main(%x: memref<?x?xf32> {loop.shape = #loop.shape<["B", "N"]>}, %out0: memref<?x?xf32> {loop.result = 0 : i64, loop.shape = #loop.shape<["B", "N"]>}, %out1: memref<?x?xf32> {loop.result = 1 : i64, loop.shape = #loop.shape<["B", "N"]>}) {
// CHECK-NEXT:    %t = loop.alloc ["B", "N"] : memref<?x?xf32>
// CHECK-NEXT:    loop.launch @softmax_rows(%x, %t) : (memref<?x?xf32>, memref<?x?xf32>)
// CHECK-NEXT:    %u = loop.view %t ["N", "B"] : memref<?x?xf32> -> memref<?x?xf32>
// CHECK-NEXT:    loop.launch @softmax_rows(%u, %out0) : (memref<?x?xf32>, memref<?x?xf32>)
// CHECK-NEXT:    loop.dealloc %t : memref<?x?xf32>
// CHECK-NEXT:    %s = loop.alloc [] : memref<f64>
// CHECK-NEXT:    %w = loop.alloc [8, "N"] : memref<8x?xi1>
// CHECK-NEXT:    %a = loop.alloc [8, "N"] : memref<8x?xf64>
// CHECK-NEXT:    loop.launch @everything(%a, %s, %w) : (memref<8x?xf64>, memref<f64>, memref<8x?xi1>)
// CHECK-NEXT:    loop.dealloc %s : memref<f64>
// CHECK-NEXT:    loop.dealloc %w : memref<8x?xi1>
// CHECK-NEXT:    loop.dealloc %a : memref<8x?xf64>
// CHECK-NEXT:    loop.copy %x, %out1 : memref<?x?xf32>, memref<?x?xf32>
// CHECK-NEXT:    func.return
// CHECK-NEXT:  }
// CHECK-LABEL: func.func @returns(%x: memref<4xf32> {loop.shape = #loop.shape<[4]>}) -> memref<4xf32> {
// CHECK-NEXT:    %y = loop.alloc [4] : memref<4xf32>
// CHECK-NEXT:    func.return %y : memref<4xf32>
// CHECK-NEXT:  }

// A row softmax (samples/softmax.tdsl) by hand: a kernel with parallel and reduction loops, loads
// and stores, sizes read from its buffers, a mapping on each loop.
loop.kernel @softmax_rows ins(%x: memref<?x?xf32>) outs(%y: memref<?x?xf32>) attributes {kind = "reduction"} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = loop.dim %x, 0 : memref<?x?xf32>
  %cols = loop.dim %x, 1 : memref<?x?xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.000000e+00 : f32
  loop.parallel %i = %c0 to %rows step %c1 map(prange) {
    %m = loop.reduce max %j = %c0 to %cols step %c1 init(%ninf) : f32 map(vector) {
      %v = loop.load %x[%i, %j] : memref<?x?xf32>
      loop.yield %v : f32
    }
    %s = loop.reduce add %j = %c0 to %cols step %c1 init(%zero) : f32 {
      %v = loop.load %x[%i, %j] : memref<?x?xf32>
      %d = arith.subf %v, %m : f32
      %e = math.exp %d : f32
      loop.yield %e : f32
    }
    loop.parallel %j = %c0 to %cols step %c1 map(vector) {
      %v = loop.load %x[%i, %j] : memref<?x?xf32>
      %d = arith.subf %v, %m : f32
      %e = math.exp %d : f32
      %r = arith.divf %e, %s : f32
      loop.store %r, %y[%i, %j] : memref<?x?xf32>
    }
  }
}

// Several results per reduction, every mapping, a scratch row, a rank-0 buffer,
// loop attributes, a tile loop with a non-unit step.
loop.kernel @everything ins(%a: memref<8x?xf64>) outs(%b: memref<f64>, %c: memref<8x?xi1>) attributes {tile_sizes = array<i64: 4>} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %n = loop.dim %a, 1 : memref<8x?xf64>
  %z = arith.constant 0.0 : f64
  %o = arith.constant 1.0 : f64
  %s, %p = loop.reduce add, mul %i = %c0 to %c8 step %c1 init(%z, %o) : f64, f64 map(prange) {
    %r = loop.reduce min %j = %c0 to %n step %c1 init(%o) : f64 map(serial) {
      %v = loop.load %a[%i, %j] : memref<8x?xf64>
      loop.yield %v : f64
    }
    loop.yield %r, %r : f64, f64
  }
  %sp = arith.addf %s, %p : f64
  loop.store %sp, %b[] : memref<f64>
  loop.for %k = %c0 to %c8 step %c1 map(serial) {
    %v = loop.load %a[%k, %c0] : memref<8x?xf64>
    %w = loop.load %b[] : memref<f64>
    %u = arith.addf %v, %w : f64
    loop.store %u, %b[] : memref<f64>
  }
  loop.for %k = %c0 to %c8 step %c1 {
  }
  loop.parallel %t = %c0 to %c8 step %c4 map(blocks) attributes {tile_size = 4 : i64} {
    %e = arith.addi %t, %c4 : index
    loop.parallel %i = %t to %e step %c1 map(threads) {
      %row = loop.scratch(%n) : memref<?xf64>
      loop.parallel %j = %c0 to %n step %c1 map(warps) {
        %v = loop.load %a[%i, %j] : memref<8x?xf64>
        loop.store %v, %row[%j] : memref<?xf64>
      }
      loop.parallel %j = %c0 to %n step %c1 {
        %v = loop.load %row[%j] : memref<?xf64>
        %q = arith.cmpf ogt, %v, %z : f64
        loop.store %q, %c[%i, %j] : memref<8x?xi1>
      }
    }
  }
}

// The host side: symbolic shapes on arguments, allocation, launches by symbol,
// a view, a copy, frees, results written into caller-provided buffers.
func.func @main(%x: memref<?x?xf32> {loop.shape = #loop.shape<["B", "N"]>}, %out0: memref<?x?xf32> {loop.result = 0 : i64, loop.shape = #loop.shape<["B", "N"]>}, %out1: memref<?x?xf32> {loop.result = 1 : i64, loop.shape = #loop.shape<["B", "N"]>}) {
  %t = loop.alloc ["B", "N"] : memref<?x?xf32>
  loop.launch @softmax_rows(%x, %t) : (memref<?x?xf32>, memref<?x?xf32>)
  %u = loop.view %t ["N", "B"] : memref<?x?xf32> -> memref<?x?xf32>
  loop.launch @softmax_rows(%u, %out0) : (memref<?x?xf32>, memref<?x?xf32>)
  loop.dealloc %t : memref<?x?xf32>
  %s = loop.alloc [] : memref<f64>
  %w = loop.alloc [8, "N"] : memref<8x?xi1>
  %a = loop.alloc [8, "N"] : memref<8x?xf64>
  loop.launch @everything(%a, %s, %w) : (memref<8x?xf64>, memref<f64>, memref<8x?xi1>)
  loop.dealloc %s : memref<f64>
  loop.dealloc %w : memref<8x?xi1>
  loop.dealloc %a : memref<8x?xf64>
  loop.copy %x, %out1 : memref<?x?xf32>, memref<?x?xf32>
  func.return
}

// Before memory planning a host function returns the buffers it allocated.
func.func @returns(%x: memref<4xf32> {loop.shape = #loop.shape<[4]>}) -> memref<4xf32> {
  %y = loop.alloc [4] : memref<4xf32>
  func.return %y : memref<4xf32>
}

// Library calls on the host: a strided view and a GEMM with the library's transpose flag.
// CHECK-LABEL: func.func @library_gemm
// CHECK:         %[[KT:.*]] = loop.permute %k [0, 2, 1] : memref<?x?x64xf32> -> memref<?x64x?xf32>
// CHECK:         loop.gemm %q, %[[KT]], %s : memref<?x?x64xf32>, memref<?x64x?xf32>, memref<?x?x?xf32>
// CHECK:         loop.gemm %q, %k, %s transpose_rhs : memref<?x?x64xf32>, memref<?x?x64xf32>, memref<?x?x?xf32>
func.func @library_gemm(%q: memref<?x?x64xf32>, %k: memref<?x?x64xf32>, %s: memref<?x?x?xf32>) {
  %kt = loop.permute %k [0, 2, 1] : memref<?x?x64xf32> -> memref<?x64x?xf32>
  loop.gemm %q, %kt, %s : memref<?x?x64xf32>, memref<?x64x?xf32>, memref<?x?x?xf32>
  loop.gemm %q, %k, %s transpose_rhs : memref<?x?x64xf32>, memref<?x?x64xf32>, memref<?x?x?xf32>
  func.return
}

// NumPy's float floor division and remainder, which arith does not have.
// CHECK-LABEL: func.func @float_division
// CHECK-NEXT:    %q = loop.floordivf %x, %y : f32
// CHECK-NEXT:    %r = loop.modf %a, %b : f64
func.func @float_division(%x: f32, %y: f32, %a: f64, %b: f64) {
  %q = loop.floordivf %x, %y : f32
  %r = loop.modf %a, %b : f64
  func.return
}

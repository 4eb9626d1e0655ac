// RUN: fusec-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: fusec-opt %s --split-input-file --verify-diagnostics | filecheck %s --check-prefix=NONE
// Every verifier rule of the loop dialect, one chunk each: the first line of each
// chunk's output is the verifier's message. Some cannot be spelled in the custom
// forms, so those ops are generic.
// NONE-NOT: {{^}}builtin.module

// CHECK: {{^}}kernel argument #0 must be a memref, got f32
loop.kernel @scalar_arg ins(%x: f32) outs() {
}

// -----

// CHECK: {{^}}"rows" is no GroupKind: expected one of "elementwise", "index_map", "injective", "reduction", "matmul", "conv", "attention", "opaque", "single"
loop.kernel @kind ins(%x: memref<?xf32>) outs() attributes {kind = "rows"} {
}

// -----

// CHECK: {{^}}num_inputs 3 out of range for 1 buffer arguments
"loop.kernel"() <{sym_name = "k", num_inputs = 3 : i64}> ({
^bb0(%x: memref<?xf32>):
}) : () -> ()

// -----

// CHECK: {{^}}dimension 2 out of range for rank 2
loop.kernel @dim_range ins(%x: memref<?x?xf32>) outs() {
  %n = loop.dim %x, 2 : memref<?x?xf32>
}

// -----

// CHECK: {{^}}loop.load takes 2 indices for memref<?x?xf32>, got 1
loop.kernel @load_rank ins(%x: memref<?x?xf32>) outs() {
  %c0 = arith.constant 0 : index
  %v = loop.load %x[%c0] : memref<?x?xf32>
}

// -----

// CHECK: {{^}}result type f64 is not the element type of memref<?xf32>
loop.kernel @load_type ins(%x: memref<?xf32>) outs() {
  %c0 = arith.constant 0 : index
  %v = "loop.load"(%x, %c0) : (memref<?xf32>, index) -> f64
}

// -----

// CHECK: {{^}}stored value of type f64 into memref<?xf32>
loop.kernel @store_type ins() outs(%y: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %v = arith.constant 1.0 : f64
  "loop.store"(%v, %y, %c0) : (f64, memref<?xf32>, index) -> ()
}

// -----

// CHECK: {{^}}loop.store takes 0 indices for memref<f32>, got 1
loop.kernel @store_rank ins() outs(%y: memref<f32>) {
  %c0 = arith.constant 0 : index
  %v = arith.constant 1.0 : f32
  loop.store %v, %y[%c0] : memref<f32>
}

// -----

// CHECK: {{^}}memref<?x?xf32> needs 2 size operands, got 1
loop.kernel @scratch_sizes ins(%x: memref<?xf32>) outs() {
  %n = loop.dim %x, 0 : memref<?xf32>
  %t = loop.scratch(%n) : memref<?x?xf32>
}

// -----

// CHECK: {{^}}loop.scratch must be inside a loop.kernel
func.func @scratch_outside(%n: index) {
  %t = loop.scratch(%n) : memref<?xf32>
  func.return
}

// -----

// CHECK: {{^}}loop.parallel has one index induction variable
loop.kernel @two_ivs ins() outs() {
  %c0 = arith.constant 0 : index
  "loop.parallel"(%c0, %c0, %c0) ({
  ^bb0(%i: index, %j: index):
  }) : (index, index, index) -> ()
}

// -----

// CHECK: {{^}}loop.reduce has 1 results but 2 combiners and 1 inits
loop.kernel @combiners ins() outs() {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %r = "loop.reduce"(%c0, %c0, %c0, %z) <{combiners = [#loop<combiner add>, #loop<combiner max>]}> ({
  ^bb0(%i: index):
    loop.yield %z : f32
  }) : (index, index, index, f32) -> f32
}

// -----

// CHECK: {{^}}init of type f64 for a result of type f32
loop.kernel @init_type ins() outs() {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f64
  %r = "loop.reduce"(%c0, %c0, %c0, %z) <{combiners = [#loop<combiner add>]}> ({
  ^bb0(%i: index):
    %v = arith.constant 0.0 : f32
    loop.yield %v : f32
  }) : (index, index, index, f64) -> f32
}

// -----

// CHECK: {{^}}loop.yield must give one value per result, of the result's type: ['f64'] vs ['f32']
loop.kernel @yield_type ins() outs() {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %r = loop.reduce add %i = %c0 to %c0 step %c0 init(%z) : f32 {
    %v = arith.constant 0.0 : f64
    loop.yield %v : f64
  }
}

// -----

// CHECK: {{^}}Operation arith.constant terminates block in single-block region but is not a terminator
loop.kernel @no_yield ins() outs() {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %r = loop.reduce add %i = %c0 to %c0 step %c0 init(%z) : f32 {
    %v = arith.constant 0.0 : f32
  }
}

// -----

// CHECK: {{^}}'loop.yield' expects parent op 'loop.reduce'
loop.kernel @stray_yield ins() outs() {
  %c0 = arith.constant 0 : index
  loop.parallel %i = %c0 to %c0 step %c0 {
    loop.yield
  }
}

// -----

// CHECK: {{^}}'@nope' does not name a loop.kernel of the module
func.func @unknown_kernel(%x: memref<?xf32>) {
  loop.launch @nope(%x) : (memref<?xf32>)
  func.return
}

// -----

// CHECK: {{^}}'@f' does not name a loop.kernel
func.func @f(%x: memref<?xf32>) {
  loop.launch @f(%x) : (memref<?xf32>)
  func.return
}

// -----

// CHECK: {{^}}launch of @k passes 2 buffers, the kernel takes 1
loop.kernel @k ins(%x: memref<?xf32>) outs() {
}
func.func @arity(%x: memref<4xf32>, %y: memref<4xf32>) {
  loop.launch @k(%x, %y) : (memref<4xf32>, memref<4xf32>)
  func.return
}

// -----

// CHECK: {{^}}launch of @k: buffer #0 is memref<4xf32>, the kernel takes memref<8xf32>
loop.kernel @k ins(%x: memref<8xf32>) outs() {
}
func.func @static_size(%x: memref<4xf32>) {
  loop.launch @k(%x) : (memref<4xf32>)
  func.return
}

// -----

// CHECK: {{^}}loop.alloc: shape ["N"] does not fit memref<4xf32> (static sizes must match, size names stand at '?')
func.func @alloc_shape() {
  %a = loop.alloc ["N"] : memref<4xf32>
  func.return
}

// -----

// CHECK: {{^}}loop.alloc: shape [4, 8] does not fit memref<4x?xf32> (static sizes must match, size names stand at '?')
func.func @alloc_static_at_dynamic() {
  %a = loop.alloc [4, 8] : memref<4x?xf32>
  func.return
}

// -----

// CHECK: {{^}}loop.view must keep the element type
func.func @view_type(%a: memref<?xf32>) {
  %v = loop.view %a ["N"] : memref<?xf32> -> memref<?xf64>
  func.return
}

// -----

// CHECK: {{^}}cannot copy memref<?xf32> into memref<?x?xf32>
func.func @copy_rank(%a: memref<?xf32>, %b: memref<?x?xf32>) {
  loop.copy %a, %b : memref<?xf32>, memref<?x?xf32>
  func.return
}

// -----

// CHECK: {{^}}loop.for runs in order: it cannot be mapped prange
loop.kernel @for_prange ins() outs() {
  %c0 = arith.constant 0 : index
  loop.for %k = %c0 to %c0 step %c0 map(prange) {
  }
}

// -----

// CHECK: {{^}}loop.permute: [0, 0] is not a permutation of 2 axes
func.func @permute_repeats(%a: memref<?x4xf32>) {
  %p = loop.permute %a [0, 0] : memref<?x4xf32> -> memref<?x4xf32>
  func.return
}

// -----

// CHECK: {{^}}loop.permute: memref<?x4xf32> permuted by [1, 0] is not memref<?x4xf32>
func.func @permute_shape(%a: memref<?x4xf32>) {
  %p = loop.permute %a [1, 0] : memref<?x4xf32> -> memref<?x4xf32>
  func.return
}

// -----

// CHECK: {{^}}loop.gemm operands and result must share one element type
func.func @gemm_types(%a: memref<?x4xf32>, %b: memref<4x4xf64>, %c: memref<?x4xf32>) {
  loop.gemm %a, %b, %c : memref<?x4xf32>, memref<4x4xf64>, memref<?x4xf32>
  func.return
}

// -----

// CHECK: {{^}}an index is an integer, not a bool
loop.kernel @check_index_bool ins(%x: memref<?xi1>) outs() {
  %c0 = arith.constant 0 : index
  %n = loop.dim %x, 0 : memref<?xi1>
  %b = loop.load %x[%c0] : memref<?xi1>
  %i = loop.check_index %b, %n "a bool" : i1
}

// -----

// CHECK: {{^}}loop.check_index must be inside a loop.kernel
func.func @check_index_outside(%i: i64, %n: index) -> index {
  %j = loop.check_index %i, %n "outside" : i64
  func.return %j : index
}

// -----

// CHECK: {{^}}loop.check_exponent must be inside a loop.kernel
func.func @check_exponent_outside(%e: i64) -> i64 {
  %k = loop.check_exponent %e "outside" : i64
  func.return %k : i64
}

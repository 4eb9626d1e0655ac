// RUN: not fusec-opt %s 2>&1 | filecheck %s
// Syntax the parser refuses, with its message.

// CHECK: unknown loop mapping 'gpu', expected one of ['serial', 'prange', 'vector', 'blocks', 'threads', 'warps']
loop.kernel @k ins(%x: memref<?xf32>) outs() {
  %c0 = arith.constant 0 : index
  loop.parallel %i = %c0 to %c0 step %c0 map(gpu) {
  }
}


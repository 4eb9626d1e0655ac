// RUN: not fusec-opt %s 2>&1 | filecheck %s
// CHECK: unknown combiner 'avg', expected one of ['add', 'mul', 'max', 'min']
loop.kernel @k ins(%x: memref<?xf32>) outs() {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %r = loop.reduce avg %i = %c0 to %c0 step %c0 init(%z) : f32 {
    loop.yield %z : f32
  }
}

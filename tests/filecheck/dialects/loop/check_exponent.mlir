// RUN: fusec-opt %s | fusec-opt | filecheck %s
// RUN: fusec-opt %s --print-op-generic | fusec-opt | filecheck %s
// RUN: fusec-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// loop.check_exponent: the exponent of an integer power, a negative one recorded as
// the run's error (NumPy refuses it) and replaced by 0.

// GENERIC: "loop.check_exponent"(%{{.*}}) <{what = "x ** y"}> : (i64) -> i64

// CHECK-LABEL: loop.kernel @power ins(%x: memref<?xi64>, %y: memref<?xi64>) outs(%z: memref<?xi64>) {
// CHECK:         %e = loop.load %y[%i] : memref<?xi64>
// CHECK-NEXT:    %k = loop.check_exponent %e "x ** y" : i64
// CHECK-NEXT:    %p = math.ipowi %b, %k : i64
loop.kernel @power ins(%x: memref<?xi64>, %y: memref<?xi64>) outs(%z: memref<?xi64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = loop.dim %x, 0 : memref<?xi64>
  loop.parallel %i = %c0 to %n step %c1 {
    %b = loop.load %x[%i] : memref<?xi64>
    %e = loop.load %y[%i] : memref<?xi64>
    %k = loop.check_exponent %e "x ** y" : i64
    %p = math.ipowi %b, %k : i64
    loop.store %p, %z[%i] : memref<?xi64>
  }
}

// RUN: fusec-opt %s | fusec-opt | filecheck %s
// RUN: fusec-opt %s --print-op-generic | fusec-opt | filecheck %s
// RUN: fusec-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// loop.check_index: an index read from data, wrapped when negative (unless
// no_wraparound) and kept in range, an out-of-range one recorded as the run's error.

// GENERIC: "loop.check_index"(%{{.*}}, %{{.*}}) <{what = "gather of table along axis 0"}> : (i32, index) -> index
// GENERIC: "loop.check_index"(%{{.*}}, %{{.*}}) <{what = "gather of table along axis 0", no_wraparound}> : (i64, index) -> index

// CHECK-LABEL: loop.kernel @embed ins(%table: memref<?x?xf32>, %ids: memref<?xi32>) outs(%y: memref<?x?xf32>) {
// CHECK:         %raw = loop.load %ids[%i] : memref<?xi32>
// CHECK-NEXT:    %row = loop.check_index %raw, %rows "gather of table along axis 0" : i32
// CHECK-NEXT:    loop.parallel %j = %c0 to %cols step %c1 {
// CHECK-NEXT:      %v = loop.load %table[%row, %j] : memref<?x?xf32>
loop.kernel @embed ins(%table: memref<?x?xf32>, %ids: memref<?xi32>) outs(%y: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = loop.dim %table, 0 : memref<?x?xf32>
  %cols = loop.dim %table, 1 : memref<?x?xf32>
  %n = loop.dim %ids, 0 : memref<?xi32>
  loop.parallel %i = %c0 to %n step %c1 {
    %raw = loop.load %ids[%i] : memref<?xi32>
    %row = loop.check_index %raw, %rows "gather of table along axis 0" : i32
    loop.parallel %j = %c0 to %cols step %c1 {
      %v = loop.load %table[%row, %j] : memref<?x?xf32>
      loop.store %v, %y[%i, %j] : memref<?x?xf32>
    }
  }
}

// CHECK-LABEL: loop.kernel @select ins(%table: memref<?x?xf32>, %ids: memref<?xi64>) outs(%y: memref<?x?xf32>) {
// CHECK:         %raw = loop.load %ids[%i] : memref<?xi64>
// CHECK-NEXT:    %row = loop.check_index %raw, %rows "gather of table along axis 0" no_wraparound : i64
loop.kernel @select ins(%table: memref<?x?xf32>, %ids: memref<?xi64>) outs(%y: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = loop.dim %table, 0 : memref<?x?xf32>
  %cols = loop.dim %table, 1 : memref<?x?xf32>
  %n = loop.dim %ids, 0 : memref<?xi64>
  loop.parallel %i = %c0 to %n step %c1 {
    %raw = loop.load %ids[%i] : memref<?xi64>
    %row = loop.check_index %raw, %rows "gather of table along axis 0" no_wraparound : i64
    loop.parallel %j = %c0 to %cols step %c1 {
      %v = loop.load %table[%row, %j] : memref<?x?xf32>
      loop.store %v, %y[%i, %j] : memref<?x?xf32>
    }
  }
}

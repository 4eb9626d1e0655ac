// RUN: fusec-opt %s -p 'tile{sizes=32,64}' | filecheck %s
// RUN: fusec-opt %s -p 'tile{sizes=0,16}' | filecheck %s --check-prefix=SECOND
// RUN: fusec-opt %s -p 'tile{sizes=32,64},map-cpu' | filecheck %s --check-prefix=MAPPED
// tile splits the perfectly nested outer parallel loops into tile loops stepping by
// the tile size and point loops over one tile, cut at the bound with minsi.

// CHECK-LABEL: loop.kernel @transpose ins(%x: memref<?x?xf32>) outs(%y: memref<?x?xf32>) attributes {tile_sizes = array<i64: 32, 64>} {
// CHECK:         %[[M:.*]] = loop.dim %x, 0 : memref<?x?xf32>
// CHECK:         %[[N:.*]] = loop.dim %x, 1 : memref<?x?xf32>
// CHECK:         %[[T32:.*]] = arith.constant 32 : index
// CHECK-NEXT:    %[[T64:.*]] = arith.constant 64 : index
// CHECK-NEXT:    loop.parallel %[[IT:.*]] = %[[C0:.*]] to %[[M]] step %[[T32]] attributes {tile_size = 32 : i64} {
// CHECK-NEXT:      loop.parallel %[[JT:.*]] = %[[C0]] to %[[N]] step %[[T64]] attributes {tile_size = 64 : i64} {
// CHECK-NEXT:        %[[IE:.*]] = arith.addi %[[IT]], %[[T32]] : index
// CHECK-NEXT:        %[[IH:.*]] = arith.minsi %[[IE]], %[[M]] : index
// CHECK-NEXT:        %[[JE:.*]] = arith.addi %[[JT]], %[[T64]] : index
// CHECK-NEXT:        %[[JH:.*]] = arith.minsi %[[JE]], %[[N]] : index
// CHECK-NEXT:        loop.parallel %[[I:.*]] = %[[IT]] to %[[IH]] step %{{.*}} {
// CHECK-NEXT:          loop.parallel %[[J:.*]] = %[[JT]] to %[[JH]] step %{{.*}} {
// CHECK-NEXT:            %[[V:.*]] = loop.load %x[%[[I]], %[[J]]] : memref<?x?xf32>
// CHECK-NEXT:            loop.store %[[V]], %y[%[[J]], %[[I]]] : memref<?x?xf32>

// A zero leaves a loop untiled; tile loops always go outside the point loops.
// SECOND-LABEL: loop.kernel @transpose
// SECOND:         loop.parallel %[[JT:.*]] = %{{.*}} to %[[N:.*]] step %{{.*}} attributes {tile_size = 16 : i64} {
// SECOND-NEXT:      %{{.*}} = arith.addi
// SECOND-NEXT:      %[[JH:.*]] = arith.minsi
// SECOND-NEXT:      loop.parallel %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// SECOND-NEXT:        loop.parallel %[[J:.*]] = %[[JT]] to %[[JH]] step %{{.*}} {

// Mapped for the CPU: the outer tile loop is the prange, the point loops run inside.
// MAPPED-LABEL: loop.kernel @transpose
// MAPPED:         loop.parallel {{.*}} map(prange) attributes {tile_size = 32 : i64} {
// MAPPED-NEXT:      loop.parallel {{.*}} map(serial) attributes {tile_size = 64 : i64} {
// MAPPED:             loop.parallel {{.*}} map(serial) {
// MAPPED-NEXT:          loop.parallel {{.*}} map(vector) {
loop.kernel @transpose ins(%x: memref<?x?xf32>) outs(%y: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = loop.dim %x, 0 : memref<?x?xf32>
  %n = loop.dim %x, 1 : memref<?x?xf32>
  loop.parallel %i = %c0 to %m step %c1 {
    loop.parallel %j = %c0 to %n step %c1 {
      %v = loop.load %x[%i, %j] : memref<?x?xf32>
      loop.store %v, %y[%j, %i] : memref<?x?xf32>
    }
  }
}

// Only the perfectly nested band is tiled: a row loop holding reductions is tiled
// alone, and a loop whose extent fits in one tile is left alone.
// CHECK-LABEL: loop.kernel @rows
// CHECK:         loop.parallel %[[IT:.*]] = %{{.*}} to %{{.*}} step %{{.*}} attributes {tile_size = 32 : i64} {
// CHECK-NEXT:      %{{.*}} = arith.addi
// CHECK-NEXT:      %[[IH:.*]] = arith.minsi
// CHECK-NEXT:      loop.parallel %[[I:.*]] = %[[IT]] to %[[IH]] step %{{.*}} {
// CHECK-NEXT:        %{{.*}} = loop.reduce add
// CHECK:             loop.parallel %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-LABEL: loop.kernel @small
// CHECK-NOT:     tile_size =
loop.kernel @rows ins(%x: memref<?x?xf32>) outs(%y: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  %m = loop.dim %x, 0 : memref<?x?xf32>
  %n = loop.dim %x, 1 : memref<?x?xf32>
  loop.parallel %i = %c0 to %m step %c1 {
    %s = loop.reduce add %k = %c0 to %n step %c1 init(%z) : f32 {
      %v = loop.load %x[%i, %k] : memref<?x?xf32>
      loop.yield %v : f32
    }
    loop.parallel %j = %c0 to %n step %c1 {
      %v = loop.load %x[%i, %j] : memref<?x?xf32>
      %r = arith.divf %v, %s : f32
      loop.store %r, %y[%i, %j] : memref<?x?xf32>
    }
  }
}
loop.kernel @small ins(%x: memref<16xf32>) outs(%y: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  loop.parallel %i = %c0 to %c16 step %c1 {
    %v = loop.load %x[%i] : memref<16xf32>
    loop.store %v, %y[%i] : memref<16xf32>
  }
}

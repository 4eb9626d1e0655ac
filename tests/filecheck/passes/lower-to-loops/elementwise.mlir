// RUN: fusec-opt %s -p lower-to-loops | filecheck %s
// RUN: fusec-opt %s -p lower-to-loops | fusec-opt | filecheck %s
// Elementwise groups: one parallel nest over the output, every producer computed
// inside it, broadcasts as dropped or zeroed indices, integer powers as multiplies.

!t = tensor<?x16xf32, ["N", ""]>
!v = tensor<16xf32>

// CHECK-LABEL: loop.kernel @k0_bias_gelu ins(%a: memref<?x16xf32>, %bias: memref<16xf32>) outs(%g: memref<?x16xf32>) attributes {kind = "elementwise"} {
// CHECK:         %[[N:.*]] = loop.dim %a, 0 : memref<?x16xf32>
// CHECK:         loop.parallel %[[I:.*]] = %{{.*}} to %[[N]] step %{{.*}} {
// CHECK-NEXT:      loop.parallel %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-NEXT:        %[[X:.*]] = loop.load %a[%[[I]], %[[J]]] : memref<?x16xf32>
// CHECK-NEXT:        %[[B:.*]] = loop.load %bias[%[[J]]] : memref<16xf32>
// CHECK-NEXT:        %[[S:.*]] = arith.addf %[[X]], %[[B]] : f32
// CHECK-NEXT:        %[[S2:.*]] = arith.mulf %[[S]], %[[S]] : f32
// CHECK-NEXT:        %[[S3:.*]] = arith.mulf %[[S2]], %[[S]] : f32
// CHECK:             math.tanh
// CHECK:             loop.store %{{.*}}, %g[%[[I]], %[[J]]] : memref<?x16xf32>
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:  }
// CHECK-NOT:   loop.scratch
// CHECK-LABEL: func.func @bias_gelu(%x: memref<?x16xf32> {loop.shape = #loop.shape<["N", 16]>}, %b: memref<16xf32> {loop.shape = #loop.shape<[16]>}) -> memref<?x16xf32> {
// CHECK-NEXT:    %y = loop.alloc ["N", 16] : memref<?x16xf32>
// CHECK-NEXT:    loop.launch @k0_bias_gelu(%x, %b, %y) : (memref<?x16xf32>, memref<16xf32>, memref<?x16xf32>)
// CHECK-NEXT:    func.return %y : memref<?x16xf32>
// CHECK-NEXT:  }
func.func @bias_gelu(%x: !t, %b: !v) -> !t {
  %y = graph.fusion_group(%x, %b) {kernel = "k0_bias_gelu", kind = "elementwise"} : (!t, !v) -> !t {
  ^bb0(%a: !t, %bias: !v):
    %bb = graph.broadcast %bias : !v -> !t
    %s = graph.add %a, %bb : !t
    %g = graph.gelu %s : !t
    graph.yield %g : !t
  }
  func.return %y : !t
}

// x ** 3 and x ** -2 are multiplies (and a division), x ** 0.5 a square root;
// x ** y stays a power. A rank-0 constant is an arith.constant hoisted out of the loops.
// CHECK-LABEL: loop.kernel @k0_pow
// CHECK-DAG:     %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK:         loop.parallel
// CHECK:           %[[X:.*]] = loop.load %a[%{{.*}}] : memref<8xf32>
// CHECK-NEXT:      %[[X2:.*]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK-NEXT:      %[[X3:.*]] = arith.mulf %[[X]], %[[X2]] : f32
// CHECK-NEXT:      %[[INV:.*]] = arith.divf %{{.*}}, %[[X2]] : f32
// CHECK-NEXT:      %{{.*}} = arith.addf %[[X3]], %[[INV]] : f32
// CHECK-NEXT:      %[[SQ:.*]] = math.sqrt %[[X]] : f32
// CHECK:           %[[P:.*]] = math.powf %[[X]], %{{.*}} : f32
// CHECK:           %[[H:.*]] = arith.mulf %{{.*}}, %[[HALF]] : f32
// CHECK-NEXT:      loop.store %[[H]], %s4[%{{.*}}] : memref<8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:  }
func.func @pow(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %r = graph.fusion_group(%x, %y) {kernel = "k0_pow", kind = "elementwise"} : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%a: tensor<8xf32>, %b: tensor<8xf32>):
    %c3 = graph.constant dense<3.0> : tensor<f32>
    %b3 = graph.broadcast %c3 : tensor<f32> -> tensor<8xf32>
    %cm2 = graph.constant dense<-2.0> : tensor<f32>
    %bm2 = graph.broadcast %cm2 : tensor<f32> -> tensor<8xf32>
    %ch = graph.constant dense<0.5> : tensor<f32>
    %bh = graph.broadcast %ch : tensor<f32> -> tensor<8xf32>
    %p3 = graph.pow %a, %b3 : tensor<8xf32>
    %pm2 = graph.pow %a, %bm2 : tensor<8xf32>
    %ph = graph.pow %a, %bh : tensor<8xf32>
    %pb = graph.pow %a, %b : tensor<8xf32>
    %s1 = graph.add %p3, %pm2 : tensor<8xf32>
    %s2 = graph.add %s1, %ph : tensor<8xf32>
    %s3 = graph.add %s2, %pb : tensor<8xf32>
    %s4 = graph.mul %s3, %bh : tensor<8xf32>
    graph.yield %s4 : tensor<8xf32>
  }
  func.return %r : tensor<8xf32>
}

// Comparisons, select and casts are scalar arith ops; bool buffers are i1.
// CHECK-LABEL: loop.kernel @k0_where
// CHECK:         %[[C:.*]] = arith.cmpf olt, %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:    %[[W:.*]] = arith.select %[[C]], %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:    %[[I:.*]] = arith.fptosi %[[W]] : f32 to i32
// CHECK-NEXT:    %[[F:.*]] = arith.uitofp %[[C]] : i1 to f64
// CHECK-NEXT:    loop.store %[[I]], %{{.*}}[%{{.*}}] : memref<?xi32>
// CHECK-NEXT:    loop.store %[[F]], %{{.*}}[%{{.*}}] : memref<?xf64>
!n = tensor<?xf32, ["N"]>
func.func @where(%x: !n, %y: !n) -> (tensor<?xi32, ["N"]>, tensor<?xf64, ["N"]>) {
  %r:2 = graph.fusion_group(%x, %y) {kernel = "k0_where", kind = "elementwise"} : (!n, !n) -> (tensor<?xi32, ["N"]>, tensor<?xf64, ["N"]>) {
  ^bb0(%a: !n, %b: !n):
    %c = graph.cmp lt %a, %b : !n -> tensor<?xi1, ["N"]>
    %w = graph.select %c, %a, %b : tensor<?xi1, ["N"]>, !n
    %i = graph.cast %w : !n -> tensor<?xi32, ["N"]>
    %f = graph.cast %c : tensor<?xi1, ["N"]> -> tensor<?xf64, ["N"]>
    graph.yield %i, %f : tensor<?xi32, ["N"]>, tensor<?xf64, ["N"]>
  }
  func.return %r#0, %r#1 : tensor<?xi32, ["N"]>, tensor<?xf64, ["N"]>
}

// Graph ops outside any group (unfused input) become one kernel each.
// CHECK-LABEL: loop.kernel @k{{[0-9]+}} ins(%{{.*}}: memref<4xf32>) outs(%{{.*}}: memref<4xf32>) attributes {kind = "single"} {
// CHECK:         math.exp
// CHECK-LABEL: func.func @unfused(
// CHECK-NEXT:    %[[E:.*]] = loop.alloc [4] : memref<4xf32>
// CHECK-NEXT:    loop.launch @k{{[0-9]+}}(%x, %[[E]])
func.func @unfused(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = graph.exp %x : tensor<4xf32>
  func.return %e : tensor<4xf32>
}

// An op outside any group that reads one value twice (`y * y` of a scalar the fuse pass
// left free) passes it to its kernel once, as the kernel takes it (issue 46).
// CHECK-LABEL: loop.kernel @k{{[0-9]+}} ins(%{{.*}}: memref<i64>) outs(%{{.*}}: memref<i64>)
// CHECK:         arith.muli
// CHECK-LABEL: func.func @unfused_square(
// CHECK-NEXT:    %[[S:.*]] = loop.alloc [] : memref<i64>
// CHECK-NEXT:    loop.launch @k{{[0-9]+}}(%y, %[[S]]) : (memref<i64>, memref<i64>)
func.func @unfused_square(%y: tensor<i64>) -> tensor<i64> {
  %s = graph.mul %y, %y : tensor<i64>
  func.return %s : tensor<i64>
}

// RUN: fusec-opt %s -p lower-to-loops | filecheck %s
// RUN: fusec-opt %s -p lower-to-loops | fusec-opt | filecheck %s
// Integer powers: a small constant exponent is multiplies, a large one a math.ipowi, and
// an exponent that may be negative passes through loop.check_exponent first (NumPy
// refuses a negative one; the host raises what the kernel recorded).

// CHECK-LABEL: loop.kernel @k0_ipow
// CHECK:         %[[X:.*]] = loop.load %a[%{{.*}}] : memref<8xi32>
// CHECK-NEXT:    %[[X2:.*]] = arith.muli %[[X]], %[[X]] : i32
// CHECK-NEXT:    %{{.*}} = arith.muli %[[X]], %[[X2]] : i32
// CHECK-NEXT:    %{{.*}} = math.ipowi %[[X]], %{{.*}} : i32
// CHECK:         %[[Y:.*]] = loop.load %b[%{{.*}}] : memref<8xi32>
// CHECK-NEXT:    %[[K:.*]] = loop.check_exponent %[[Y]] "a ** b" : i32
// CHECK-NEXT:    %{{.*}} = math.ipowi %[[X]], %[[K]] : i32
// CHECK-NOT:     loop.check_exponent
func.func @ipow(%x: tensor<8xi32>, %y: tensor<8xi32>) -> tensor<8xi32> {
  %r = graph.fusion_group(%x, %y) {kernel = "k0_ipow", kind = "elementwise"} : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32> {
  ^bb0(%a: tensor<8xi32>, %b: tensor<8xi32>):
    %c3 = graph.constant dense<3> : tensor<i32>
    %b3 = graph.broadcast %c3 : tensor<i32> -> tensor<8xi32>
    %c100 = graph.constant dense<100> : tensor<i32>
    %b100 = graph.broadcast %c100 : tensor<i32> -> tensor<8xi32>
    %p3 = graph.pow %a, %b3 : tensor<8xi32>
    %p100 = graph.pow %a, %b100 : tensor<8xi32>
    %pb = graph.pow %a, %b : tensor<8xi32>
    %s1 = graph.add %p3, %p100 : tensor<8xi32>
    %s2 = graph.add %s1, %pb : tensor<8xi32>
    graph.yield %s2 : tensor<8xi32>
  }
  func.return %r : tensor<8xi32>
}

// Constant powers: small integers become multiplies, 0.5 sqrt, -1 a reciprocal.
// RUN: fusec-opt %s -p canonicalize | filecheck %s

// CHECK-LABEL: func.func @square(
// CHECK-NEXT:    %[[Y:.*]] = graph.mul %x, %x : tensor<?xf32, ["N"]>
// CHECK-NEXT:    func.return %[[Y]]
func.func @square(%x: tensor<?xf32, ["N"]>) -> tensor<?xf32, ["N"]> {
  %c = graph.constant dense<2.0> : tensor<f32>
  %b = graph.broadcast %c : tensor<f32> -> tensor<?xf32, ["N"]>
  %y = graph.pow %x, %b : tensor<?xf32, ["N"]>
  func.return %y : tensor<?xf32, ["N"]>
}

// CHECK-LABEL: func.func @cube(
// CHECK-NEXT:    %[[X2:.*]] = graph.mul %x, %x : tensor<8xf32>
// CHECK-NEXT:    %[[X3:.*]] = graph.mul %[[X2]], %x : tensor<8xf32>
// CHECK-NEXT:    func.return %[[X3]]
func.func @cube(%x: tensor<8xf32>) -> tensor<8xf32> {
  %c = graph.constant dense<3.0> : tensor<f32>
  %b = graph.broadcast %c : tensor<f32> -> tensor<8xf32>
  %y = graph.pow %x, %b : tensor<8xf32>
  func.return %y : tensor<8xf32>
}

// x**4 = (x*x)*(x*x), on an integer tensor too
// CHECK-LABEL: func.func @fourth(
// CHECK-NEXT:    %[[X2:.*]] = graph.mul %x, %x : tensor<8xi32>
// CHECK-NEXT:    %[[X4:.*]] = graph.mul %[[X2]], %[[X2]] : tensor<8xi32>
// CHECK-NEXT:    func.return %[[X4]]
func.func @fourth(%x: tensor<8xi32>) -> tensor<8xi32> {
  %c = graph.constant dense<4> : tensor<i32>
  %b = graph.broadcast %c : tensor<i32> -> tensor<8xi32>
  %y = graph.pow %x, %b : tensor<8xi32>
  func.return %y : tensor<8xi32>
}

// CHECK-LABEL: func.func @root(
// CHECK-NEXT:    %[[Y:.*]] = graph.sqrt %x : tensor<8xf32>
// CHECK-NEXT:    func.return %[[Y]]
func.func @root(%x: tensor<8xf32>) -> tensor<8xf32> {
  %c = graph.constant dense<0.5> : tensor<f32>
  %b = graph.broadcast %c : tensor<f32> -> tensor<8xf32>
  %y = graph.pow %x, %b : tensor<8xf32>
  func.return %y : tensor<8xf32>
}

// CHECK-LABEL: func.func @reciprocal(
// CHECK-NEXT:    %[[C:.*]] = graph.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[ONE:.*]] = graph.broadcast %[[C]] : tensor<f32> -> tensor<8xf32>
// CHECK-NEXT:    %[[Y:.*]] = graph.div %[[ONE]], %x : tensor<8xf32>
// CHECK-NEXT:    func.return %[[Y]]
func.func @reciprocal(%x: tensor<8xf32>) -> tensor<8xf32> {
  %c = graph.constant dense<-1.0> : tensor<f32>
  %b = graph.broadcast %c : tensor<f32> -> tensor<8xf32>
  %y = graph.pow %x, %b : tensor<8xf32>
  func.return %y : tensor<8xf32>
}

// NOT: x**2.5 and x**y stay pow; an integer x**-1 is not a division
// CHECK-LABEL: func.func @stays(
// CHECK-NEXT:    graph.constant dense<2.500000e+00>
// CHECK-NEXT:    %[[B:.*]] = graph.broadcast
// CHECK-NEXT:    %[[A:.*]] = graph.pow %x, %[[B]] : tensor<8xf32>
// CHECK-NEXT:    %[[P:.*]] = graph.pow %[[A]], %y : tensor<8xf32>
// CHECK-NEXT:    graph.constant dense<-1> : tensor<i32>
// CHECK-NEXT:    %[[M:.*]] = graph.broadcast
// CHECK-NEXT:    %[[Q:.*]] = graph.pow %i, %[[M]] : tensor<8xi32>
// CHECK-NEXT:    func.return %[[P]], %[[Q]]
func.func @stays(%x: tensor<8xf32>, %y: tensor<8xf32>, %i: tensor<8xi32>) -> (tensor<8xf32>, tensor<8xi32>) {
  %c = graph.constant dense<2.5> : tensor<f32>
  %b = graph.broadcast %c : tensor<f32> -> tensor<8xf32>
  %a = graph.pow %x, %b : tensor<8xf32>
  %p = graph.pow %a, %y : tensor<8xf32>
  %m1 = graph.constant dense<-1> : tensor<i32>
  %m = graph.broadcast %m1 : tensor<i32> -> tensor<8xi32>
  %q = graph.pow %i, %m : tensor<8xi32>
  func.return %p, %q : tensor<8xf32>, tensor<8xi32>
}

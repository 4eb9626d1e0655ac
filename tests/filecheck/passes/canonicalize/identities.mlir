// The algebraic identities of graph ops under the upstream canonicalize pass.
// "1" and "0" are splats: a rank-0 constant broadcast to the shape.
// RUN: fusec-opt %s -p canonicalize | filecheck %s

// x*1, 1*x, x+0, 0+x, x-0, x/1, x**1 and -(-x) are x
// CHECK-LABEL: func.func @neutral(
// CHECK-NEXT:    func.return %x : tensor<?x4xf32, ["N", ""]>
func.func @neutral(%x: tensor<?x4xf32, ["N", ""]>) -> tensor<?x4xf32, ["N", ""]> {
  %c1 = graph.constant dense<1.0> : tensor<f32>
  %one = graph.broadcast %c1 : tensor<f32> -> tensor<?x4xf32, ["N", ""]>
  %c0 = graph.constant dense<0.0> : tensor<f32>
  %zero = graph.broadcast %c0 : tensor<f32> -> tensor<?x4xf32, ["N", ""]>
  %a = graph.mul %x, %one : tensor<?x4xf32, ["N", ""]>
  %b = graph.mul %one, %a : tensor<?x4xf32, ["N", ""]>
  %c = graph.add %b, %zero : tensor<?x4xf32, ["N", ""]>
  %d = graph.add %zero, %c : tensor<?x4xf32, ["N", ""]>
  %e = graph.sub %d, %zero : tensor<?x4xf32, ["N", ""]>
  %f = graph.div %e, %one : tensor<?x4xf32, ["N", ""]>
  %g = graph.pow %f, %one : tensor<?x4xf32, ["N", ""]>
  %h = graph.neg %g : tensor<?x4xf32, ["N", ""]>
  %i = graph.neg %h : tensor<?x4xf32, ["N", ""]>
  func.return %i : tensor<?x4xf32, ["N", ""]>
}

// NOT: x*2, 0-x, 1/x, x-x and a single negation stay
// CHECK-LABEL: func.func @not_neutral(
// CHECK-NEXT:    %[[C2:.*]] = graph.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[TWO:.*]] = graph.broadcast %[[C2]]
// CHECK-NEXT:    %[[C0:.*]] = graph.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[ZERO:.*]] = graph.broadcast %[[C0]]
// CHECK-NEXT:    %[[C1:.*]] = graph.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[ONE:.*]] = graph.broadcast %[[C1]]
// CHECK-NEXT:    %[[A:.*]] = graph.mul %x, %[[TWO]]
// CHECK-NEXT:    %[[B:.*]] = graph.sub %[[ZERO]], %[[A]]
// CHECK-NEXT:    %[[C:.*]] = graph.div %[[ONE]], %[[B]]
// CHECK-NEXT:    %[[D:.*]] = graph.sub %[[C]], %[[C]]
// CHECK-NEXT:    %[[E:.*]] = graph.neg %[[D]]
// CHECK-NEXT:    func.return %[[E]]
func.func @not_neutral(%x: tensor<8xf32>) -> tensor<8xf32> {
  %c2 = graph.constant dense<2.0> : tensor<f32>
  %two = graph.broadcast %c2 : tensor<f32> -> tensor<8xf32>
  %c0 = graph.constant dense<0.0> : tensor<f32>
  %zero = graph.broadcast %c0 : tensor<f32> -> tensor<8xf32>
  %c1 = graph.constant dense<1.0> : tensor<f32>
  %one = graph.broadcast %c1 : tensor<f32> -> tensor<8xf32>
  %a = graph.mul %x, %two : tensor<8xf32>
  %b = graph.sub %zero, %a : tensor<8xf32>
  %c = graph.div %one, %b : tensor<8xf32>
  %d = graph.sub %c, %c : tensor<8xf32>
  %e = graph.neg %d : tensor<8xf32>
  func.return %e : tensor<8xf32>
}

// select on a splat condition is the chosen operand
// CHECK-LABEL: func.func @select_splat(
// CHECK-NEXT:    func.return %y : tensor<4xf32>
func.func @select_splat(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %f = graph.constant dense<false> : tensor<i1>
  %fb = graph.broadcast %f : tensor<i1> -> tensor<4xi1>
  %r = graph.select %fb, %x, %y : tensor<4xi1>, tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// a broadcast, reshape or cast to the same type is its input
// CHECK-LABEL: func.func @same_type(
// CHECK-NEXT:    func.return %x : tensor<?x4xf32, ["N", ""]>
func.func @same_type(%x: tensor<?x4xf32, ["N", ""]>) -> tensor<?x4xf32, ["N", ""]> {
  %a = graph.broadcast %x : tensor<?x4xf32, ["N", ""]> -> tensor<?x4xf32, ["N", ""]>
  %b = graph.reshape %a : tensor<?x4xf32, ["N", ""]> -> tensor<?x4xf32, ["N", ""]>
  %c = graph.cast %b : tensor<?x4xf32, ["N", ""]> -> tensor<?x4xf32, ["N", ""]>
  func.return %c : tensor<?x4xf32, ["N", ""]>
}

// NOT: a cast to another type stays, and so does a cast back
// CHECK-LABEL: func.func @cast_round_trip(
// CHECK-NEXT:    %[[A:.*]] = graph.cast %x : tensor<4xf32> -> tensor<4xi32>
// CHECK-NEXT:    %[[B:.*]] = graph.cast %[[A]] : tensor<4xi32> -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[B]]
func.func @cast_round_trip(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = graph.cast %x : tensor<4xf32> -> tensor<4xi32>
  %b = graph.cast %a : tensor<4xi32> -> tensor<4xf32>
  func.return %b : tensor<4xf32>
}

// concat of one operand and pad by zero widths are their input; a real pad stays
// CHECK-LABEL: func.func @concat_pad_identities(
// CHECK-NEXT:    %[[P:.*]] = graph.pad %x low = [0, 1] high = [0, 0] value = 1.000000e+00 : tensor<?x4xf32, ["N", ""]> -> tensor<?x5xf32, ["N", ""]>
// CHECK-NEXT:    func.return %x, %x, %[[P]] :
func.func @concat_pad_identities(%x: tensor<?x4xf32, ["N", ""]>) -> (tensor<?x4xf32, ["N", ""]>, tensor<?x4xf32, ["N", ""]>, tensor<?x5xf32, ["N", ""]>) {
  %c = graph.concat %x axis = 1 : tensor<?x4xf32, ["N", ""]> -> tensor<?x4xf32, ["N", ""]>
  %z = graph.pad %c low = [0, 0] high = [0, 0] value = 1.000000e+00 : tensor<?x4xf32, ["N", ""]> -> tensor<?x4xf32, ["N", ""]>
  %p = graph.pad %x low = [0, 1] high = [0, 0] value = 1.000000e+00 : tensor<?x4xf32, ["N", ""]> -> tensor<?x5xf32, ["N", ""]>
  func.return %c, %z, %p : tensor<?x4xf32, ["N", ""]>, tensor<?x4xf32, ["N", ""]>, tensor<?x5xf32, ["N", ""]>
}

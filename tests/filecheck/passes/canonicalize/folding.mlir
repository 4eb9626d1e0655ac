// Constant folding: splats stay rank-0 constants broadcast to the (symbolic) shape,
// constant arrays fold to one constant, static sizes are constants.
// RUN: fusec-opt %s -p canonicalize | filecheck %s

// (1.5 * 2) + exp(0) through broadcasts = 4, still a broadcast of a rank-0 constant
// CHECK-LABEL: func.func @splats(
// CHECK-NEXT:    %[[C:.*]] = graph.constant dense<4.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[B:.*]] = graph.broadcast %[[C]] : tensor<f32> -> tensor<?x4xf32, ["N", ""]>
// CHECK-NEXT:    %[[Y:.*]] = graph.mul %x, %[[B]] : tensor<?x4xf32, ["N", ""]>
// CHECK-NEXT:    func.return %[[Y]]
func.func @splats(%x: tensor<?x4xf32, ["N", ""]>) -> tensor<?x4xf32, ["N", ""]> {
  %a = graph.constant dense<1.5> : tensor<f32>
  %ab = graph.broadcast %a : tensor<f32> -> tensor<?x4xf32, ["N", ""]>
  %b = graph.constant dense<2.0> : tensor<f32>
  %bb = graph.broadcast %b : tensor<f32> -> tensor<?x4xf32, ["N", ""]>
  %z = graph.constant dense<0.0> : tensor<f32>
  %e = graph.exp %z : tensor<f32>
  %eb = graph.broadcast %e : tensor<f32> -> tensor<?x4xf32, ["N", ""]>
  %p = graph.mul %ab, %bb : tensor<?x4xf32, ["N", ""]>
  %s = graph.add %p, %eb : tensor<?x4xf32, ["N", ""]>
  %y = graph.mul %x, %s : tensor<?x4xf32, ["N", ""]>
  func.return %y : tensor<?x4xf32, ["N", ""]>
}

// a transposed or reshaped splat is the splat; compares fold to bools
// CHECK-LABEL: func.func @splat_layout(
// CHECK-NEXT:    %[[T:.*]] = graph.constant dense<true> : tensor<i1>
// CHECK-NEXT:    %[[TB:.*]] = graph.broadcast %[[T]] : tensor<i1> -> tensor<4x?xi1, ["", "N"]>
// CHECK-NEXT:    func.return %[[TB]]
func.func @splat_layout(%x: tensor<?x4xf32, ["N", ""]>) -> tensor<4x?xi1, ["", "N"]> {
  %a = graph.constant dense<1.5> : tensor<f32>
  %ab = graph.broadcast %a : tensor<f32> -> tensor<?x4xf32, ["N", ""]>
  %t = graph.transpose %ab perm = [1, 0] : tensor<?x4xf32, ["N", ""]> -> tensor<4x?xf32, ["", "N"]>
  %b = graph.constant dense<2.0> : tensor<f32>
  %bb = graph.broadcast %b : tensor<f32> -> tensor<4x?xf32, ["", "N"]>
  %c = graph.cmp lt %t, %bb : tensor<4x?xf32, ["", "N"]> -> tensor<4x?xi1, ["", "N"]>
  func.return %c : tensor<4x?xi1, ["", "N"]>
}

// CHECK-LABEL: func.func @arrays(
// CHECK-NEXT:    %[[C:.*]] = graph.constant dense<[5.000000e+00, 6.000000e+00, 7.000000e+00]> : tensor<3xf32>
// CHECK-NEXT:    %[[Y:.*]] = graph.add %x, %[[C]] : tensor<3xf32>
// CHECK-NEXT:    func.return %[[Y]]
func.func @arrays(%x: tensor<3xf32>) -> tensor<3xf32> {
  %a = graph.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %n = graph.dim_size %x[0] : tensor<3xf32> -> tensor<f32>
  %nb = graph.broadcast %n : tensor<f32> -> tensor<3xf32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %ob = graph.broadcast %one : tensor<f32> -> tensor<3xf32>
  %s = graph.add %a, %nb : tensor<3xf32>
  %t = graph.add %s, %ob : tensor<3xf32>
  %y = graph.add %x, %t : tensor<3xf32>
  func.return %y : tensor<3xf32>
}

// NOT: the size of a symbolic dimension is not a constant; it is read from the
// argument that binds the name
// CHECK-LABEL: func.func @symbolic_size(
// CHECK-NEXT:    %[[E:.*]] = graph.exp %x
// CHECK-NEXT:    %[[N:.*]] = graph.dim_size %x[0] : tensor<?xf32, ["N"]> -> tensor<f32>
// CHECK-NEXT:    func.return %[[E]], %[[N]]
func.func @symbolic_size(%x: tensor<?xf32, ["N"]>) -> (tensor<?xf32, ["N"]>, tensor<f32>) {
  %e = graph.exp %x : tensor<?xf32, ["N"]>
  %n = graph.dim_size %e[0] : tensor<?xf32, ["N"]> -> tensor<f32>
  func.return %e, %n : tensor<?xf32, ["N"]>, tensor<f32>
}

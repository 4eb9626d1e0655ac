// Chains of layout ops collapse into one.
// RUN: fusec-opt %s -p canonicalize | filecheck %s

// transpose(transpose(x, p), q) = transpose(x, p∘q)
// CHECK-LABEL: func.func @transposes(
// CHECK-NEXT:    %[[T:.*]] = graph.transpose %x perm = [2, 1, 0] : tensor<2x3x4xf32> -> tensor<4x3x2xf32>
// CHECK-NEXT:    func.return %[[T]]
func.func @transposes(%x: tensor<2x3x4xf32>) -> tensor<4x3x2xf32> {
  %a = graph.transpose %x perm = [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %b = graph.transpose %a perm = [0, 2, 1] : tensor<4x2x3xf32> -> tensor<4x3x2xf32>
  func.return %b : tensor<4x3x2xf32>
}

// the head split and its inverse cancel
// CHECK-LABEL: func.func @identity(
// CHECK-NEXT:    func.return %x
func.func @identity(%x: tensor<?x4x?x64xf32, ["B", "", "S", ""]>) -> tensor<?x4x?x64xf32, ["B", "", "S", ""]> {
  %a = graph.transpose %x perm = [0, 2, 1, 3] : tensor<?x4x?x64xf32, ["B", "", "S", ""]> -> tensor<?x?x4x64xf32, ["B", "S", "", ""]>
  %b = graph.reshape %a : tensor<?x?x4x64xf32, ["B", "S", "", ""]> -> tensor<?x?x256xf32, ["B", "S", ""]>
  %c = graph.reshape %b : tensor<?x?x256xf32, ["B", "S", ""]> -> tensor<?x?x4x64xf32, ["B", "S", "", ""]>
  %d = graph.transpose %c perm = [0, 2, 1, 3] : tensor<?x?x4x64xf32, ["B", "S", "", ""]> -> tensor<?x4x?x64xf32, ["B", "", "S", ""]>
  func.return %d : tensor<?x4x?x64xf32, ["B", "", "S", ""]>
}

// reshape(reshape(x)) = reshape(x); broadcast(broadcast(x)) = broadcast(x)
// CHECK-LABEL: func.func @reshapes_broadcasts(
// CHECK-NEXT:    %[[R:.*]] = graph.reshape %x : tensor<?x12xf32, ["N", ""]> -> tensor<?x2x6xf32, ["N", "", ""]>
// CHECK-NEXT:    %[[B:.*]] = graph.broadcast %[[R]] : tensor<?x2x6xf32, ["N", "", ""]> -> tensor<3x5x?x2x6xf32, ["", "", "N", "", ""]>
// CHECK-NEXT:    func.return %[[B]]
func.func @reshapes_broadcasts(%x: tensor<?x12xf32, ["N", ""]>) -> tensor<3x5x?x2x6xf32, ["", "", "N", "", ""]> {
  %a = graph.reshape %x : tensor<?x12xf32, ["N", ""]> -> tensor<?x3x4xf32, ["N", "", ""]>
  %b = graph.reshape %a : tensor<?x3x4xf32, ["N", "", ""]> -> tensor<?x2x6xf32, ["N", "", ""]>
  %c = graph.broadcast %b : tensor<?x2x6xf32, ["N", "", ""]> -> tensor<5x?x2x6xf32, ["", "N", "", ""]>
  %d = graph.broadcast %c : tensor<5x?x2x6xf32, ["", "N", "", ""]> -> tensor<3x5x?x2x6xf32, ["", "", "N", "", ""]>
  func.return %d : tensor<3x5x?x2x6xf32, ["", "", "N", "", ""]>
}

// NOT: a transpose of a reshape, and a reshape of a transpose, stay two ops
// CHECK-LABEL: func.func @mixed(
// CHECK-NEXT:    graph.reshape %x
// CHECK-NEXT:    graph.transpose
// CHECK-NEXT:    graph.reshape
// CHECK-NEXT:    func.return
func.func @mixed(%x: tensor<4x6xf32>) -> tensor<24xf32> {
  %a = graph.reshape %x : tensor<4x6xf32> -> tensor<4x2x3xf32>
  %b = graph.transpose %a perm = [0, 2, 1] : tensor<4x2x3xf32> -> tensor<4x3x2xf32>
  %c = graph.reshape %b : tensor<4x3x2xf32> -> tensor<24xf32>
  func.return %c : tensor<24xf32>
}

// broadcast(cast(x)) = cast(broadcast(x)): the cast runs in the broadcast's index space
// CHECK-LABEL: func.func @broadcast_of_cast(
// CHECK-NEXT:    %[[B:.*]] = graph.broadcast %g : tensor<4xbf16> -> tensor<?x4xbf16, ["N", ""]>
// CHECK-NEXT:    %[[C:.*]] = graph.cast %[[B]] : tensor<?x4xbf16, ["N", ""]> -> tensor<?x4xf32, ["N", ""]>
// CHECK-NEXT:    %[[Y:.*]] = graph.mul %x, %[[C]] : tensor<?x4xf32, ["N", ""]>
// CHECK-NEXT:    func.return %[[Y]]
func.func @broadcast_of_cast(%x: tensor<?x4xf32, ["N", ""]>, %g: tensor<4xbf16>) -> tensor<?x4xf32, ["N", ""]> {
  %c = graph.cast %g : tensor<4xbf16> -> tensor<4xf32>
  %b = graph.broadcast %c : tensor<4xf32> -> tensor<?x4xf32, ["N", ""]>
  %y = graph.mul %x, %b : tensor<?x4xf32, ["N", ""]>
  func.return %y : tensor<?x4xf32, ["N", ""]>
}

// a cast of a splat is folded instead: the broadcast stays outermost
// CHECK-LABEL: func.func @broadcast_of_cast_splat(
// CHECK-NEXT:    %[[C:.*]] = graph.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[B:.*]] = graph.broadcast %[[C]] : tensor<f32> -> tensor<?x4xf32, ["N", ""]>
// CHECK-NEXT:    %[[Y:.*]] = graph.mul %x, %[[B]] : tensor<?x4xf32, ["N", ""]>
// CHECK-NEXT:    func.return %[[Y]]
func.func @broadcast_of_cast_splat(%x: tensor<?x4xf32, ["N", ""]>) -> tensor<?x4xf32, ["N", ""]> {
  %k = graph.constant dense<2.0> : tensor<f16>
  %c = graph.cast %k : tensor<f16> -> tensor<f32>
  %b = graph.broadcast %c : tensor<f32> -> tensor<?x4xf32, ["N", ""]>
  %y = graph.mul %x, %b : tensor<?x4xf32, ["N", ""]>
  func.return %y : tensor<?x4xf32, ["N", ""]>
}

// RUN: fusec-opt %s | fusec-opt | filecheck %s
// RUN: fusec-opt %s --print-op-generic | fusec-opt | filecheck %s
// RUN: fusec-opt %s -p canonicalize | filecheck %s --check-prefix=CANON
// graph.slice: result index i along axis k reads input index starts[k] + i * steps[k];
// starts may be sizes (D/2) or sums with integers (N-1); a negative step reads backwards.

// CHECK-LABEL: func.func @slice_static(%x: tensor<8x6xf32>) -> (tensor<4x6xf32>, tensor<3x2xf32>) {
// CHECK-NEXT:    %a = graph.slice %x starts = ["7", "0"] steps = [-2, 1] : tensor<8x6xf32> -> tensor<4x6xf32>
// CHECK-NEXT:    %b = graph.slice %x starts = ["1", "4"] steps = [2, 1] : tensor<8x6xf32> -> tensor<3x2xf32>
func.func @slice_static(%x: tensor<8x6xf32>) -> (tensor<4x6xf32>, tensor<3x2xf32>) {
  %a = graph.slice %x starts = ["7", "0"] steps = [-2, 1] : tensor<8x6xf32> -> tensor<4x6xf32>
  %b = graph.slice %x starts = ["1", "4"] steps = [2, 1] : tensor<8x6xf32> -> tensor<3x2xf32>
  func.return %a, %b : tensor<4x6xf32>, tensor<3x2xf32>
}

// CHECK-LABEL: func.func @slice_symbolic(
// CHECK-NEXT:    %hi = graph.slice %x starts = ["0", "D/2"] steps = [1, 1] : tensor<?x?xf32, ["N", "D"]> -> tensor<?x?xf32, ["N", "D/2"]>
// CHECK-NEXT:    %rev = graph.slice %x starts = ["N-1", "0"] steps = [-1, 1] : tensor<?x?xf32, ["N", "D"]> -> tensor<?x?xf32, ["N", "D"]>
func.func @slice_symbolic(%x: tensor<?x?xf32, ["N", "D"]>) -> (tensor<?x?xf32, ["N", "D/2"]>, tensor<?x?xf32, ["N", "D"]>) {
  %hi = graph.slice %x starts = ["0", "D/2"] steps = [1, 1] : tensor<?x?xf32, ["N", "D"]> -> tensor<?x?xf32, ["N", "D/2"]>
  %rev = graph.slice %x starts = ["N-1", "0"] steps = [-1, 1] : tensor<?x?xf32, ["N", "D"]> -> tensor<?x?xf32, ["N", "D"]>
  func.return %hi, %rev : tensor<?x?xf32, ["N", "D/2"]>, tensor<?x?xf32, ["N", "D"]>
}

// A slice that reads every index in order is its input; a slice of a slice is one
// slice (flip twice is the identity, so it folds away too); a slice of a splat is a splat.
// CANON-LABEL: func.func @folds(
// CANON-SAME:    %[[X:[a-z0-9_]+]]: tensor<?x?xf32, ["N", "D"]>)
// CANON-NEXT:    %[[Q:.*]] = graph.slice %[[X]] starts = ["N-2", "D/4"] steps = [-1, 2] : tensor<?x?xf32, ["N", "D"]> -> tensor<?x?xf32, ["N/2", "D/4"]>
// CANON-NEXT:    %[[C:.*]] = graph.constant dense<2.000000e+00> : tensor<f32>
// CANON-NEXT:    %[[S:.*]] = graph.broadcast %[[C]] : tensor<f32> -> tensor<2x3xf32>
// CANON-NEXT:    func.return %[[X]], %[[X]], %[[Q]], %[[S]]
func.func @folds(%x: tensor<?x?xf32, ["N", "D"]>) -> (tensor<?x?xf32, ["N", "D"]>, tensor<?x?xf32, ["N", "D"]>, tensor<?x?xf32, ["N/2", "D/4"]>, tensor<2x3xf32>) {
  %whole = graph.slice %x starts = ["0", "0"] steps = [1, 1] : tensor<?x?xf32, ["N", "D"]> -> tensor<?x?xf32, ["N", "D"]>
  %f = graph.slice %x starts = ["N-1", "D-1"] steps = [-1, -1] : tensor<?x?xf32, ["N", "D"]> -> tensor<?x?xf32, ["N", "D"]>
  %ff = graph.slice %f starts = ["N-1", "D-1"] steps = [-1, -1] : tensor<?x?xf32, ["N", "D"]> -> tensor<?x?xf32, ["N", "D"]>
  %h = graph.slice %x starts = ["N-1", "0"] steps = [-1, 1] : tensor<?x?xf32, ["N", "D"]> -> tensor<?x?xf32, ["N", "D"]>
  %q = graph.slice %h starts = ["1", "D/4"] steps = [1, 2] : tensor<?x?xf32, ["N", "D"]> -> tensor<?x?xf32, ["N/2", "D/4"]>
  %c = graph.constant dense<2.0> : tensor<f32>
  %s = graph.broadcast %c : tensor<f32> -> tensor<4x6xf32>
  %t = graph.slice %s starts = ["1", "0"] steps = [2, 2] : tensor<4x6xf32> -> tensor<2x3xf32>
  func.return %whole, %ff, %q, %t : tensor<?x?xf32, ["N", "D"]>, tensor<?x?xf32, ["N", "D"]>, tensor<?x?xf32, ["N/2", "D/4"]>, tensor<2x3xf32>
}

// A slice of a product is the product of sliced operands: rows from lhs (its last axis
// when transposed), columns from rhs (its second-to-last when transposed).
// CANON-LABEL: func.func @slice_of_matmul(
// CANON-NEXT:    %[[L:.*]] = graph.slice %a starts = ["2", "0"] steps = [1, 1] : tensor<8x4xf32> -> tensor<3x4xf32>
// CANON-NEXT:    %[[R:.*]] = graph.slice %b starts = ["0", "N-1"] steps = [1, -2] : tensor<4x?xf32, ["", "N"]> -> tensor<4x?xf32, ["", "N/2"]>
// CANON-NEXT:    %[[P:.*]] = graph.matmul %[[L]], %[[R]] : tensor<3x4xf32>, tensor<4x?xf32, ["", "N/2"]> -> tensor<3x?xf32, ["", "N/2"]>
// CANON-NEXT:    %[[T:.*]] = graph.slice %bt starts = ["N/2", "0"] steps = [1, 1] : tensor<?x4xf32, ["N", ""]> -> tensor<?x4xf32, ["N/2", ""]>
// CANON-NEXT:    %[[Q:.*]] = graph.matmul %a, %[[T]] transpose_rhs : tensor<8x4xf32>, tensor<?x4xf32, ["N/2", ""]> -> tensor<8x?xf32, ["", "N/2"]>
// CANON-NEXT:    func.return %[[P]], %[[Q]]
func.func @slice_of_matmul(%a: tensor<8x4xf32>, %b: tensor<4x?xf32, ["", "N"]>, %bt: tensor<?x4xf32, ["N", ""]>) -> (tensor<3x?xf32, ["", "N/2"]>, tensor<8x?xf32, ["", "N/2"]>) {
  %p = graph.matmul %a, %b : tensor<8x4xf32>, tensor<4x?xf32, ["", "N"]> -> tensor<8x?xf32, ["", "N"]>
  %s = graph.slice %p starts = ["2", "N-1"] steps = [1, -2] : tensor<8x?xf32, ["", "N"]> -> tensor<3x?xf32, ["", "N/2"]>
  %q = graph.matmul %a, %bt transpose_rhs : tensor<8x4xf32>, tensor<?x4xf32, ["N", ""]> -> tensor<8x?xf32, ["", "N"]>
  %t = graph.slice %q starts = ["0", "N/2"] steps = [1, 1] : tensor<8x?xf32, ["", "N"]> -> tensor<8x?xf32, ["", "N/2"]>
  func.return %s, %t : tensor<3x?xf32, ["", "N/2"]>, tensor<8x?xf32, ["", "N/2"]>
}

// Not where the product is read elsewhere too, nor where the slice cuts a batch axis.
// CANON-LABEL: func.func @slice_of_matmul_kept(
// CANON-NEXT:    %[[P:.*]] = graph.matmul %a, %b
// CANON-NEXT:    %[[S:.*]] = graph.slice %[[P]] starts = ["0", "1"]
// CANON-NEXT:    %[[Q:.*]] = graph.matmul %c, %d
// CANON-NEXT:    %[[T:.*]] = graph.slice %[[Q]] starts = ["1", "0", "0"]
// CANON-NEXT:    func.return %[[S]], %[[P]], %[[T]]
func.func @slice_of_matmul_kept(%a: tensor<8x4xf32>, %b: tensor<4x6xf32>, %c: tensor<2x8x4xf32>, %d: tensor<2x4x6xf32>) -> (tensor<8x5xf32>, tensor<8x6xf32>, tensor<1x8x6xf32>) {
  %p = graph.matmul %a, %b : tensor<8x4xf32>, tensor<4x6xf32> -> tensor<8x6xf32>
  %s = graph.slice %p starts = ["0", "1"] steps = [1, 1] : tensor<8x6xf32> -> tensor<8x5xf32>
  %q = graph.matmul %c, %d : tensor<2x8x4xf32>, tensor<2x4x6xf32> -> tensor<2x8x6xf32>
  %t = graph.slice %q starts = ["1", "0", "0"] steps = [1, 1, 1] : tensor<2x8x6xf32> -> tensor<1x8x6xf32>
  func.return %s, %p, %t : tensor<8x5xf32>, tensor<8x6xf32>, tensor<1x8x6xf32>
}

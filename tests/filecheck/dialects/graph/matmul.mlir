// RUN: fusec-opt %s | fusec-opt | filecheck %s
// RUN: fusec-opt %s --print-op-generic | fusec-opt | filecheck %s
// graph.matmul: NumPy matmul, batch dimensions broadcast.

// CHECK-LABEL: func.func @matmul_static(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
// CHECK-NEXT:    %c = graph.matmul %a, %b : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    func.return %c : tensor<4x16xf32>
func.func @matmul_static(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %c = graph.matmul %a, %b : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  func.return %c : tensor<4x16xf32>
}

// CHECK-LABEL: func.func @matmul_batched(%a: tensor<2x1x4x8xf16>, %b: tensor<3x8x5xf16>) -> tensor<2x3x4x5xf16> {
// CHECK-NEXT:    %c = graph.matmul %a, %b : tensor<2x1x4x8xf16>, tensor<3x8x5xf16> -> tensor<2x3x4x5xf16>
func.func @matmul_batched(%a: tensor<2x1x4x8xf16>, %b: tensor<3x8x5xf16>) -> tensor<2x3x4x5xf16> {
  %c = graph.matmul %a, %b : tensor<2x1x4x8xf16>, tensor<3x8x5xf16> -> tensor<2x3x4x5xf16>
  func.return %c : tensor<2x3x4x5xf16>
}

// Attention scores: [B, T, D] x [B, D, T] -> [B, T, T].
// CHECK-LABEL: func.func @matmul_symbolic(
// CHECK-NEXT:    %s = graph.matmul %q, %k : tensor<?x?x64xf32, ["B", "T", ""]>, tensor<?x64x?xf32, ["B", "", "T"]> -> tensor<?x?x?xf32, ["B", "T", "T"]>
// CHECK-NEXT:    %y = graph.matmul %x, %w : tensor<?x768xi64, ["N", ""]>, tensor<768x?xi64, ["", "F"]> -> tensor<?x?xi64, ["N", "F"]>
func.func @matmul_symbolic(%q: tensor<?x?x64xf32, ["B", "T", ""]>, %k: tensor<?x64x?xf32, ["B", "", "T"]>, %x: tensor<?x768xi64, ["N", ""]>, %w: tensor<768x?xi64, ["", "F"]>) -> (tensor<?x?x?xf32, ["B", "T", "T"]>, tensor<?x?xi64, ["N", "F"]>) {
  %s = graph.matmul %q, %k : tensor<?x?x64xf32, ["B", "T", ""]>, tensor<?x64x?xf32, ["B", "", "T"]> -> tensor<?x?x?xf32, ["B", "T", "T"]>
  %y = graph.matmul %x, %w : tensor<?x768xi64, ["N", ""]>, tensor<768x?xi64, ["", "F"]> -> tensor<?x?xi64, ["N", "F"]>
  func.return %s, %y : tensor<?x?x?xf32, ["B", "T", "T"]>, tensor<?x?xi64, ["N", "F"]>
}

// The transpose flags (set by fold-layout): the operand is read with its last two axes swapped.
// CHECK-LABEL: func.func @matmul_transposed(
// CHECK-NEXT:    %c = graph.matmul %a, %b transpose_rhs : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    %d = graph.matmul %at, %b transpose_lhs transpose_rhs : tensor<8x4xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
// CHECK-NEXT:    %e = graph.matmul %q, %k transpose_lhs : tensor<?x64x?xf32, ["B", "", "T"]>, tensor<?x64x?xf32, ["B", "", "T"]> -> tensor<?x?x?xf32, ["B", "T", "T"]>
func.func @matmul_transposed(%a: tensor<4x8xf32>, %at: tensor<8x4xf32>, %b: tensor<16x8xf32>, %q: tensor<?x64x?xf32, ["B", "", "T"]>, %k: tensor<?x64x?xf32, ["B", "", "T"]>) -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<?x?x?xf32, ["B", "T", "T"]>) {
  %c = graph.matmul %a, %b transpose_rhs : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %d = graph.matmul %at, %b transpose_lhs transpose_rhs : tensor<8x4xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
  %e = graph.matmul %q, %k transpose_lhs : tensor<?x64x?xf32, ["B", "", "T"]>, tensor<?x64x?xf32, ["B", "", "T"]> -> tensor<?x?x?xf32, ["B", "T", "T"]>
  func.return %c, %d, %e : tensor<4x16xf32>, tensor<4x16xf32>, tensor<?x?x?xf32, ["B", "T", "T"]>
}

// A transpose of a matmul operand's last two axes becomes the matmul's
// transpose_lhs / transpose_rhs flag.
// RUN: fusec-opt %s -p fold-layout | filecheck %s
// RUN: fusec-opt %s -p 'fold-layout{matmul=false}' | filecheck %s --check-prefix=NOFOLD

// CHECK-LABEL: func.func @lhs(
// CHECK-NEXT:    %[[P:.*]] = graph.matmul %a, %b transpose_lhs : tensor<8x4xf32>, tensor<8x6xf32> -> tensor<4x6xf32>
// CHECK-NEXT:    func.return %[[P]]
// NOFOLD-LABEL: func.func @lhs(
// NOFOLD-NEXT:    graph.transpose %a perm = [1, 0] {index_map}
// NOFOLD-NEXT:    graph.matmul
func.func @lhs(%a: tensor<8x4xf32>, %b: tensor<8x6xf32>) -> tensor<4x6xf32> {
  %at = graph.transpose %a perm = [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
  %p = graph.matmul %at, %b : tensor<4x8xf32>, tensor<8x6xf32> -> tensor<4x6xf32>
  func.return %p : tensor<4x6xf32>
}

// batched rhs: q @ k^T with k^T = transpose(k, [0, 1, 3, 2])
// CHECK-LABEL: func.func @rhs_batched(
// CHECK-NEXT:    %[[S:.*]] = graph.matmul %q, %k transpose_rhs : tensor<?x4x?x64xf32, ["B", "", "S", ""]>, tensor<?x4x?x64xf32, ["B", "", "S", ""]> -> tensor<?x4x?x?xf32, ["B", "", "S", "S"]>
// CHECK-NEXT:    func.return %[[S]]
func.func @rhs_batched(%q: tensor<?x4x?x64xf32, ["B", "", "S", ""]>, %k: tensor<?x4x?x64xf32, ["B", "", "S", ""]>) -> tensor<?x4x?x?xf32, ["B", "", "S", "S"]> {
  %kt = graph.transpose %k perm = [0, 1, 3, 2] : tensor<?x4x?x64xf32, ["B", "", "S", ""]> -> tensor<?x4x64x?xf32, ["B", "", "", "S"]>
  %s = graph.matmul %q, %kt : tensor<?x4x?x64xf32, ["B", "", "S", ""]>, tensor<?x4x64x?xf32, ["B", "", "", "S"]> -> tensor<?x4x?x?xf32, ["B", "", "S", "S"]>
  func.return %s : tensor<?x4x?x?xf32, ["B", "", "S", "S"]>
}

// both operands; the transpose of %a is also returned, so it stays (materialized)
// CHECK-LABEL: func.func @both_shared(
// CHECK-NEXT:    %[[AT:.*]] = graph.transpose %a perm = [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
// CHECK-NEXT:    %[[P:.*]] = graph.matmul %a, %b transpose_lhs transpose_rhs : tensor<8x4xf32>, tensor<6x8xf32> -> tensor<4x6xf32>
// CHECK-NEXT:    func.return %[[P]], %[[AT]]
func.func @both_shared(%a: tensor<8x4xf32>, %b: tensor<6x8xf32>) -> (tensor<4x6xf32>, tensor<4x8xf32>) {
  %at = graph.transpose %a perm = [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
  %bt = graph.transpose %b perm = [1, 0] : tensor<6x8xf32> -> tensor<8x6xf32>
  %p = graph.matmul %at, %bt : tensor<4x8xf32>, tensor<8x6xf32> -> tensor<4x6xf32>
  func.return %p, %at : tensor<4x6xf32>, tensor<4x8xf32>
}

// a flag and a swap cancel
// CHECK-LABEL: func.func @cancel(
// CHECK-NEXT:    %[[P:.*]] = graph.matmul %a, %b : tensor<4x8xf32>, tensor<8x6xf32> -> tensor<4x6xf32>
func.func @cancel(%a: tensor<4x8xf32>, %b: tensor<8x6xf32>) -> tensor<4x6xf32> {
  %at = graph.transpose %a perm = [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  %p = graph.matmul %at, %b transpose_lhs : tensor<8x4xf32>, tensor<8x6xf32> -> tensor<4x6xf32>
  func.return %p : tensor<4x6xf32>
}

// NOT: a transpose that moves a batch axis is not a flag; it is an index map
// CHECK-LABEL: func.func @batch_perm(
// CHECK-NEXT:    %[[T:.*]] = graph.transpose %a perm = [1, 0, 2] {index_map} : tensor<2x4x8xf32> -> tensor<4x2x8xf32>
// CHECK-NEXT:    %[[P:.*]] = graph.matmul %[[T]], %b : tensor<4x2x8xf32>, tensor<8x3xf32> -> tensor<4x2x3xf32>
func.func @batch_perm(%a: tensor<2x4x8xf32>, %b: tensor<8x3xf32>) -> tensor<4x2x3xf32> {
  %t = graph.transpose %a perm = [1, 0, 2] : tensor<2x4x8xf32> -> tensor<4x2x8xf32>
  %p = graph.matmul %t, %b : tensor<4x2x8xf32>, tensor<8x3xf32> -> tensor<4x2x3xf32>
  func.return %p : tensor<4x2x3xf32>
}

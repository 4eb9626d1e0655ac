// The callee's size names are renamed to the caller's (N, M -> M, K) or replaced by the
// static sizes it is called with (N, M -> 3, 5). func.call itself wants equal types, so
// the input does not verify; the inlined output does (the second fusec-opt verifies it).
// RUN: fusec-opt %s --disable-verify -p inline | fusec-opt | filecheck %s

// CHECK-NOT:   func.func @f
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    %[[B1:.*]] = graph.broadcast %v : tensor<?xf32, ["K"]> -> tensor<?x?xf32, ["M", "K"]>
// CHECK-NEXT:    %[[S1:.*]] = graph.add %x, %[[B1]] : tensor<?x?xf32, ["M", "K"]>
// CHECK-NEXT:    %[[T1:.*]] = graph.transpose %[[S1]] perm = [1, 0] : tensor<?x?xf32, ["M", "K"]> -> tensor<?x?xf32, ["K", "M"]>
// CHECK-NEXT:    %[[B2:.*]] = graph.broadcast %u : tensor<5xf32> -> tensor<3x5xf32>
// CHECK-NEXT:    %[[S2:.*]] = graph.add %w, %[[B2]] : tensor<3x5xf32>
// CHECK-NEXT:    %[[T2:.*]] = graph.transpose %[[S2]] perm = [1, 0] : tensor<3x5xf32> -> tensor<5x3xf32>
// CHECK-NEXT:    func.return %[[T1]], %[[T2]] : tensor<?x?xf32, ["K", "M"]>, tensor<5x3xf32>

func.func @f(%a: tensor<?x?xf32, ["N", "M"]>, %b: tensor<?xf32, ["M"]>) -> tensor<?x?xf32, ["M", "N"]> {
  %bb = graph.broadcast %b : tensor<?xf32, ["M"]> -> tensor<?x?xf32, ["N", "M"]>
  %s = graph.add %a, %bb : tensor<?x?xf32, ["N", "M"]>
  %t = graph.transpose %s perm = [1, 0] : tensor<?x?xf32, ["N", "M"]> -> tensor<?x?xf32, ["M", "N"]>
  func.return %t : tensor<?x?xf32, ["M", "N"]>
}
func.func @main(%x: tensor<?x?xf32, ["M", "K"]>, %v: tensor<?xf32, ["K"]>, %w: tensor<3x5xf32>, %u: tensor<5xf32>) -> (tensor<?x?xf32, ["K", "M"]>, tensor<5x3xf32>) {
  %r = func.call @f(%x, %v) : (tensor<?x?xf32, ["M", "K"]>, tensor<?xf32, ["K"]>) -> tensor<?x?xf32, ["K", "M"]>
  %s = func.call @f(%w, %u) : (tensor<3x5xf32>, tensor<5xf32>) -> tensor<5x3xf32>
  func.return %r, %s : tensor<?x?xf32, ["K", "M"]>, tensor<5x3xf32>
}

// A recursive function is not inlined (it would never end); it stays, called.
// RUN: fusec-opt %s -p inline | filecheck %s

// CHECK-LABEL: func.func @loop(
// CHECK-NEXT:    func.call @loop
// CHECK-LABEL: func.func @main(
// CHECK-NEXT:    %[[R:.*]] = func.call @loop(%x)
// CHECK-NEXT:    func.return %[[R]]

func.func @loop(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = func.call @loop(%a) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = func.call @loop(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

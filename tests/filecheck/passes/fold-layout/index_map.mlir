// Layout ops whose every user reads element by element get {index_map}.
// RUN: fusec-opt %s -p fold-layout | filecheck %s

// the multi-head split and merge: all read through index maps
// CHECK-LABEL: func.func @heads(
// CHECK-NEXT:    %[[QR:.*]] = graph.reshape %q {index_map}
// CHECK-NEXT:    %[[QH:.*]] = graph.transpose %[[QR]] perm = [0, 2, 1, 3] {index_map}
// CHECK-NEXT:    %[[KR:.*]] = graph.reshape %k {index_map}
// CHECK-NEXT:    %[[KH:.*]] = graph.transpose %[[KR]] perm = [0, 2, 3, 1] {index_map}
// CHECK-NEXT:    %[[S:.*]] = graph.matmul %[[QH]], %[[KH]] :
// CHECK-NEXT:    %[[O:.*]] = graph.matmul %[[S]], %[[QH]] :
// CHECK-NEXT:    %[[OT:.*]] = graph.transpose %[[O]] perm = [0, 2, 1, 3] {index_map}
// CHECK-NEXT:    %[[OM:.*]] = graph.reshape %[[OT]] {index_map}
// CHECK-NEXT:    %[[R:.*]] = graph.add %[[OM]], %q
func.func @heads(%q: tensor<2x?x256xf32, ["", "S", ""]>, %k: tensor<2x?x256xf32, ["", "S", ""]>) -> tensor<2x?x256xf32, ["", "S", ""]> {
  %qr = graph.reshape %q : tensor<2x?x256xf32, ["", "S", ""]> -> tensor<2x?x4x64xf32, ["", "S", "", ""]>
  %qh = graph.transpose %qr perm = [0, 2, 1, 3] : tensor<2x?x4x64xf32, ["", "S", "", ""]> -> tensor<2x4x?x64xf32, ["", "", "S", ""]>
  %kr = graph.reshape %k : tensor<2x?x256xf32, ["", "S", ""]> -> tensor<2x?x4x64xf32, ["", "S", "", ""]>
  %kh = graph.transpose %kr perm = [0, 2, 3, 1] : tensor<2x?x4x64xf32, ["", "S", "", ""]> -> tensor<2x4x64x?xf32, ["", "", "", "S"]>
  %s = graph.matmul %qh, %kh : tensor<2x4x?x64xf32, ["", "", "S", ""]>, tensor<2x4x64x?xf32, ["", "", "", "S"]> -> tensor<2x4x?x?xf32, ["", "", "S", "S"]>
  %o = graph.matmul %s, %qh : tensor<2x4x?x?xf32, ["", "", "S", "S"]>, tensor<2x4x?x64xf32, ["", "", "S", ""]> -> tensor<2x4x?x64xf32, ["", "", "S", ""]>
  %ot = graph.transpose %o perm = [0, 2, 1, 3] : tensor<2x4x?x64xf32, ["", "", "S", ""]> -> tensor<2x?x4x64xf32, ["", "S", "", ""]>
  %om = graph.reshape %ot : tensor<2x?x4x64xf32, ["", "S", "", ""]> -> tensor<2x?x256xf32, ["", "S", ""]>
  %r = graph.add %om, %q : tensor<2x?x256xf32, ["", "S", ""]>
  func.return %r : tensor<2x?x256xf32, ["", "S", ""]>
}

// reductions, broadcasts, casts, compares and dim_size read through index maps too
// CHECK-LABEL: func.func @readers(
// CHECK-NEXT:    graph.transpose %x perm = [1, 0] {index_map}
// CHECK-NEXT:    graph.reduce sum
// CHECK-NEXT:    graph.reshape %x {index_map}
// CHECK-NEXT:    graph.broadcast
// CHECK-NEXT:    graph.cast
func.func @readers(%x: tensor<4x6xf32>) -> (tensor<4xf32>, tensor<2x24xf64>) {
  %t = graph.transpose %x perm = [1, 0] : tensor<4x6xf32> -> tensor<6x4xf32>
  %s = graph.reduce sum %t axes = [0] : tensor<6x4xf32> -> tensor<4xf32>
  %r = graph.reshape %x : tensor<4x6xf32> -> tensor<24xf32>
  %b = graph.broadcast %r : tensor<24xf32> -> tensor<2x24xf32>
  %c = graph.cast %b : tensor<2x24xf32> -> tensor<2x24xf64>
  func.return %s, %c : tensor<4xf32>, tensor<2x24xf64>
}

// NOT: a layout op returned by the function is materialized, and so is a layout op
// feeding it; one returned besides an elementwise user too
// CHECK-LABEL: func.func @returned(
// CHECK-NEXT:    %[[R2:.*]] = graph.reshape %x : tensor<4x6xf32> -> tensor<2x12xf32>
// CHECK-NEXT:    %[[R3:.*]] = graph.reshape %[[R2]] : tensor<2x12xf32> -> tensor<6x4xf32>
// CHECK-NEXT:    %[[T:.*]] = graph.transpose %x perm = [1, 0] : tensor<4x6xf32> -> tensor<6x4xf32>
// CHECK-NEXT:    %[[E:.*]] = graph.exp %[[T]]
// CHECK-NEXT:    func.return %[[R3]], %[[T]], %[[E]]
func.func @returned(%x: tensor<4x6xf32>) -> (tensor<6x4xf32>, tensor<6x4xf32>, tensor<6x4xf32>) {
  %r2 = graph.reshape %x : tensor<4x6xf32> -> tensor<2x12xf32>
  %r3 = graph.reshape %r2 : tensor<2x12xf32> -> tensor<6x4xf32>
  %t = graph.transpose %x perm = [1, 0] : tensor<4x6xf32> -> tensor<6x4xf32>
  %e = graph.exp %t : tensor<6x4xf32>
  func.return %r3, %t, %e : tensor<6x4xf32>, tensor<6x4xf32>, tensor<6x4xf32>
}

// NOT: a composite (not decomposed yet) needs a real tensor
// CHECK-LABEL: func.func @composite_user(
// CHECK-NEXT:    graph.transpose %x perm = [1, 0] :
// CHECK-NEXT:    graph.softmax
func.func @composite_user(%x: tensor<4x6xf32>) -> tensor<6x4xf32> {
  %t = graph.transpose %x perm = [1, 0] : tensor<4x6xf32> -> tensor<6x4xf32>
  %s = graph.softmax %t axis = 1 : tensor<6x4xf32>
  func.return %s : tensor<6x4xf32>
}

// concat and pad are index maps too (selects between their operands' loads): marked
// where read element by element, and a transpose they read is marked; one returned
// is materialized
// CHECK-LABEL: func.func @concat_pad(
// CHECK-NEXT:    %[[T:.*]] = graph.transpose %x perm = [1, 0] {index_map}
// CHECK-NEXT:    %[[C:.*]] = graph.concat %[[T]], %y axis = 1 {index_map}
// CHECK-NEXT:    %[[P:.*]] = graph.pad %[[C]] low = [0, 1] high = [0, 1] value = 0.000000e+00 {index_map}
// CHECK-NEXT:    %[[S:.*]] = graph.reduce sum %[[P]]
// CHECK-NEXT:    %[[R:.*]] = graph.concat %y, %y axis = 0 :
// CHECK-NEXT:    func.return %[[S]], %[[R]]
func.func @concat_pad(%x: tensor<3x4xf32>, %y: tensor<4x2xf32>) -> (tensor<4xf32>, tensor<8x2xf32>) {
  %t = graph.transpose %x perm = [1, 0] : tensor<3x4xf32> -> tensor<4x3xf32>
  %c = graph.concat %t, %y axis = 1 : tensor<4x3xf32>, tensor<4x2xf32> -> tensor<4x5xf32>
  %p = graph.pad %c low = [0, 1] high = [0, 1] value = 0.000000e+00 : tensor<4x5xf32> -> tensor<4x7xf32>
  %s = graph.reduce sum %p axes = [1] : tensor<4x7xf32> -> tensor<4xf32>
  %r = graph.concat %y, %y axis = 0 : tensor<4x2xf32>, tensor<4x2xf32> -> tensor<8x2xf32>
  func.return %s, %r : tensor<4xf32>, tensor<8x2xf32>
}

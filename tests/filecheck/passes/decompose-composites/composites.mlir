// RUN: fusec-opt %s -p decompose-composites | filecheck %s

// CHECK-LABEL: func.func @softmax(
// CHECK-NEXT:    %[[M:.*]] = graph.reduce max %x axes = [1] keepdims : tensor<?x8xf32, ["N", ""]> -> tensor<?x1xf32, ["N", ""]>
// CHECK-NEXT:    %[[MB:.*]] = graph.broadcast %[[M]] : tensor<?x1xf32, ["N", ""]> -> tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:    %[[D:.*]] = graph.sub %x, %[[MB]] : tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:    %[[E:.*]] = graph.exp %[[D]] : tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:    %[[S:.*]] = graph.reduce sum %[[E]] axes = [1] keepdims : tensor<?x8xf32, ["N", ""]> -> tensor<?x1xf32, ["N", ""]>
// CHECK-NEXT:    %[[SB:.*]] = graph.broadcast %[[S]] : tensor<?x1xf32, ["N", ""]> -> tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:    %[[Y:.*]] = graph.div %[[E]], %[[SB]] : tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:    func.return %[[Y]]
func.func @softmax(%x: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
  %y = graph.softmax %x axis = 1 : tensor<?x8xf32, ["N", ""]>
  func.return %y : tensor<?x8xf32, ["N", ""]>
}

// mean over the static last axis: sum * 1/8; var = mean(c*c); c * rsqrt(var + eps) * g + b
// CHECK-LABEL: func.func @layernorm(
// CHECK-NEXT:    %[[S:.*]] = graph.reduce sum %x axes = [1] keepdims : tensor<?x8xf32, ["N", ""]> -> tensor<?x1xf32, ["N", ""]>
// CHECK-NEXT:    %[[K:.*]] = graph.constant dense<1.250000e-01> : tensor<f32>
// CHECK-NEXT:    %[[KB:.*]] = graph.broadcast %[[K]] : tensor<f32> -> tensor<?x1xf32, ["N", ""]>
// CHECK-NEXT:    %[[MU:.*]] = graph.mul %[[S]], %[[KB]] : tensor<?x1xf32, ["N", ""]>
// CHECK-NEXT:    %[[MUB:.*]] = graph.broadcast %[[MU]] : tensor<?x1xf32, ["N", ""]> -> tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:    %[[C:.*]] = graph.sub %x, %[[MUB]] : tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:    %[[C2:.*]] = graph.mul %[[C]], %[[C]] : tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:    %[[VS:.*]] = graph.reduce sum %[[C2]] axes = [1] keepdims
// CHECK-NEXT:    %[[K2:.*]] = graph.constant dense<1.250000e-01> : tensor<f32>
// CHECK-NEXT:    %[[K2B:.*]] = graph.broadcast %[[K2]]
// CHECK-NEXT:    %[[VAR:.*]] = graph.mul %[[VS]], %[[K2B]] : tensor<?x1xf32, ["N", ""]>
// CHECK-NEXT:    %[[EPS:.*]] = graph.constant dense<1.000000e-05> : tensor<f32>
// CHECK-NEXT:    %[[EPSB:.*]] = graph.broadcast %[[EPS]] : tensor<f32> -> tensor<?x1xf32, ["N", ""]>
// CHECK-NEXT:    %[[VE:.*]] = graph.add %[[VAR]], %[[EPSB]] : tensor<?x1xf32, ["N", ""]>
// CHECK-NEXT:    %[[R:.*]] = graph.rsqrt %[[VE]] : tensor<?x1xf32, ["N", ""]>
// CHECK-NEXT:    %[[RB:.*]] = graph.broadcast %[[R]] : tensor<?x1xf32, ["N", ""]> -> tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:    %[[Y:.*]] = graph.mul %[[C]], %[[RB]] : tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:    %[[GB:.*]] = graph.broadcast %g : tensor<8xf32> -> tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:    %[[YG:.*]] = graph.mul %[[Y]], %[[GB]] : tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:    %[[BB:.*]] = graph.broadcast %b : tensor<8xf32> -> tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:    %[[OUT:.*]] = graph.add %[[YG]], %[[BB]] : tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:    func.return %[[OUT]]
func.func @layernorm(%x: tensor<?x8xf32, ["N", ""]>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<?x8xf32, ["N", ""]> {
  %y = graph.layernorm %x, %g, %b eps = 1.000000e-05 : tensor<?x8xf32, ["N", ""]>, tensor<8xf32>
  func.return %y : tensor<?x8xf32, ["N", ""]>
}

// mean over a symbolic axis: sum / dim_size
// CHECK-LABEL: func.func @rmsnorm(
// CHECK-NEXT:    %[[X2:.*]] = graph.mul %x, %x : tensor<4x?xf32, ["", "D"]>
// CHECK-NEXT:    %[[S:.*]] = graph.reduce sum %[[X2]] axes = [1] keepdims : tensor<4x?xf32, ["", "D"]> -> tensor<4x1xf32>
// CHECK-NEXT:    %[[N:.*]] = graph.dim_size %[[X2]][1] : tensor<4x?xf32, ["", "D"]> -> tensor<f32>
// CHECK-NEXT:    %[[NB:.*]] = graph.broadcast %[[N]] : tensor<f32> -> tensor<4x1xf32>
// CHECK-NEXT:    %[[MS:.*]] = graph.div %[[S]], %[[NB]] : tensor<4x1xf32>
// CHECK-NEXT:    %[[EPS:.*]] = graph.constant dense<1.000000e-06> : tensor<f32>
// CHECK-NEXT:    %[[EPSB:.*]] = graph.broadcast %[[EPS]] : tensor<f32> -> tensor<4x1xf32>
// CHECK-NEXT:    %[[A:.*]] = graph.add %[[MS]], %[[EPSB]] : tensor<4x1xf32>
// CHECK-NEXT:    %[[R:.*]] = graph.rsqrt %[[A]] : tensor<4x1xf32>
// CHECK-NEXT:    %[[RB:.*]] = graph.broadcast %[[R]] : tensor<4x1xf32> -> tensor<4x?xf32, ["", "D"]>
// CHECK-NEXT:    %[[Y:.*]] = graph.mul %x, %[[RB]] : tensor<4x?xf32, ["", "D"]>
// CHECK-NEXT:    %[[GB:.*]] = graph.broadcast %g : tensor<?xf32, ["D"]> -> tensor<4x?xf32, ["", "D"]>
// CHECK-NEXT:    %[[OUT:.*]] = graph.mul %[[Y]], %[[GB]] : tensor<4x?xf32, ["", "D"]>
// CHECK-NEXT:    func.return %[[OUT]]
func.func @rmsnorm(%x: tensor<4x?xf32, ["", "D"]>, %g: tensor<?xf32, ["D"]>) -> tensor<4x?xf32, ["", "D"]> {
  %y = graph.rmsnorm %x, %g eps = 1.000000e-06 : tensor<4x?xf32, ["", "D"]>, tensor<?xf32, ["D"]>
  func.return %y : tensor<4x?xf32, ["", "D"]>
}

// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x*x*x)))
// CHECK-LABEL: func.func @gelu(
// CHECK-NEXT:    %[[X2:.*]] = graph.mul %x, %x : tensor<16xf32>
// CHECK-NEXT:    %[[X3:.*]] = graph.mul %[[X2]], %x : tensor<16xf32>
// CHECK-NEXT:    graph.constant dense<4.471500e-02> : tensor<f32>
// CHECK-NEXT:    %[[A:.*]] = graph.broadcast
// CHECK-NEXT:    %[[AX3:.*]] = graph.mul %[[A]], %[[X3]] : tensor<16xf32>
// CHECK-NEXT:    %[[IN:.*]] = graph.add %x, %[[AX3]] : tensor<16xf32>
// CHECK-NEXT:    graph.constant dense<0.797884583> : tensor<f32>
// CHECK-NEXT:    %[[C:.*]] = graph.broadcast
// CHECK-NEXT:    %[[CIN:.*]] = graph.mul %[[C]], %[[IN]] : tensor<16xf32>
// CHECK-NEXT:    %[[T:.*]] = graph.tanh %[[CIN]] : tensor<16xf32>
// CHECK-NEXT:    graph.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT:    %[[H:.*]] = graph.broadcast
// CHECK-NEXT:    %[[HX:.*]] = graph.mul %[[H]], %x : tensor<16xf32>
// CHECK-NEXT:    graph.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[ONE:.*]] = graph.broadcast
// CHECK-NEXT:    %[[P:.*]] = graph.add %[[ONE]], %[[T]] : tensor<16xf32>
// CHECK-NEXT:    %[[Y:.*]] = graph.mul %[[HX]], %[[P]] : tensor<16xf32>
// CHECK-NEXT:    func.return %[[Y]]
func.func @gelu(%x: tensor<16xf32>) -> tensor<16xf32> {
  %y = graph.gelu %x : tensor<16xf32>
  func.return %y : tensor<16xf32>
}

// silu(x) = x * (1 / (1 + exp(-x))); a rank-0 operand needs no broadcast
// CHECK-LABEL: func.func @silu(
// CHECK-NEXT:    %[[ONE:.*]] = graph.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[N:.*]] = graph.neg %x : tensor<f32>
// CHECK-NEXT:    %[[E:.*]] = graph.exp %[[N]] : tensor<f32>
// CHECK-NEXT:    %[[D:.*]] = graph.add %[[ONE]], %[[E]] : tensor<f32>
// CHECK-NEXT:    %[[S:.*]] = graph.div %[[ONE]], %[[D]] : tensor<f32>
// CHECK-NEXT:    %[[Y:.*]] = graph.mul %x, %[[S]] : tensor<f32>
// CHECK-NEXT:    func.return %[[Y]]
func.func @silu(%x: tensor<f32>) -> tensor<f32> {
  %y = graph.silu %x : tensor<f32>
  func.return %y : tensor<f32>
}

// a composite of half floats computes in f32: its operands cast up, its result rounded once
// CHECK-LABEL: func.func @sigmoid(
// CHECK-NEXT:    %[[X:.*]] = graph.cast %x : tensor<3xf16> -> tensor<3xf32>
// CHECK-NEXT:    graph.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[ONE:.*]] = graph.broadcast
// CHECK-NEXT:    %[[N:.*]] = graph.neg %[[X]] : tensor<3xf32>
// CHECK-NEXT:    %[[E:.*]] = graph.exp %[[N]] : tensor<3xf32>
// CHECK-NEXT:    %[[D:.*]] = graph.add %[[ONE]], %[[E]] : tensor<3xf32>
// CHECK-NEXT:    %[[S:.*]] = graph.div %[[ONE]], %[[D]] : tensor<3xf32>
// CHECK-NEXT:    %[[Y:.*]] = graph.cast %[[S]] : tensor<3xf32> -> tensor<3xf16>
// CHECK-NEXT:    func.return %[[Y]]
func.func @sigmoid(%x: tensor<3xf16>) -> tensor<3xf16> {
  %y = graph.sigmoid %x : tensor<3xf16>
  func.return %y : tensor<3xf16>
}

// mean over a symbolic and a static axis: sum / (dim_size * 4); max and sum stay
// CHECK-LABEL: func.func @means(
// CHECK-NEXT:    %[[S:.*]] = graph.reduce sum %x axes = [0, 1] : tensor<?x4xf32, ["N", ""]> -> tensor<f32>
// CHECK-NEXT:    %[[N:.*]] = graph.dim_size %x[0] : tensor<?x4xf32, ["N", ""]> -> tensor<f32>
// CHECK-NEXT:    %[[FOUR:.*]] = graph.constant dense<4.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[N4:.*]] = graph.mul %[[N]], %[[FOUR]] : tensor<f32>
// CHECK-NEXT:    %[[M:.*]] = graph.div %[[S]], %[[N4]] : tensor<f32>
// CHECK-NEXT:    %[[MX:.*]] = graph.reduce max %x axes = [0, 1] : tensor<?x4xf32, ["N", ""]> -> tensor<f32>
// CHECK-NEXT:    %[[R:.*]] = graph.add %[[M]], %[[MX]] : tensor<f32>
// CHECK-NEXT:    func.return %[[R]]
func.func @means(%x: tensor<?x4xf32, ["N", ""]>) -> tensor<f32> {
  %m = graph.reduce mean %x axes = [0, 1] : tensor<?x4xf32, ["N", ""]> -> tensor<f32>
  %mx = graph.reduce max %x axes = [0, 1] : tensor<?x4xf32, ["N", ""]> -> tensor<f32>
  %r = graph.add %m, %mx : tensor<f32>
  func.return %r : tensor<f32>
}

// a half-float layernorm: x, gamma and beta cast to f32, the statistics in f32, one rounding
// CHECK-LABEL: func.func @layernorm_half(
// CHECK-DAG:     %[[X:.*]] = graph.cast %x : tensor<2x4xbf16> -> tensor<2x4xf32>
// CHECK-DAG:     %[[G:.*]] = graph.cast %g : tensor<4xbf16> -> tensor<4xf32>
// CHECK-DAG:     %[[B:.*]] = graph.cast %b : tensor<4xbf16> -> tensor<4xf32>
// CHECK:         graph.reduce sum %[[X]] axes = [1] keepdims : tensor<2x4xf32> -> tensor<2x1xf32>
// CHECK:         graph.reduce sum %{{.*}} axes = [1] keepdims : tensor<2x4xf32> -> tensor<2x1xf32>
// CHECK:         %[[Y:.*]] = graph.cast %{{.*}} : tensor<2x4xf32> -> tensor<2x4xbf16>
// CHECK-NEXT:    func.return %[[Y]]
func.func @layernorm_half(%x: tensor<2x4xbf16>, %g: tensor<4xbf16>, %b: tensor<4xbf16>) -> tensor<2x4xbf16> {
  %y = graph.layernorm %x, %g, %b eps = 1.000000e-05 : tensor<2x4xbf16>, tensor<4xbf16>
  func.return %y : tensor<2x4xbf16>
}

// mean of f16: the sum in f32 (60000 + 60000 does not overflow), the mean rounded once
// CHECK-LABEL: func.func @mean_half(
// CHECK-NEXT:    %[[X:.*]] = graph.cast %x : tensor<4xf16> -> tensor<4xf32>
// CHECK-NEXT:    %[[S:.*]] = graph.reduce sum %[[X]] axes = [0] : tensor<4xf32> -> tensor<f32>
// CHECK-NEXT:    %[[Q:.*]] = graph.constant dense<2.500000e-01> : tensor<f32>
// CHECK-NEXT:    %[[M:.*]] = graph.mul %[[S]], %[[Q]] : tensor<f32>
// CHECK-NEXT:    %[[Y:.*]] = graph.cast %[[M]] : tensor<f32> -> tensor<f16>
// CHECK-NEXT:    func.return %[[Y]]
func.func @mean_half(%x: tensor<4xf16>) -> tensor<f16> {
  %y = graph.reduce mean %x axes = [0] : tensor<4xf16> -> tensor<f16>
  func.return %y : tensor<f16>
}

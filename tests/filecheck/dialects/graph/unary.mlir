// RUN: fusec-opt %s | fusec-opt | filecheck %s
// RUN: fusec-opt %s --print-op-generic | fusec-opt | filecheck %s
// Every elementwise unary op of the graph dialect, static and symbolic: the custom
// form prints back as written, and the generic form parses back to it.

// CHECK-LABEL: func.func @neg_static(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %y = graph.neg %x : tensor<4x8xf32>
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
func.func @neg_static(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = graph.neg %x : tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @neg_symbolic(%x: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
// CHECK-NEXT:    %y = graph.neg %x : tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:    func.return %y : tensor<?x8xf32, ["N", ""]>
func.func @neg_symbolic(%x: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
  %y = graph.neg %x : tensor<?x8xf32, ["N", ""]>
  func.return %y : tensor<?x8xf32, ["N", ""]>
}

// CHECK-LABEL: func.func @neg_int(%x: tensor<?x?xi32, ["B", "N"]>) -> tensor<?x?xi32, ["B", "N"]> {
// CHECK-NEXT:    %y = graph.neg %x : tensor<?x?xi32, ["B", "N"]>
// CHECK-NEXT:    func.return %y : tensor<?x?xi32, ["B", "N"]>
func.func @neg_int(%x: tensor<?x?xi32, ["B", "N"]>) -> tensor<?x?xi32, ["B", "N"]> {
  %y = graph.neg %x : tensor<?x?xi32, ["B", "N"]>
  func.return %y : tensor<?x?xi32, ["B", "N"]>
}

// CHECK-LABEL: func.func @abs_static(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %y = graph.abs %x : tensor<4x8xf32>
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
func.func @abs_static(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = graph.abs %x : tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @abs_symbolic(%x: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
// CHECK-NEXT:    %y = graph.abs %x : tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:    func.return %y : tensor<?x8xf32, ["N", ""]>
func.func @abs_symbolic(%x: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
  %y = graph.abs %x : tensor<?x8xf32, ["N", ""]>
  func.return %y : tensor<?x8xf32, ["N", ""]>
}

// CHECK-LABEL: func.func @abs_int(%x: tensor<?x?xi32, ["B", "N"]>) -> tensor<?x?xi32, ["B", "N"]> {
// CHECK-NEXT:    %y = graph.abs %x : tensor<?x?xi32, ["B", "N"]>
// CHECK-NEXT:    func.return %y : tensor<?x?xi32, ["B", "N"]>
func.func @abs_int(%x: tensor<?x?xi32, ["B", "N"]>) -> tensor<?x?xi32, ["B", "N"]> {
  %y = graph.abs %x : tensor<?x?xi32, ["B", "N"]>
  func.return %y : tensor<?x?xi32, ["B", "N"]>
}

// CHECK-LABEL: func.func @relu_static(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %y = graph.relu %x : tensor<4x8xf32>
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
func.func @relu_static(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = graph.relu %x : tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @relu_symbolic(%x: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
// CHECK-NEXT:    %y = graph.relu %x : tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:    func.return %y : tensor<?x8xf32, ["N", ""]>
func.func @relu_symbolic(%x: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
  %y = graph.relu %x : tensor<?x8xf32, ["N", ""]>
  func.return %y : tensor<?x8xf32, ["N", ""]>
}

// CHECK-LABEL: func.func @relu_int(%x: tensor<?x?xi32, ["B", "N"]>) -> tensor<?x?xi32, ["B", "N"]> {
// CHECK-NEXT:    %y = graph.relu %x : tensor<?x?xi32, ["B", "N"]>
// CHECK-NEXT:    func.return %y : tensor<?x?xi32, ["B", "N"]>
func.func @relu_int(%x: tensor<?x?xi32, ["B", "N"]>) -> tensor<?x?xi32, ["B", "N"]> {
  %y = graph.relu %x : tensor<?x?xi32, ["B", "N"]>
  func.return %y : tensor<?x?xi32, ["B", "N"]>
}

// CHECK-LABEL: func.func @exp_static(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %y = graph.exp %x : tensor<4x8xf32>
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
func.func @exp_static(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = graph.exp %x : tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @exp_symbolic(%x: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
// CHECK-NEXT:    %y = graph.exp %x : tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:    func.return %y : tensor<?x8xf32, ["N", ""]>
func.func @exp_symbolic(%x: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
  %y = graph.exp %x : tensor<?x8xf32, ["N", ""]>
  func.return %y : tensor<?x8xf32, ["N", ""]>
}

// CHECK-LABEL: func.func @exp_rank0_f16(%x: tensor<f16>) -> tensor<f16> {
// CHECK-NEXT:    %y = graph.exp %x : tensor<f16>
// CHECK-NEXT:    func.return %y : tensor<f16>
func.func @exp_rank0_f16(%x: tensor<f16>) -> tensor<f16> {
  %y = graph.exp %x : tensor<f16>
  func.return %y : tensor<f16>
}

// CHECK-LABEL: func.func @log_static(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %y = graph.log %x : tensor<4x8xf32>
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
func.func @log_static(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = graph.log %x : tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @log_symbolic(%x: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
// CHECK-NEXT:    %y = graph.log %x : tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:    func.return %y : tensor<?x8xf32, ["N", ""]>
func.func @log_symbolic(%x: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
  %y = graph.log %x : tensor<?x8xf32, ["N", ""]>
  func.return %y : tensor<?x8xf32, ["N", ""]>
}

// CHECK-LABEL: func.func @log_rank0_f16(%x: tensor<f16>) -> tensor<f16> {
// CHECK-NEXT:    %y = graph.log %x : tensor<f16>
// CHECK-NEXT:    func.return %y : tensor<f16>
func.func @log_rank0_f16(%x: tensor<f16>) -> tensor<f16> {
  %y = graph.log %x : tensor<f16>
  func.return %y : tensor<f16>
}

// CHECK-LABEL: func.func @sqrt_static(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %y = graph.sqrt %x : tensor<4x8xf32>
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
func.func @sqrt_static(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = graph.sqrt %x : tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @sqrt_symbolic(%x: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
// CHECK-NEXT:    %y = graph.sqrt %x : tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:    func.return %y : tensor<?x8xf32, ["N", ""]>
func.func @sqrt_symbolic(%x: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
  %y = graph.sqrt %x : tensor<?x8xf32, ["N", ""]>
  func.return %y : tensor<?x8xf32, ["N", ""]>
}

// CHECK-LABEL: func.func @sqrt_rank0_f16(%x: tensor<f16>) -> tensor<f16> {
// CHECK-NEXT:    %y = graph.sqrt %x : tensor<f16>
// CHECK-NEXT:    func.return %y : tensor<f16>
func.func @sqrt_rank0_f16(%x: tensor<f16>) -> tensor<f16> {
  %y = graph.sqrt %x : tensor<f16>
  func.return %y : tensor<f16>
}

// CHECK-LABEL: func.func @rsqrt_static(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %y = graph.rsqrt %x : tensor<4x8xf32>
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
func.func @rsqrt_static(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = graph.rsqrt %x : tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @rsqrt_symbolic(%x: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
// CHECK-NEXT:    %y = graph.rsqrt %x : tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:    func.return %y : tensor<?x8xf32, ["N", ""]>
func.func @rsqrt_symbolic(%x: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
  %y = graph.rsqrt %x : tensor<?x8xf32, ["N", ""]>
  func.return %y : tensor<?x8xf32, ["N", ""]>
}

// CHECK-LABEL: func.func @rsqrt_rank0_f16(%x: tensor<f16>) -> tensor<f16> {
// CHECK-NEXT:    %y = graph.rsqrt %x : tensor<f16>
// CHECK-NEXT:    func.return %y : tensor<f16>
func.func @rsqrt_rank0_f16(%x: tensor<f16>) -> tensor<f16> {
  %y = graph.rsqrt %x : tensor<f16>
  func.return %y : tensor<f16>
}

// CHECK-LABEL: func.func @sin_static(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %y = graph.sin %x : tensor<4x8xf32>
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
func.func @sin_static(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = graph.sin %x : tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @sin_symbolic(%x: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
// CHECK-NEXT:    %y = graph.sin %x : tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:    func.return %y : tensor<?x8xf32, ["N", ""]>
func.func @sin_symbolic(%x: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
  %y = graph.sin %x : tensor<?x8xf32, ["N", ""]>
  func.return %y : tensor<?x8xf32, ["N", ""]>
}

// CHECK-LABEL: func.func @sin_rank0_f16(%x: tensor<f16>) -> tensor<f16> {
// CHECK-NEXT:    %y = graph.sin %x : tensor<f16>
// CHECK-NEXT:    func.return %y : tensor<f16>
func.func @sin_rank0_f16(%x: tensor<f16>) -> tensor<f16> {
  %y = graph.sin %x : tensor<f16>
  func.return %y : tensor<f16>
}

// CHECK-LABEL: func.func @cos_static(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %y = graph.cos %x : tensor<4x8xf32>
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
func.func @cos_static(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = graph.cos %x : tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @cos_symbolic(%x: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
// CHECK-NEXT:    %y = graph.cos %x : tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:    func.return %y : tensor<?x8xf32, ["N", ""]>
func.func @cos_symbolic(%x: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
  %y = graph.cos %x : tensor<?x8xf32, ["N", ""]>
  func.return %y : tensor<?x8xf32, ["N", ""]>
}

// CHECK-LABEL: func.func @cos_rank0_f16(%x: tensor<f16>) -> tensor<f16> {
// CHECK-NEXT:    %y = graph.cos %x : tensor<f16>
// CHECK-NEXT:    func.return %y : tensor<f16>
func.func @cos_rank0_f16(%x: tensor<f16>) -> tensor<f16> {
  %y = graph.cos %x : tensor<f16>
  func.return %y : tensor<f16>
}

// CHECK-LABEL: func.func @tanh_static(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %y = graph.tanh %x : tensor<4x8xf32>
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
func.func @tanh_static(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = graph.tanh %x : tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @tanh_symbolic(%x: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
// CHECK-NEXT:    %y = graph.tanh %x : tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:    func.return %y : tensor<?x8xf32, ["N", ""]>
func.func @tanh_symbolic(%x: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
  %y = graph.tanh %x : tensor<?x8xf32, ["N", ""]>
  func.return %y : tensor<?x8xf32, ["N", ""]>
}

// CHECK-LABEL: func.func @tanh_rank0_f16(%x: tensor<f16>) -> tensor<f16> {
// CHECK-NEXT:    %y = graph.tanh %x : tensor<f16>
// CHECK-NEXT:    func.return %y : tensor<f16>
func.func @tanh_rank0_f16(%x: tensor<f16>) -> tensor<f16> {
  %y = graph.tanh %x : tensor<f16>
  func.return %y : tensor<f16>
}

// CHECK-LABEL: func.func @erf_static(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %y = graph.erf %x : tensor<4x8xf32>
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
func.func @erf_static(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = graph.erf %x : tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @erf_symbolic(%x: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
// CHECK-NEXT:    %y = graph.erf %x : tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:    func.return %y : tensor<?x8xf32, ["N", ""]>
func.func @erf_symbolic(%x: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
  %y = graph.erf %x : tensor<?x8xf32, ["N", ""]>
  func.return %y : tensor<?x8xf32, ["N", ""]>
}

// CHECK-LABEL: func.func @erf_rank0_f16(%x: tensor<f16>) -> tensor<f16> {
// CHECK-NEXT:    %y = graph.erf %x : tensor<f16>
// CHECK-NEXT:    func.return %y : tensor<f16>
func.func @erf_rank0_f16(%x: tensor<f16>) -> tensor<f16> {
  %y = graph.erf %x : tensor<f16>
  func.return %y : tensor<f16>
}

// CHECK-LABEL: func.func @sigmoid_static(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %y = graph.sigmoid %x : tensor<4x8xf32>
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
func.func @sigmoid_static(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = graph.sigmoid %x : tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @sigmoid_symbolic(%x: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
// CHECK-NEXT:    %y = graph.sigmoid %x : tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:    func.return %y : tensor<?x8xf32, ["N", ""]>
func.func @sigmoid_symbolic(%x: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
  %y = graph.sigmoid %x : tensor<?x8xf32, ["N", ""]>
  func.return %y : tensor<?x8xf32, ["N", ""]>
}

// CHECK-LABEL: func.func @sigmoid_rank0_f16(%x: tensor<f16>) -> tensor<f16> {
// CHECK-NEXT:    %y = graph.sigmoid %x : tensor<f16>
// CHECK-NEXT:    func.return %y : tensor<f16>
func.func @sigmoid_rank0_f16(%x: tensor<f16>) -> tensor<f16> {
  %y = graph.sigmoid %x : tensor<f16>
  func.return %y : tensor<f16>
}

// CHECK-LABEL: func.func @gelu_static(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %y = graph.gelu %x : tensor<4x8xf32>
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
func.func @gelu_static(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = graph.gelu %x : tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @gelu_symbolic(%x: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
// CHECK-NEXT:    %y = graph.gelu %x : tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:    func.return %y : tensor<?x8xf32, ["N", ""]>
func.func @gelu_symbolic(%x: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
  %y = graph.gelu %x : tensor<?x8xf32, ["N", ""]>
  func.return %y : tensor<?x8xf32, ["N", ""]>
}

// CHECK-LABEL: func.func @gelu_rank0_f16(%x: tensor<f16>) -> tensor<f16> {
// CHECK-NEXT:    %y = graph.gelu %x : tensor<f16>
// CHECK-NEXT:    func.return %y : tensor<f16>
func.func @gelu_rank0_f16(%x: tensor<f16>) -> tensor<f16> {
  %y = graph.gelu %x : tensor<f16>
  func.return %y : tensor<f16>
}

// CHECK-LABEL: func.func @silu_static(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %y = graph.silu %x : tensor<4x8xf32>
// CHECK-NEXT:    func.return %y : tensor<4x8xf32>
func.func @silu_static(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = graph.silu %x : tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @silu_symbolic(%x: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
// CHECK-NEXT:    %y = graph.silu %x : tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:    func.return %y : tensor<?x8xf32, ["N", ""]>
func.func @silu_symbolic(%x: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
  %y = graph.silu %x : tensor<?x8xf32, ["N", ""]>
  func.return %y : tensor<?x8xf32, ["N", ""]>
}

// CHECK-LABEL: func.func @silu_rank0_f16(%x: tensor<f16>) -> tensor<f16> {
// CHECK-NEXT:    %y = graph.silu %x : tensor<f16>
// CHECK-NEXT:    func.return %y : tensor<f16>
func.func @silu_rank0_f16(%x: tensor<f16>) -> tensor<f16> {
  %y = graph.silu %x : tensor<f16>
  func.return %y : tensor<f16>
}

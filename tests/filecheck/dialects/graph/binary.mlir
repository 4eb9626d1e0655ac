// RUN: fusec-opt %s | fusec-opt | filecheck %s
// RUN: fusec-opt %s --print-op-generic | fusec-opt | filecheck %s
// Every elementwise binary op of the graph dialect, static and symbolic.

// CHECK-LABEL: func.func @add_static(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %c = graph.add %a, %b : tensor<4x8xf32>
// CHECK-NEXT:    func.return %c : tensor<4x8xf32>
func.func @add_static(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c = graph.add %a, %b : tensor<4x8xf32>
  func.return %c : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @add_symbolic(%a: tensor<?x8xf32, ["N", ""]>, %b: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
// CHECK-NEXT:    %c = graph.add %a, %b : tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:    func.return %c : tensor<?x8xf32, ["N", ""]>
func.func @add_symbolic(%a: tensor<?x8xf32, ["N", ""]>, %b: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
  %c = graph.add %a, %b : tensor<?x8xf32, ["N", ""]>
  func.return %c : tensor<?x8xf32, ["N", ""]>
}

// CHECK-LABEL: func.func @add_rank0_f16(%a: tensor<f16>, %b: tensor<f16>) -> tensor<f16> {
// CHECK-NEXT:    %c = graph.add %a, %b : tensor<f16>
// CHECK-NEXT:    func.return %c : tensor<f16>
func.func @add_rank0_f16(%a: tensor<f16>, %b: tensor<f16>) -> tensor<f16> {
  %c = graph.add %a, %b : tensor<f16>
  func.return %c : tensor<f16>
}

// CHECK-LABEL: func.func @add_int(%a: tensor<?x?xi32, ["B", "N"]>, %b: tensor<?x?xi32, ["B", "N"]>) -> tensor<?x?xi32, ["B", "N"]> {
// CHECK-NEXT:    %c = graph.add %a, %b : tensor<?x?xi32, ["B", "N"]>
// CHECK-NEXT:    func.return %c : tensor<?x?xi32, ["B", "N"]>
func.func @add_int(%a: tensor<?x?xi32, ["B", "N"]>, %b: tensor<?x?xi32, ["B", "N"]>) -> tensor<?x?xi32, ["B", "N"]> {
  %c = graph.add %a, %b : tensor<?x?xi32, ["B", "N"]>
  func.return %c : tensor<?x?xi32, ["B", "N"]>
}

// CHECK-LABEL: func.func @sub_static(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %c = graph.sub %a, %b : tensor<4x8xf32>
// CHECK-NEXT:    func.return %c : tensor<4x8xf32>
func.func @sub_static(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c = graph.sub %a, %b : tensor<4x8xf32>
  func.return %c : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @sub_symbolic(%a: tensor<?x8xf32, ["N", ""]>, %b: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
// CHECK-NEXT:    %c = graph.sub %a, %b : tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:    func.return %c : tensor<?x8xf32, ["N", ""]>
func.func @sub_symbolic(%a: tensor<?x8xf32, ["N", ""]>, %b: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
  %c = graph.sub %a, %b : tensor<?x8xf32, ["N", ""]>
  func.return %c : tensor<?x8xf32, ["N", ""]>
}

// CHECK-LABEL: func.func @sub_rank0_f16(%a: tensor<f16>, %b: tensor<f16>) -> tensor<f16> {
// CHECK-NEXT:    %c = graph.sub %a, %b : tensor<f16>
// CHECK-NEXT:    func.return %c : tensor<f16>
func.func @sub_rank0_f16(%a: tensor<f16>, %b: tensor<f16>) -> tensor<f16> {
  %c = graph.sub %a, %b : tensor<f16>
  func.return %c : tensor<f16>
}

// CHECK-LABEL: func.func @sub_int(%a: tensor<?x?xi32, ["B", "N"]>, %b: tensor<?x?xi32, ["B", "N"]>) -> tensor<?x?xi32, ["B", "N"]> {
// CHECK-NEXT:    %c = graph.sub %a, %b : tensor<?x?xi32, ["B", "N"]>
// CHECK-NEXT:    func.return %c : tensor<?x?xi32, ["B", "N"]>
func.func @sub_int(%a: tensor<?x?xi32, ["B", "N"]>, %b: tensor<?x?xi32, ["B", "N"]>) -> tensor<?x?xi32, ["B", "N"]> {
  %c = graph.sub %a, %b : tensor<?x?xi32, ["B", "N"]>
  func.return %c : tensor<?x?xi32, ["B", "N"]>
}

// CHECK-LABEL: func.func @mul_static(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %c = graph.mul %a, %b : tensor<4x8xf32>
// CHECK-NEXT:    func.return %c : tensor<4x8xf32>
func.func @mul_static(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c = graph.mul %a, %b : tensor<4x8xf32>
  func.return %c : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @mul_symbolic(%a: tensor<?x8xf32, ["N", ""]>, %b: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
// CHECK-NEXT:    %c = graph.mul %a, %b : tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:    func.return %c : tensor<?x8xf32, ["N", ""]>
func.func @mul_symbolic(%a: tensor<?x8xf32, ["N", ""]>, %b: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
  %c = graph.mul %a, %b : tensor<?x8xf32, ["N", ""]>
  func.return %c : tensor<?x8xf32, ["N", ""]>
}

// CHECK-LABEL: func.func @mul_rank0_f16(%a: tensor<f16>, %b: tensor<f16>) -> tensor<f16> {
// CHECK-NEXT:    %c = graph.mul %a, %b : tensor<f16>
// CHECK-NEXT:    func.return %c : tensor<f16>
func.func @mul_rank0_f16(%a: tensor<f16>, %b: tensor<f16>) -> tensor<f16> {
  %c = graph.mul %a, %b : tensor<f16>
  func.return %c : tensor<f16>
}

// CHECK-LABEL: func.func @mul_int(%a: tensor<?x?xi32, ["B", "N"]>, %b: tensor<?x?xi32, ["B", "N"]>) -> tensor<?x?xi32, ["B", "N"]> {
// CHECK-NEXT:    %c = graph.mul %a, %b : tensor<?x?xi32, ["B", "N"]>
// CHECK-NEXT:    func.return %c : tensor<?x?xi32, ["B", "N"]>
func.func @mul_int(%a: tensor<?x?xi32, ["B", "N"]>, %b: tensor<?x?xi32, ["B", "N"]>) -> tensor<?x?xi32, ["B", "N"]> {
  %c = graph.mul %a, %b : tensor<?x?xi32, ["B", "N"]>
  func.return %c : tensor<?x?xi32, ["B", "N"]>
}

// CHECK-LABEL: func.func @div_static(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %c = graph.div %a, %b : tensor<4x8xf32>
// CHECK-NEXT:    func.return %c : tensor<4x8xf32>
func.func @div_static(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c = graph.div %a, %b : tensor<4x8xf32>
  func.return %c : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @div_symbolic(%a: tensor<?x8xf32, ["N", ""]>, %b: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
// CHECK-NEXT:    %c = graph.div %a, %b : tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:    func.return %c : tensor<?x8xf32, ["N", ""]>
func.func @div_symbolic(%a: tensor<?x8xf32, ["N", ""]>, %b: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
  %c = graph.div %a, %b : tensor<?x8xf32, ["N", ""]>
  func.return %c : tensor<?x8xf32, ["N", ""]>
}

// CHECK-LABEL: func.func @div_rank0_f16(%a: tensor<f16>, %b: tensor<f16>) -> tensor<f16> {
// CHECK-NEXT:    %c = graph.div %a, %b : tensor<f16>
// CHECK-NEXT:    func.return %c : tensor<f16>
func.func @div_rank0_f16(%a: tensor<f16>, %b: tensor<f16>) -> tensor<f16> {
  %c = graph.div %a, %b : tensor<f16>
  func.return %c : tensor<f16>
}

// CHECK-LABEL: func.func @pow_static(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %c = graph.pow %a, %b : tensor<4x8xf32>
// CHECK-NEXT:    func.return %c : tensor<4x8xf32>
func.func @pow_static(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c = graph.pow %a, %b : tensor<4x8xf32>
  func.return %c : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @pow_symbolic(%a: tensor<?x8xf32, ["N", ""]>, %b: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
// CHECK-NEXT:    %c = graph.pow %a, %b : tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:    func.return %c : tensor<?x8xf32, ["N", ""]>
func.func @pow_symbolic(%a: tensor<?x8xf32, ["N", ""]>, %b: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
  %c = graph.pow %a, %b : tensor<?x8xf32, ["N", ""]>
  func.return %c : tensor<?x8xf32, ["N", ""]>
}

// CHECK-LABEL: func.func @pow_rank0_f16(%a: tensor<f16>, %b: tensor<f16>) -> tensor<f16> {
// CHECK-NEXT:    %c = graph.pow %a, %b : tensor<f16>
// CHECK-NEXT:    func.return %c : tensor<f16>
func.func @pow_rank0_f16(%a: tensor<f16>, %b: tensor<f16>) -> tensor<f16> {
  %c = graph.pow %a, %b : tensor<f16>
  func.return %c : tensor<f16>
}

// CHECK-LABEL: func.func @pow_int(%a: tensor<?x?xi32, ["B", "N"]>, %b: tensor<?x?xi32, ["B", "N"]>) -> tensor<?x?xi32, ["B", "N"]> {
// CHECK-NEXT:    %c = graph.pow %a, %b : tensor<?x?xi32, ["B", "N"]>
// CHECK-NEXT:    func.return %c : tensor<?x?xi32, ["B", "N"]>
func.func @pow_int(%a: tensor<?x?xi32, ["B", "N"]>, %b: tensor<?x?xi32, ["B", "N"]>) -> tensor<?x?xi32, ["B", "N"]> {
  %c = graph.pow %a, %b : tensor<?x?xi32, ["B", "N"]>
  func.return %c : tensor<?x?xi32, ["B", "N"]>
}

// CHECK-LABEL: func.func @maximum_static(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %c = graph.maximum %a, %b : tensor<4x8xf32>
// CHECK-NEXT:    func.return %c : tensor<4x8xf32>
func.func @maximum_static(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c = graph.maximum %a, %b : tensor<4x8xf32>
  func.return %c : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @maximum_symbolic(%a: tensor<?x8xf32, ["N", ""]>, %b: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
// CHECK-NEXT:    %c = graph.maximum %a, %b : tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:    func.return %c : tensor<?x8xf32, ["N", ""]>
func.func @maximum_symbolic(%a: tensor<?x8xf32, ["N", ""]>, %b: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
  %c = graph.maximum %a, %b : tensor<?x8xf32, ["N", ""]>
  func.return %c : tensor<?x8xf32, ["N", ""]>
}

// CHECK-LABEL: func.func @maximum_rank0_f16(%a: tensor<f16>, %b: tensor<f16>) -> tensor<f16> {
// CHECK-NEXT:    %c = graph.maximum %a, %b : tensor<f16>
// CHECK-NEXT:    func.return %c : tensor<f16>
func.func @maximum_rank0_f16(%a: tensor<f16>, %b: tensor<f16>) -> tensor<f16> {
  %c = graph.maximum %a, %b : tensor<f16>
  func.return %c : tensor<f16>
}

// CHECK-LABEL: func.func @maximum_int(%a: tensor<?x?xi32, ["B", "N"]>, %b: tensor<?x?xi32, ["B", "N"]>) -> tensor<?x?xi32, ["B", "N"]> {
// CHECK-NEXT:    %c = graph.maximum %a, %b : tensor<?x?xi32, ["B", "N"]>
// CHECK-NEXT:    func.return %c : tensor<?x?xi32, ["B", "N"]>
func.func @maximum_int(%a: tensor<?x?xi32, ["B", "N"]>, %b: tensor<?x?xi32, ["B", "N"]>) -> tensor<?x?xi32, ["B", "N"]> {
  %c = graph.maximum %a, %b : tensor<?x?xi32, ["B", "N"]>
  func.return %c : tensor<?x?xi32, ["B", "N"]>
}

// CHECK-LABEL: func.func @minimum_static(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT:    %c = graph.minimum %a, %b : tensor<4x8xf32>
// CHECK-NEXT:    func.return %c : tensor<4x8xf32>
func.func @minimum_static(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c = graph.minimum %a, %b : tensor<4x8xf32>
  func.return %c : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @minimum_symbolic(%a: tensor<?x8xf32, ["N", ""]>, %b: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
// CHECK-NEXT:    %c = graph.minimum %a, %b : tensor<?x8xf32, ["N", ""]>
// CHECK-NEXT:    func.return %c : tensor<?x8xf32, ["N", ""]>
func.func @minimum_symbolic(%a: tensor<?x8xf32, ["N", ""]>, %b: tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]> {
  %c = graph.minimum %a, %b : tensor<?x8xf32, ["N", ""]>
  func.return %c : tensor<?x8xf32, ["N", ""]>
}

// CHECK-LABEL: func.func @minimum_rank0_f16(%a: tensor<f16>, %b: tensor<f16>) -> tensor<f16> {
// CHECK-NEXT:    %c = graph.minimum %a, %b : tensor<f16>
// CHECK-NEXT:    func.return %c : tensor<f16>
func.func @minimum_rank0_f16(%a: tensor<f16>, %b: tensor<f16>) -> tensor<f16> {
  %c = graph.minimum %a, %b : tensor<f16>
  func.return %c : tensor<f16>
}

// CHECK-LABEL: func.func @minimum_int(%a: tensor<?x?xi32, ["B", "N"]>, %b: tensor<?x?xi32, ["B", "N"]>) -> tensor<?x?xi32, ["B", "N"]> {
// CHECK-NEXT:    %c = graph.minimum %a, %b : tensor<?x?xi32, ["B", "N"]>
// CHECK-NEXT:    func.return %c : tensor<?x?xi32, ["B", "N"]>
func.func @minimum_int(%a: tensor<?x?xi32, ["B", "N"]>, %b: tensor<?x?xi32, ["B", "N"]>) -> tensor<?x?xi32, ["B", "N"]> {
  %c = graph.minimum %a, %b : tensor<?x?xi32, ["B", "N"]>
  func.return %c : tensor<?x?xi32, ["B", "N"]>
}

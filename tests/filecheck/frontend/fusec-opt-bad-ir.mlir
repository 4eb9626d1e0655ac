// RUN: fusec-opt %s --split-input-file --parsing-diagnostics --verify-diagnostics | filecheck %s
// RUN: not fusec-opt %s -p lower-to-loops 2>&1 | filecheck %s --check-prefix=FIRST
// IR fusec's passes cannot take is refused as fusec-opt reads it, one message each (issue
// 46: each ended in a traceback). Types: an element type fusec does not have, size names
// of another rank; a value used before its definition (its own result, a cycle of two
// ops), which xDSL's verifier does not check; a literal xDSL's parser fails on.
// Read whole (the second RUN line), the file's first error is the one reported, exit status 1:
// FIRST: {{^}}fusec-opt: error: {{.*}}fusec-opt-bad-ir.mlir:{{[0-9]+}}:18{{$}}
// FIRST: {{^ *}}%0 is used before it is defined{{$}}
// FIRST-NOT: Traceback
// CHECK-NOT: Traceback

// CHECK: {{^}}'{{.*}}fusec-opt-bad-ir.mlir': func.func: type tensor<4xui32> has element type ui32, which is none of fusec's (bf16, f16, f32, f64, i32, i64, i1){{$}}
func.func @unsigned(%x: tensor<4xui32>) -> tensor<ui32> {
  %0 = graph.reduce sum %x axes = [0] : tensor<4xui32> -> tensor<ui32>
  func.return %0 : tensor<ui32>
}

// -----

// CHECK: {{^}}'{{.*}}fusec-opt-bad-ir.mlir': func.func: type tensor<complex<f32>> has element type complex<f32>, which is none of fusec's (bf16, f16, f32, f64, i32, i64, i1){{$}}
func.func @complex(%x: tensor<complex<f32>>) -> tensor<complex<f32>> {
  func.return %x : tensor<complex<f32>>
}

// -----

// CHECK: {{^}}'{{.*}}fusec-opt-bad-ir.mlir': func.func: type tensor<2x4xf32, ["N"]> must name each dynamic size, and only those, in its encoding{{$}}
func.func @names(%x: tensor<2x4xf32, ["N"]>) -> tensor<2x4xf32, ["N"]> {
  func.return %x : tensor<2x4xf32, ["N"]>
}

// -----

// CHECK: {{^}}'{{.*}}fusec-opt-bad-ir.mlir': graph.softmax: type f80 is none of fusec's types (tensors, memrefs and bf16, f16, f32, f64, i32, i64, i1, index){{$}}
func.func @float_of_80_bits(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = "graph.softmax"(%a) <{axis = 1 : f80}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %0 : tensor<4x8xf32>
}

// -----

// CHECK:      {{^}}{{.*}}fusec-opt-bad-ir.mlir:{{[0-9]+}}:18{{$}}
// CHECK-NEXT: {{^}}  %0 = graph.exp %0 : tensor<4xf32>{{$}}
// CHECK:      {{^ *}}%0 is used before it is defined{{$}}
func.func @self_use(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.exp %0 : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

// CHECK:      {{^}}{{.*}}fusec-opt-bad-ir.mlir:{{[0-9]+}}:25{{$}}
// CHECK-NEXT: {{^}}  %0 = graph.matmul %x, %1 : {{.*}}{{$}}
// CHECK:      {{^ *}}%1 is used before it is defined{{$}}
func.func @cycle(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = graph.matmul %x, %1 : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %1 = graph.softmax %0 axis = 1 : tensor<4x4xf32>
  func.return %1 : tensor<4x4xf32>
}

// -----

// CHECK:      {{^}}{{.*}}fusec-opt-bad-ir.mlir:{{[0-9]+}}:3{{$}}
// CHECK-NEXT: {{^}}  %0 = graph.constant dense<2.0> : tensor<complex<f32>>{{$}}
// CHECK:      {{^ *}}xDSL's parser failed on this op (AssertionError){{$}}
func.func @complex_literal() -> tensor<f32> {
  %0 = graph.constant dense<2.0> : tensor<complex<f32>>
  %1 = graph.constant dense<2.0> : tensor<f32>
  func.return %1 : tensor<f32>
}

// RUN: not fusec-opt %s 2>&1 | filecheck --strict-whitespace %s
// RUN: not fusec-opt %s -t llvm 2>&1 | filecheck --strict-whitespace %s --check-prefix=TARGET
// An i64 array element of 2^63 does not fit: one line and exit status 1, no traceback
// (xDSL's packing of the array raised struct.error). fusec-opt prints IR only: xDSL's
// other output formats know none of fusec's dialects (-t llvm raised NotImplementedError),
// so naming one is a usage error.
// CHECK: {{^}}fusec-opt: error: '{{.*}}fusec-opt-out-of-range.mlir': a number out of range for its type (argument out of range){{$}}
// CHECK-NOT: {{Traceback|builtin.module}}
// TARGET: {{^}}{{.*}}: error: argument -t/--target: invalid choice: 'llvm' (choose from mlir){{$}}
// TARGET-NOT: Traceback

func.func @main(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %0 = graph.reduce sum %x axes = [9223372036854775808] : tensor<4x8xf32> -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

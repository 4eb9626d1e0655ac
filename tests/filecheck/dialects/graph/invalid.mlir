// RUN: fusec-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: fusec-opt %s --split-input-file --verify-diagnostics | filecheck %s --check-prefix=NONE
// Every verifier rule of the graph dialect, one chunk each: the first line of each
// chunk's output is the verifier's message (the annotated IR follows it). Most of
// these cannot even be spelled in the custom forms, so the ops are generic. A type
// fusec's IR does not have (size names that are not the dynamic sizes) is refused as
// fusec-opt reads the chunk, before the verifier: its message names the file and the op.
// No chunk verifies (one that did would print in custom form):
// NONE-NOT: {{^}}builtin.module

// CHECK: {{^}}'{{.*}}invalid.mlir': func.func: type tensor<4xf32, ["N"]> must name each dynamic size, and only those, in its encoding
func.func @encoding_names_static_dim(%a: tensor<4xf32, ["N"]>) {
  %0 = "graph.exp"(%a) : (tensor<4xf32, ["N"]>) -> tensor<4xf32, ["N"]>
  func.return
}

// -----

// CHECK: {{^}}'{{.*}}invalid.mlir': func.func: type tensor<?xf32> must name each dynamic size, and only those, in its encoding
func.func @dynamic_dim_unnamed(%a: tensor<?xf32>) {
  %0 = "graph.exp"(%a) : (tensor<?xf32>) -> tensor<?xf32>
  func.return
}

// -----

// CHECK: {{^}}'{{.*}}invalid.mlir': func.func: type tensor<?x4xf32, ["N"]> must name each dynamic size, and only those, in its encoding
func.func @encoding_wrong_length(%a: tensor<?x4xf32, ["N"]>) {
  %0 = "graph.neg"(%a) : (tensor<?x4xf32, ["N"]>) -> tensor<?x4xf32, ["N"]>
  func.return
}

// -----

// CHECK: {{^}}'{{.*}}invalid.mlir': func.func: type tensor<?xf32, [""]> must name each dynamic size, and only those, in its encoding
func.func @encoding_empty_name(%a: tensor<?xf32, [""]>) {
  %0 = "graph.neg"(%a) : (tensor<?xf32, [""]>) -> tensor<?xf32, [""]>
  func.return
}

// -----

// CHECK: {{^}}'{{.*}}invalid.mlir': func.func: type tensor<?xf32, [1 : i64]> must name each dynamic size, and only those, in its encoding
func.func @encoding_not_strings(%a: tensor<?xf32, [1]>) {
  %0 = "graph.neg"(%a) : (tensor<?xf32, [1]>) -> tensor<?xf32, [1]>
  func.return
}

// -----

// CHECK: {{^}}'{{.*}}invalid.mlir': graph.broadcast: type tensor<2x4x8xf32, ["M", "", ""]> must name each dynamic size, and only those, in its encoding
func.func @result_encoding(%a: tensor<4x8xf32>) {
  %0 = "graph.broadcast"(%a) : (tensor<4x8xf32>) -> tensor<2x4x8xf32, ["M", "", ""]>
  func.return
}

// -----

// CHECK: {{^}}'{{.*}}invalid.mlir': graph.constant: type tensor<4xf32, ["N"]> must name each dynamic size, and only those, in its encoding
func.func @constant_encoding() {
  %0 = "graph.constant"() <{value = dense<1.0> : tensor<4xf32, ["N"]>}> : () -> tensor<4xf32, ["N"]>
  func.return
}

// -----

// CHECK: {{^}}graph.exp expects floating-point tensors, got tensor<4x8xi32>
func.func @unary_float_only(%a: tensor<4x8xi32>) {
  %0 = "graph.exp"(%a) : (tensor<4x8xi32>) -> tensor<4x8xi32>
  func.return
}

// -----

// CHECK: {{^}}graph.gelu expects floating-point tensors, got tensor<4x8xi32>
func.func @unary_gelu_int(%a: tensor<4x8xi32>) {
  %0 = "graph.gelu"(%a) : (tensor<4x8xi32>) -> tensor<4x8xi32>
  func.return
}

// -----

// CHECK: {{^}}graph.neg does not take bool tensors
func.func @unary_bool(%a: tensor<4x8xi1>) {
  %0 = "graph.neg"(%a) : (tensor<4x8xi1>) -> tensor<4x8xi1>
  func.return
}

// -----

// CHECK: {{^}}result 'result' at position 0 does not verify:
// CHECK-NEXT: attribute tensor<4x8xf32> expected from variable 'T', but got tensor<4x8xf16>
func.func @unary_result_type(%a: tensor<4x8xf32>) {
  %0 = "graph.exp"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf16>
  func.return
}

// -----

// CHECK: {{^}}graph.add does not take bool tensors
func.func @binary_bool(%a: tensor<4x8xi1>, %b: tensor<4x8xi1>) {
  %0 = "graph.add"(%a, %b) : (tensor<4x8xi1>, tensor<4x8xi1>) -> tensor<4x8xi1>
  func.return
}

// -----

// CHECK: {{^}}graph.div expects floating-point tensors, got tensor<4x8xi32>
func.func @binary_div_int(%a: tensor<4x8xi32>, %b: tensor<4x8xi32>) {
  %0 = "graph.div"(%a, %b) : (tensor<4x8xi32>, tensor<4x8xi32>) -> tensor<4x8xi32>
  func.return
}

// -----

// CHECK: {{^}}operand 'rhs' at position 1 does not verify:
// CHECK-NEXT: attribute tensor<4x8xf32> expected from variable 'T', but got tensor<?x8xf32, ["N", ""]>
func.func @binary_types_differ(%a: tensor<4x8xf32>, %b: tensor<?x8xf32, ["N", ""]>) {
  %0 = "graph.mul"(%a, %b) : (tensor<4x8xf32>, tensor<?x8xf32, ["N", ""]>) -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: {{^}}operand 'rhs' at position 1 does not verify:
// CHECK-NEXT: attribute tensor<4x8xf32> expected from variable 'T', but got tensor<8xf32>
func.func @binary_shapes_differ(%a: tensor<4x8xf32>, %b: tensor<8xf32>) {
  %0 = "graph.sub"(%a, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: {{^}}result must be a bool tensor of the operands' shape, got tensor<4x8xf32>
func.func @cmp_not_bool(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) {
  %0 = "graph.cmp"(%a, %b) <{predicate = #graph<predicate lt>}> : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: {{^}}result must be a bool tensor of the operands' shape, got tensor<4xi1>
func.func @cmp_wrong_shape(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) {
  %0 = "graph.cmp"(%a, %b) <{predicate = #graph<predicate eq>}> : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4xi1>
  func.return
}

// -----

// CHECK: {{^}}condition must be a bool tensor, got tensor<4x8xf32>
func.func @select_cond_not_bool(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>, %c: tensor<4x8xf32>) {
  %0 = "graph.select"(%a, %b, %c) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: {{^}}condition shape [8] differs from the values' [4, 8]
func.func @select_cond_shape(%a: tensor<8xi1>, %b: tensor<4x8xf32>, %c: tensor<4x8xf32>) {
  %0 = "graph.select"(%a, %b, %c) : (tensor<8xi1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: {{^}}operand 'false_value' at position 2 does not verify:
// CHECK-NEXT: attribute tensor<4x8xf32> expected from variable 'T', but got tensor<4x8xi32>
func.func @select_values_differ(%a: tensor<4x8xi1>, %b: tensor<4x8xf32>, %c: tensor<4x8xi32>) {
  %0 = "graph.select"(%a, %b, %c) : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xi32>) -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: {{^}}cast must keep the shape
func.func @cast_shape(%a: tensor<4x8xf32>) {
  %0 = "graph.cast"(%a) : (tensor<4x8xf32>) -> tensor<8x4xf16>
  func.return
}

// -----

// CHECK: {{^}}attribute tensor<f64> expected from variable 'T', but got tensor<f32>
func.func @constant_type() {
  %0 = "graph.constant"() <{value = dense<1.0> : tensor<f32>}> : () -> tensor<f64>
  func.return
}

// -----

// CHECK: {{^}}dimension 2 out of range for rank 2
func.func @dim_size_range(%a: tensor<?x8xf32, ["N", ""]>) {
  %0 = "graph.dim_size"(%a) <{index = 2 : i64}> : (tensor<?x8xf32, ["N", ""]>) -> tensor<f32>
  func.return
}

// -----

// CHECK: {{^}}dimension -1 out of range for rank 2
func.func @dim_size_negative(%a: tensor<?x8xf32, ["N", ""]>) {
  %0 = "graph.dim_size"(%a) <{index = -1 : i64}> : (tensor<?x8xf32, ["N", ""]>) -> tensor<f32>
  func.return
}

// -----

// CHECK: {{^}}result must be a rank-0 tensor
func.func @dim_size_rank(%a: tensor<?x8xf32, ["N", ""]>) {
  %0 = "graph.dim_size"(%a) <{index = 0 : i64}> : (tensor<?x8xf32, ["N", ""]>) -> tensor<1xf32>
  func.return
}

// -----

// CHECK: {{^}}broadcast must keep the element type
func.func @broadcast_dtype(%a: tensor<8xf32>) {
  %0 = "graph.broadcast"(%a) : (tensor<8xf32>) -> tensor<4x8xf16>
  func.return
}

// -----

// CHECK: {{^}}cannot broadcast [3] to [4, 8]
func.func @broadcast_incompatible(%a: tensor<3xf32>) {
  %0 = "graph.broadcast"(%a) : (tensor<3xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: {{^}}cannot broadcast [4, 8] to [8]
func.func @broadcast_shrinks(%a: tensor<4x8xf32>) {
  %0 = "graph.broadcast"(%a) : (tensor<4x8xf32>) -> tensor<8xf32>
  func.return
}

// -----

// CHECK: {{^}}cannot broadcast [3] to [1]
func.func @broadcast_to_one(%a: tensor<3xf32>) {
  %0 = "graph.broadcast"(%a) : (tensor<3xf32>) -> tensor<1xf32>
  func.return
}

// -----

// CHECK: {{^}}cannot broadcast [M] to [4, N]
func.func @broadcast_names_differ(%a: tensor<?xf32, ["M"]>) {
  %0 = "graph.broadcast"(%a) : (tensor<?xf32, ["M"]>) -> tensor<4x?xf32, ["", "N"]>
  func.return
}

// -----

// CHECK: {{^}}invalid reduction axes [1, 0] for rank 2
func.func @reduce_axes_unsorted(%a: tensor<4x8xf32>) {
  %0 = "graph.reduce"(%a) <{kind = #graph<reduce_kind sum>, axes = array<i64: 1, 0>}> : (tensor<4x8xf32>) -> tensor<f32>
  func.return
}

// -----

// CHECK: {{^}}invalid reduction axes [1, 1] for rank 2
func.func @reduce_axes_duplicate(%a: tensor<4x8xf32>) {
  %0 = "graph.reduce"(%a) <{kind = #graph<reduce_kind sum>, axes = array<i64: 1, 1>}> : (tensor<4x8xf32>) -> tensor<4xf32>
  func.return
}

// -----

// CHECK: {{^}}invalid reduction axes [2] for rank 2
func.func @reduce_axes_range(%a: tensor<4x8xf32>) {
  %0 = "graph.reduce"(%a) <{kind = #graph<reduce_kind max>, axes = array<i64: 2>}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: {{^}}invalid reduction axes [-1] for rank 2
func.func @reduce_axes_negative(%a: tensor<4x8xf32>) {
  %0 = "graph.reduce"(%a) <{kind = #graph<reduce_kind max>, axes = array<i64: -1>}> : (tensor<4x8xf32>) -> tensor<4xf32>
  func.return
}

// -----

// CHECK: {{^}}result type tensor<4x1xf32> does not match the reduction of tensor<4x8xf32>
func.func @reduce_result_shape(%a: tensor<4x8xf32>) {
  %0 = "graph.reduce"(%a) <{kind = #graph<reduce_kind sum>, axes = array<i64: 1>}> : (tensor<4x8xf32>) -> tensor<4x1xf32>
  func.return
}

// -----

// CHECK: {{^}}result type tensor<4xf32> does not match the reduction of tensor<4x8xf32>
func.func @reduce_keepdims_shape(%a: tensor<4x8xf32>) {
  %0 = "graph.reduce"(%a) <{kind = #graph<reduce_kind sum>, axes = array<i64: 1>, keepdims}> : (tensor<4x8xf32>) -> tensor<4xf32>
  func.return
}

// -----

// CHECK: {{^}}result type tensor<4xf64> does not match the reduction of tensor<4x8xf32>
func.func @reduce_result_dtype(%a: tensor<4x8xf32>) {
  %0 = "graph.reduce"(%a) <{kind = #graph<reduce_kind sum>, axes = array<i64: 1>}> : (tensor<4x8xf32>) -> tensor<4xf64>
  func.return
}

// -----

// CHECK: {{^}}mean expects a floating-point tensor
func.func @reduce_mean_int(%a: tensor<4x8xi32>) {
  %0 = "graph.reduce"(%a) <{kind = #graph<reduce_kind mean>, axes = array<i64: 1>}> : (tensor<4x8xi32>) -> tensor<4xi32>
  func.return
}

// -----

// CHECK: {{^}}reductions other than any and all do not take bool tensors
func.func @reduce_bool(%a: tensor<4x8xi1>) {
  %0 = "graph.reduce"(%a) <{kind = #graph<reduce_kind max>, axes = array<i64: 1>}> : (tensor<4x8xi1>) -> tensor<4xi1>
  func.return
}

// -----

// CHECK: {{^}}any takes bool tensors
func.func @reduce_any_float(%a: tensor<4x8xf32>) {
  %0 = "graph.reduce"(%a) <{kind = #graph<reduce_kind any>, axes = array<i64: 1>}> : (tensor<4x8xf32>) -> tensor<4xf32>
  func.return
}

// -----

// CHECK: {{^}}argmax reduces one axis or all of them, not [0, 1]
func.func @reduce_argmax_two_axes(%a: tensor<2x3x4xf32>) {
  %0 = "graph.reduce"(%a) <{kind = #graph<reduce_kind argmax>, axes = array<i64: 0, 1>}> : (tensor<2x3x4xf32>) -> tensor<4xi64>
  func.return
}

// -----

// CHECK: {{^}}result type tensor<4xf32> does not match the reduction of tensor<4x8xf32>
func.func @reduce_argmin_value_type(%a: tensor<4x8xf32>) {
  %0 = "graph.reduce"(%a) <{kind = #graph<reduce_kind argmin>, axes = array<i64: 1>}> : (tensor<4x8xf32>) -> tensor<4xf32>
  func.return
}

// -----

// CHECK: {{^}}graph.var expects a floating-point tensor
func.func @var_int(%a: tensor<4x8xi32>) {
  %0 = "graph.var"(%a) <{axes = array<i64: 1>, ddof = 0.0 : f64}> : (tensor<4x8xi32>) -> tensor<4xi32>
  func.return
}

// -----

// CHECK: {{^}}matmul operands and result must share one element type
func.func @matmul_dtype(%a: tensor<4x8xf32>, %b: tensor<8x2xf16>) {
  %0 = "graph.matmul"(%a, %b) : (tensor<4x8xf32>, tensor<8x2xf16>) -> tensor<4x2xf32>
  func.return
}

// -----

// CHECK: {{^}}matmul operands and result must share one element type
func.func @matmul_result_dtype(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) {
  %0 = "graph.matmul"(%a, %b) : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf64>
  func.return
}

// -----

// CHECK: {{^}}matmul does not take bool tensors
func.func @matmul_bool(%a: tensor<4x8xi1>, %b: tensor<8x2xi1>) {
  %0 = "graph.matmul"(%a, %b) : (tensor<4x8xi1>, tensor<8x2xi1>) -> tensor<4x2xi1>
  func.return
}

// -----

// CHECK: {{^}}cannot multiply [4, 8] by [4, 2]
func.func @matmul_inner(%a: tensor<4x8xf32>, %b: tensor<4x2xf32>) {
  %0 = "graph.matmul"(%a, %b) : (tensor<4x8xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  func.return
}

// -----

// CHECK: {{^}}cannot multiply [4, 8] by [8]
func.func @matmul_rank1(%a: tensor<4x8xf32>, %b: tensor<8xf32>) {
  %0 = "graph.matmul"(%a, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4xf32>
  func.return
}

// -----

// CHECK: {{^}}cannot multiply [2, 4, 8] by [3, 8, 2]
func.func @matmul_batch(%a: tensor<2x4x8xf32>, %b: tensor<3x8x2xf32>) {
  %0 = "graph.matmul"(%a, %b) : (tensor<2x4x8xf32>, tensor<3x8x2xf32>) -> tensor<2x4x2xf32>
  func.return
}

// -----

// CHECK: {{^}}cannot multiply [N, 8] by [M, 2]
func.func @matmul_symbolic_inner(%a: tensor<?x8xf32, ["N", ""]>, %b: tensor<?x2xf32, ["M", ""]>) {
  %0 = "graph.matmul"(%a, %b) : (tensor<?x8xf32, ["N", ""]>, tensor<?x2xf32, ["M", ""]>) -> tensor<?x2xf32, ["N", ""]>
  func.return
}

// -----

// CHECK: {{^}}cannot multiply [4, 8] by [16, 8]
func.func @matmul_transposed_inner(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) {
  %0 = "graph.matmul"(%a, %b) <{transpose_rhs}> : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: {{^}}result shape should be [4, 2]
func.func @matmul_result_shape(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) {
  %0 = "graph.matmul"(%a, %b) : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<2x4xf32>
  func.return
}

// -----

// CHECK: {{^}}[0, 0] is not a permutation of the 2 axes
func.func @transpose_not_perm(%a: tensor<4x8xf32>) {
  %0 = "graph.transpose"(%a) <{perm = array<i64: 0, 0>}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: {{^}}[0] is not a permutation of the 2 axes
func.func @transpose_perm_rank(%a: tensor<4x8xf32>) {
  %0 = "graph.transpose"(%a) <{perm = array<i64: 0>}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: {{^}}result type tensor<4x8xf32> is not the transpose of tensor<4x8xf32>
func.func @transpose_result(%a: tensor<4x8xf32>) {
  %0 = "graph.transpose"(%a) <{perm = array<i64: 1, 0>}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: {{^}}result type tensor<8x4xf16> is not the transpose of tensor<4x8xf32>
func.func @transpose_dtype(%a: tensor<4x8xf32>) {
  %0 = "graph.transpose"(%a) <{perm = array<i64: 1, 0>}> : (tensor<4x8xf32>) -> tensor<8x4xf16>
  func.return
}

// -----

// CHECK: {{^}}operand shapes [4, 8] and [4, 3] differ outside axis 0
func.func @concat_other_axis(%a: tensor<4x8xf32>, %b: tensor<4x3xf32>) {
  %0 = "graph.concat"(%a, %b) <{axis = 0 : i64}> : (tensor<4x8xf32>, tensor<4x3xf32>) -> tensor<8x8xf32>
  func.return
}

// -----

// CHECK: {{^}}axis 2 out of range for rank 2
func.func @concat_axis(%a: tensor<4x8xf32>) {
  %0 = "graph.concat"(%a, %a) <{axis = 2 : i64}> : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: {{^}}the operands of concat must have one element type
func.func @concat_dtype(%a: tensor<4x8xf32>, %b: tensor<4x8xi32>) {
  %0 = "graph.concat"(%a, %b) <{axis = 0 : i64}> : (tensor<4x8xf32>, tensor<4x8xi32>) -> tensor<8x8xf32>
  func.return
}

// -----

// CHECK: {{^}}the sizes N + 4 along axis 0 sum to no size fusec can name
func.func @concat_unnamed_sum(%a: tensor<?x8xf32, ["N", ""]>, %b: tensor<4x8xf32>) {
  %0 = "graph.concat"(%a, %b) <{axis = 0 : i64}> : (tensor<?x8xf32, ["N", ""]>, tensor<4x8xf32>) -> tensor<?x8xf32, ["N", ""]>
  func.return
}

// -----

// CHECK: {{^}}result type tensor<4x16xf32> should be tensor<8x8xf32>
func.func @concat_result(%a: tensor<4x8xf32>) {
  %0 = "graph.concat"(%a, %a) <{axis = 0 : i64}> : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
  func.return
}

// -----

// CHECK: {{^}}pad needs 2 low and high widths, one per axis
func.func @pad_widths_rank(%a: tensor<4x8xf32>) {
  %0 = "graph.pad"(%a) <{low = array<i64: 1>, high = array<i64: 1>, value = 0.0 : f64}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: {{^}}pad widths must be non-negative
func.func @pad_negative(%a: tensor<4x8xf32>) {
  %0 = "graph.pad"(%a) <{low = array<i64: 0, -1>, high = array<i64: 0, 1>, value = 0.0 : f64}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: {{^}}size N padded by 1 is no size fusec can name
func.func @pad_symbolic(%a: tensor<?x8xf32, ["N", ""]>) {
  %0 = "graph.pad"(%a) <{low = array<i64: 1, 0>, high = array<i64: 0, 0>, value = 0.0 : f64}> : (tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["N", ""]>
  func.return
}

// -----

// CHECK: {{^}}result type tensor<4x8xf32> should be tensor<4x10xf32>
func.func @pad_result(%a: tensor<4x8xf32>) {
  %0 = "graph.pad"(%a) <{low = array<i64: 0, 1>, high = array<i64: 0, 1>, value = 0.0 : f64}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: {{^}}cannot reshape [4, 8] to [30]: element counts differ
func.func @reshape_count(%a: tensor<4x8xf32>) {
  %0 = "graph.reshape"(%a) : (tensor<4x8xf32>) -> tensor<30xf32>
  func.return
}

// -----

// CHECK: {{^}}cannot reshape [N, 8] to [M, 8]: element counts differ
func.func @reshape_names(%a: tensor<?x8xf32, ["N", ""]>) {
  %0 = "graph.reshape"(%a) : (tensor<?x8xf32, ["N", ""]>) -> tensor<?x8xf32, ["M", ""]>
  func.return
}

// -----

// CHECK: {{^}}cannot reshape [N, 8] to [8]: element counts differ
func.func @reshape_drops_name(%a: tensor<?x8xf32, ["N", ""]>) {
  %0 = "graph.reshape"(%a) : (tensor<?x8xf32, ["N", ""]>) -> tensor<8xf32>
  func.return
}

// -----

// CHECK: {{^}}reshape must keep the element type
func.func @reshape_dtype(%a: tensor<4x8xf32>) {
  %0 = "graph.reshape"(%a) : (tensor<4x8xf32>) -> tensor<32xi32>
  func.return
}

// -----

// CHECK: {{^}}axis 2 out of range for rank 2
func.func @softmax_axis(%a: tensor<4x8xf32>) {
  %0 = "graph.softmax"(%a) <{axis = 2 : i64}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: {{^}}axis -1 out of range for rank 2
func.func @softmax_negative_axis(%a: tensor<4x8xf32>) {
  %0 = "graph.softmax"(%a) <{axis = -1 : i64}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: {{^}}softmax expects a floating-point tensor
func.func @softmax_int(%a: tensor<4x8xi32>) {
  %0 = "graph.softmax"(%a) <{axis = 1 : i64}> : (tensor<4x8xi32>) -> tensor<4x8xi32>
  func.return
}

// -----

// CHECK: {{^}}graph.layernorm expects a floating-point tensor of rank >= 1
func.func @layernorm_int(%a: tensor<4x8xi32>, %b: tensor<8xi32>, %c: tensor<8xi32>) {
  %0 = "graph.layernorm"(%a, %b, %c) <{eps = 1.0e-05 : f64}> : (tensor<4x8xi32>, tensor<8xi32>, tensor<8xi32>) -> tensor<4x8xi32>
  func.return
}

// -----

// CHECK: {{^}}graph.layernorm expects a floating-point tensor of rank >= 1
func.func @layernorm_rank0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<f32>) {
  %0 = "graph.layernorm"(%a, %b, %c) <{eps = 1.0e-05 : f64}> : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<f32>
  func.return
}

// -----

// CHECK: {{^}}scale type tensor<4xf32> must be a vector over the last axis of tensor<4x8xf32>
func.func @layernorm_gamma_shape(%a: tensor<4x8xf32>, %b: tensor<4xf32>, %c: tensor<4xf32>) {
  %0 = "graph.layernorm"(%a, %b, %c) <{eps = 1.0e-05 : f64}> : (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: {{^}}scale type tensor<8xf16> must be a vector over the last axis of tensor<4x8xf32>
func.func @layernorm_gamma_dtype(%a: tensor<4x8xf32>, %b: tensor<8xf16>, %c: tensor<8xf16>) {
  %0 = "graph.layernorm"(%a, %b, %c) <{eps = 1.0e-05 : f64}> : (tensor<4x8xf32>, tensor<8xf16>, tensor<8xf16>) -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: {{^}}operand 'beta' at position 2 does not verify:
// CHECK-NEXT: attribute tensor<8xf32> expected from variable 'P', but got tensor<8xf16>
func.func @layernorm_beta_differs(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %c: tensor<8xf16>) {
  %0 = "graph.layernorm"(%a, %b, %c) <{eps = 1.0e-05 : f64}> : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf16>) -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: {{^}}scale type tensor<1x8xf32> must be a vector over the last axis of tensor<4x8xf32>
func.func @rmsnorm_gamma_shape(%a: tensor<4x8xf32>, %b: tensor<1x8xf32>) {
  %0 = "graph.rmsnorm"(%a, %b) <{eps = 1.0e-06 : f64}> : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: {{^}}graph.rmsnorm expects a floating-point tensor of rank >= 1
func.func @rmsnorm_int(%a: tensor<4x8xi32>, %b: tensor<8xi32>) {
  %0 = "graph.rmsnorm"(%a, %b) <{eps = 1.0e-06 : f64}> : (tensor<4x8xi32>, tensor<8xi32>) -> tensor<4x8xi32>
  func.return
}

// -----

// CHECK: {{^}}block arguments must match the group's inputs
func.func @group_block_args(%a: tensor<4x8xf32>) {
  %0 = "graph.fusion_group"(%a) ({
  ^bb0(%x: tensor<?x8xf32, ["N", ""]>):
    "graph.yield"(%x) : (tensor<?x8xf32, ["N", ""]>) -> ()
  }) : (tensor<4x8xf32>) -> tensor<?x8xf32, ["N", ""]>
  func.return
}

// -----

// CHECK: {{^}}graph.yield must give values of the group's result types
func.func @group_yield_types(%a: tensor<4x8xf32>) {
  %0 = "graph.fusion_group"(%a) ({
  ^bb0(%x: tensor<4x8xf32>):
    "graph.yield"(%x) : (tensor<4x8xf32>) -> ()
  }) : (tensor<4x8xf32>) -> tensor<?x8xf32, ["N", ""]>
  func.return
}

// -----

// CHECK: {{^}}graph.yield must give values of the group's result types
func.func @group_yield_count(%a: tensor<4x8xf32>) {
  %0, %1 = "graph.fusion_group"(%a) ({
  ^bb0(%x: tensor<4x8xf32>):
    "graph.yield"(%x) : (tensor<4x8xf32>) -> ()
  }) : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>)
  func.return
}

// -----

// CHECK: {{^}}Operation graph.exp terminates block in single-block region but is not a terminator
func.func @group_no_yield(%a: tensor<4x8xf32>) {
  %0 = "graph.fusion_group"(%a) ({
  ^bb0(%x: tensor<4x8xf32>):
    %e = "graph.exp"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  }) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: {{^}}Operation using value defined out of its IsolatedFromAbove parent: YieldOp(graph.yield %a : tensor<4x8xf32>)
func.func @group_isolated(%a: tensor<4x8xf32>) {
  %0 = "graph.fusion_group"() ({
    "graph.yield"(%a) : (tensor<4x8xf32>) -> ()
  }) : () -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: {{^}}'{{.*}}invalid.mlir': graph.fusion_group: type tensor<4xf32, ["N"]> must name each dynamic size, and only those, in its encoding
func.func @group_encoding(%a: tensor<?x8xf32, ["N", ""]>) {
  %0 = "graph.fusion_group"(%a) ({
  ^bb0(%x: tensor<4xf32, ["N"]>):
    "graph.yield"(%x) : (tensor<4xf32, ["N"]>) -> ()
  }) : (tensor<?x8xf32, ["N", ""]>) -> tensor<4xf32, ["N"]>
  func.return
}

// -----

// CHECK: {{^}}"bogus" is no GroupKind: expected one of "elementwise", "index_map", "injective", "reduction", "matmul", "conv", "attention", "opaque", "single"
func.func @group_kind(%a: tensor<4x8xf32>) {
  %0 = graph.fusion_group(%a) {kernel = "k0", kind = "bogus"} : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%x: tensor<4x8xf32>):
    graph.yield %x : tensor<4x8xf32>
  }
  func.return
}

// -----

// CHECK: {{^}}"cublas" is no GroupStrategy: expected one of "generated", "library"
func.func @group_strategy(%a: tensor<4x8xf32>) {
  %0 = graph.fusion_group(%a) {kernel = "k0", kind = "matmul", strategy = "cublas"} : (tensor<4x8xf32>) -> tensor<4x8xf32> {
  ^bb0(%x: tensor<4x8xf32>):
    graph.yield %x : tensor<4x8xf32>
  }
  func.return
}

// -----

// CHECK: {{^}}'graph.yield' expects parent op 'graph.fusion_group'
func.func @yield_outside_group(%a: tensor<4x8xf32>) {
  "graph.yield"(%a) : (tensor<4x8xf32>) -> ()
}

// -----

// CHECK: {{^}}axis 2 out of range for rank 2
func.func @iota_axis() {
  %0 = graph.iota axis = 2 : tensor<4x8xi64>
  func.return
}

// -----

// CHECK: {{^}}iota does not make bool tensors
func.func @iota_bool() {
  %0 = graph.iota axis = 0 : tensor<4xi1>
  func.return
}

// -----

// CHECK: {{^}}indices must be an integer tensor, got tensor<3xf32>
func.func @gather_float_indices(%x: tensor<4x8xf32>, %i: tensor<3xf32>) {
  %0 = "graph.gather"(%x, %i) <{axis = 0 : i64}> : (tensor<4x8xf32>, tensor<3xf32>) -> tensor<3x8xf32>
  func.return
}

// -----

// CHECK: {{^}}axis 2 out of range for rank 2
func.func @gather_axis(%x: tensor<4x8xf32>, %i: tensor<3xi64>) {
  %0 = "graph.gather"(%x, %i) <{axis = 2 : i64}> : (tensor<4x8xf32>, tensor<3xi64>) -> tensor<3x8xf32>
  func.return
}

// -----

// CHECK: {{^}}result type tensor<4x8xf32> should be f32[4, 3]
func.func @gather_shape(%x: tensor<4x8xf32>, %i: tensor<3xi64>) {
  %0 = "graph.gather"(%x, %i) <{axis = 1 : i64}> : (tensor<4x8xf32>, tensor<3xi64>) -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: {{^}}a slice step cannot be 0
func.func @slice_step_zero(%a: tensor<4x8xf32>) {
  %0 = "graph.slice"(%a) <{starts = ["0", "0"], steps = array<i64: 0, 1>}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// -----

// CHECK: {{^}}slice reads index 9 of axis 1, of size 8
func.func @slice_out_of_range(%a: tensor<4x8xf32>) {
  %0 = "graph.slice"(%a) <{starts = ["0", "3"], steps = array<i64: 1, 2>}> : (tensor<4x8xf32>) -> tensor<4x4xf32>
  func.return
}

// -----

// CHECK: {{^}}a slice of a rank-2 tensor needs 2 starts, steps and result sizes
func.func @slice_rank(%a: tensor<4x8xf32>) {
  %0 = "graph.slice"(%a) <{starts = ["0"], steps = array<i64: 1>}> : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}

// Each symbolic size of a function's signature: parallel, a reduction (its combiners
// and dependent passes), or unsplittable with the op that needs all of it.
// RUN: fusec-opt %s -p partition-axes | filecheck %s

// rows are parallel; a row's max then its sum of exponentials: two passes
// CHECK-LABEL: func.func @softmax_rows(
// CHECK-SAME:  partition = {B = "parallel", N = "reduction(max, add; 2 passes)"}
func.func @softmax_rows(%x: tensor<?x?xf32, ["B", "N"]>) -> tensor<?x?xf32, ["B", "N"]> {
  %m = graph.reduce max %x axes = [1] keepdims : tensor<?x?xf32, ["B", "N"]> -> tensor<?x1xf32, ["B", ""]>
  %mb = graph.broadcast %m : tensor<?x1xf32, ["B", ""]> -> tensor<?x?xf32, ["B", "N"]>
  %d = graph.sub %x, %mb : tensor<?x?xf32, ["B", "N"]>
  %e = graph.exp %d : tensor<?x?xf32, ["B", "N"]>
  %s = graph.reduce sum %e axes = [1] keepdims : tensor<?x?xf32, ["B", "N"]> -> tensor<?x1xf32, ["B", ""]>
  %sb = graph.broadcast %s : tensor<?x1xf32, ["B", ""]> -> tensor<?x?xf32, ["B", "N"]>
  %r = graph.div %e, %sb : tensor<?x?xf32, ["B", "N"]>
  func.return %r : tensor<?x?xf32, ["B", "N"]>
}

// a contraction over K is a sum of partial products; T and the output columns are parallel
// CHECK-LABEL: func.func @matmul(
// CHECK-SAME:  partition = {T = "parallel", K = "reduction(add; 1 pass)"}
func.func @matmul(%x: tensor<?x?xf32, ["T", "K"]>, %w: tensor<?x8xf32, ["K", ""]>) -> tensor<?x8xf32, ["T", ""]> {
  %y = graph.matmul %x, %w : tensor<?x?xf32, ["T", "K"]>, tensor<?x8xf32, ["K", ""]> -> tensor<?x8xf32, ["T", ""]>
  func.return %y : tensor<?x8xf32, ["T", ""]>
}

// splitting heads keeps S; merging B and S into one axis does not
// CHECK-LABEL: func.func @reshapes(
// CHECK-SAME:  partition = {B = "unsplittable: graph.reshape from ['B', 'S', 256] to ['B*S', 256] merges or splits B with other axes", S = "unsplittable: graph.reshape from ['B', 'S', 256] to ['B*S', 256] merges or splits S with other axes"}
func.func @reshapes(%x: tensor<?x?x256xf32, ["B", "S", ""]>) -> tensor<?x256xf32, ["B*S", ""]> {
  %h = graph.reshape %x : tensor<?x?x256xf32, ["B", "S", ""]> -> tensor<?x?x4x64xf32, ["B", "S", "", ""]>
  %m = graph.reshape %h : tensor<?x?x4x64xf32, ["B", "S", "", ""]> -> tensor<?x?x256xf32, ["B", "S", ""]>
  %f = graph.reshape %m : tensor<?x?x256xf32, ["B", "S", ""]> -> tensor<?x256xf32, ["B*S", ""]>
  func.return %f : tensor<?x256xf32, ["B*S", ""]>
}

// attention's scores have S twice: a chunk of queries needs every key
// CHECK-LABEL: func.func @scores(
// CHECK-SAME:  partition = {S = "unsplittable: graph.matmul has two axes of size S: a chunk of one needs all of the other"}
func.func @scores(%q: tensor<?x64xf32, ["S", ""]>, %k: tensor<64x?xf32, ["", "S"]>) -> tensor<?x?xf32, ["S", "S"]> {
  %s = graph.matmul %q, %k : tensor<?x64xf32, ["S", ""]>, tensor<64x?xf32, ["", "S"]> -> tensor<?x?xf32, ["S", "S"]>
  func.return %s : tensor<?x?xf32, ["S", "S"]>
}

// concatenating along N needs all of it; the other axes of a concat stay parallel, and
// a pad pads only axes of integer size
// CHECK-LABEL: func.func @concat_pad(
// CHECK-SAME:  partition = {N = "unsplittable: graph.concat along axis 0 needs all of N", B = "parallel", S = "parallel"}
func.func @concat_pad(%x: tensor<?x4xf32, ["N", ""]>, %y: tensor<?x4xf32, ["B", ""]>, %z: tensor<?x?x4xf32, ["B", "S", ""]>) -> (tensor<?x4xf32, ["2*N", ""]>, tensor<?x8xf32, ["B", ""]>, tensor<?x?x7xf32, ["B", "S", ""]>) {
  %c = graph.concat %x, %x axis = 0 : tensor<?x4xf32, ["N", ""]>, tensor<?x4xf32, ["N", ""]> -> tensor<?x4xf32, ["2*N", ""]>
  %d = graph.concat %y, %y axis = 1 : tensor<?x4xf32, ["B", ""]>, tensor<?x4xf32, ["B", ""]> -> tensor<?x8xf32, ["B", ""]>
  %p = graph.pad %z low = [0, 0, 1] high = [0, 0, 2] value = 0.000000e+00 : tensor<?x?x4xf32, ["B", "S", ""]> -> tensor<?x?x7xf32, ["B", "S", ""]>
  func.return %c, %d, %p : tensor<?x4xf32, ["2*N", ""]>, tensor<?x8xf32, ["B", ""]>, tensor<?x?x7xf32, ["B", "S", ""]>
}

// a slice that cuts an axis (rotary halves of D, the last rows of N, flip) needs all of
// it; the axes it reads whole (B) stay parallel
// CHECK-LABEL: func.func @slices(
// CHECK-SAME:  partition = {B = "parallel", D = "unsplittable: graph.slice reads a window of axis 1 (D), not each chunk's own", N = "unsplittable: graph.slice reads a window of axis 0 (N), not each chunk's own"}
func.func @slices(%x: tensor<?x?xf32, ["B", "D"]>, %y: tensor<?x8xf32, ["N", ""]>) -> (tensor<?x?xf32, ["B", "D/2"]>, tensor<?x8xf32, ["N", ""]>) {
  %lo = graph.slice %x starts = ["0", "0"] steps = [1, 1] : tensor<?x?xf32, ["B", "D"]> -> tensor<?x?xf32, ["B", "D/2"]>
  %hi = graph.slice %x starts = ["0", "D/2"] steps = [1, 1] : tensor<?x?xf32, ["B", "D"]> -> tensor<?x?xf32, ["B", "D/2"]>
  %r = graph.add %lo, %hi : tensor<?x?xf32, ["B", "D/2"]>
  %f = graph.slice %y starts = ["N-1", "0"] steps = [-1, 1] : tensor<?x8xf32, ["N", ""]> -> tensor<?x8xf32, ["N", ""]>
  func.return %r, %f : tensor<?x?xf32, ["B", "D/2"]>, tensor<?x8xf32, ["N", ""]>
}

// the first N rows of x: a chunk of N would need its own offset into x, so N is not split
// CHECK-LABEL: func.func @first_rows(
// CHECK-SAME:  partition = {M = "unsplittable: graph.slice reads a window of axis 0 (M), not each chunk's own", N = "unsplittable: graph.slice reads a window of axis 0 (M), not each chunk's own"}
func.func @first_rows(%x: tensor<?x8xf32, ["M", ""]>, %n: tensor<?xf32, ["N"]>) -> tensor<?x8xf32, ["N", ""]> {
  %r = graph.slice %x starts = ["0", "0"] steps = [1, 1] : tensor<?x8xf32, ["M", ""]> -> tensor<?x8xf32, ["N", ""]>
  func.return %r : tensor<?x8xf32, ["N", ""]>
}

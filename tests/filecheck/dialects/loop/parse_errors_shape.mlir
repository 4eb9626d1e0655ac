// RUN: not fusec-opt %s 2>&1 | filecheck %s
// CHECK: a size name must not be empty
func.func @empty_name() {
  %a = loop.alloc [""] : memref<?xf32>
  func.return
}

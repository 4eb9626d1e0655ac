// RUN: fusec-opt %s -p 'fuse{disable-rules="matmul_epilogue"}' | filecheck %s --check-prefix=EPILOGUE
// RUN: fusec-opt %s -p 'fuse{disable-rules="reduce-rows,reduce_epilogue"}' | filecheck %s --check-prefix=ROWS
// RUN: not fusec-opt %s -p 'fuse{disable-rules="epilogue"}' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// Per-rule switches: a disabled rule joins no groups and the edges it would have
// joined say so; an edge no rule could join keeps its own reason. An unknown rule
// name is a usage error that lists the rules.

!x = tensor<?x?xf32, ["T", "D"]>
!w = tensor<?x?xf32, ["D", "F"]>
!h = tensor<?x?xf32, ["T", "F"]>
!b = tensor<?xf32, ["F"]>
!r = tensor<?x1xf32, ["T", ""]>

// EPILOGUE-LABEL: func.func @matmul_bias_relu
// EPILOGUE-SAME:    fusion.not_fused = [{producer = "matmul_0", consumer = "add_2", reason = "rule matmul_epilogue is disabled"}]
// EPILOGUE:         graph.fusion_group(%x, %w) {kernel = "k0_matmul", kind = "matmul", rule = "none"}
// EPILOGUE:         graph.fusion_group(%b, %{{.*}}) {kernel = "k1_add_relu", kind = "elementwise", rule = "ew_chain"}
// EPILOGUE-NOT:     graph.fusion_group
// ROWS-LABEL:     func.func @matmul_bias_relu
// ROWS-SAME:        fusion.not_fused = []
func.func @matmul_bias_relu(%x: !x, %w: !w, %b: !b) -> !h {
  %mm = graph.matmul %x, %w : !x, !w -> !h
  %bb = graph.broadcast %b : !b -> !h
  %z = graph.add %mm, %bb : !h
  %y = graph.relu %z : !h
  func.return %y : !h
}

// The prologue was never fusable: its reason stays.
// EPILOGUE-LABEL: func.func @matmul_prologue
// EPILOGUE-SAME:    {producer = "relu_0", consumer = "matmul_1", reason = "matmul prologue is not fused"}
func.func @matmul_prologue(%x: !x, %w: !w) -> !h {
  %a = graph.relu %x : !x
  %y = graph.matmul %a, %w : !x, !w -> !h
  func.return %y : !h
}

// Softmax without the row rules: the prologue of the sum still joins it, the max
// and the division stay apart.
// ROWS-LABEL: func.func @softmax
// ROWS-SAME:    {producer = "reduce_max_0", consumer = "broadcast_1", reason = "rule reduce_rows is disabled"}
// ROWS-SAME:    {producer = "exp_3", consumer = "div_6", reason = "rule reduce_epilogue is disabled"}
// ROWS-SAME:    {producer = "reduce_sum_4", consumer = "broadcast_5", reason = "rule reduce_epilogue is disabled"}
// ROWS:         graph.fusion_group(%x) {kernel = "k0_reduce_max", kind = "reduction", rule = "none"}
// ROWS:         graph.fusion_group(%x, %{{.*}}) {kernel = "k1_reduce_sum", kind = "reduction", rule = "reduce_prologue"}
// ROWS:         graph.fusion_group(%e, %s) {kernel = "k2_div", kind = "elementwise", rule = "ew_chain"}
// EPILOGUE-LABEL: func.func @softmax
// EPILOGUE-SAME:    fusion.not_fused = []
func.func @softmax(%x: !x) -> !x {
  %m = graph.reduce max %x axes = [1] keepdims : !x -> !r
  %mb = graph.broadcast %m : !r -> !x
  %d = graph.sub %x, %mb : !x
  %e = graph.exp %d : !x
  %s = graph.reduce sum %e axes = [1] keepdims : !x -> !r
  %sb = graph.broadcast %s : !r -> !x
  %y = graph.div %e, %sb : !x
  func.return %y : !x
}

// UNKNOWN: fusec-opt: error: unknown fusion rule 'epilogue': the rules are attention, attention_operands, attention_epilogue, conv_bn_act, conv, horizontal_matmul, matmul_epilogue, horizontal_reduce, reduce_rows, reduce_epilogue, reduce_prologue, ew_chain, horizontal_elementwise

// RUN: dlc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dlc-form-dispatches))' | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

// Epilogue fusion: the bias add and the activation join the matmul, the
// residual operand becomes a dispatch operand.
// CHECK-LABEL: func @matmul_epilogue
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8x16xf32>, %[[R:.*]]: tensor<4x16xf32>)
// CHECK: %[[D:.*]] = dlc.dispatch(%[[A]], %[[B]], %[[R]])
// CHECK:   linalg.fill
// CHECK:   linalg.matmul
// CHECK:   linalg.generic
// CHECK:   linalg.generic
// CHECK:   dlc.yield
// CHECK-NOT: dlc.dispatch
// CHECK: return %[[D]]
func.func @matmul_epilogue(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %r: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %m = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  %add = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%m, %r : tensor<4x16xf32>, tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  %relu = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%add : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.maximumf %x, %zero : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %relu : tensor<4x16xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Softmax: two reductions and their elementwise neighbours form one kernel.
// CHECK-LABEL: func @softmax
// CHECK: dlc.dispatch
// CHECK-COUNT-4: linalg.generic
// CHECK: dlc.yield
// CHECK-NOT: dlc.dispatch
func.func @softmax(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<4x16xf32>
  %e1 = tensor.empty() : tensor<4xf32>
  %f1 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x16xf32>) outs(%f1 : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %o : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %exp = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %max : tensor<4x16xf32>, tensor<4xf32>) outs(%e2 : tensor<4x16xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %d = arith.subf %a, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<4x16xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%exp : tensor<4x16xf32>) outs(%f2 : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %div = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%exp, %sum : tensor<4x16xf32>, tensor<4xf32>) outs(%e2 : tensor<4x16xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %d = arith.divf %a, %s : f32
    linalg.yield %d : f32
  } -> tensor<4x16xf32>
  return %div : tensor<4x16xf32>
}

// -----

// Two contractions never share a kernel; the shared zero fill is cloned
// into both; large constants are operands, splats are cloned.
// CHECK-LABEL: func @two_matmuls
// CHECK: %[[W:.*]] = arith.constant dense<{{\[}}[0.000000e+00, 1.000000e+00
// CHECK: %[[D0:.*]] = dlc.dispatch(%{{.*}}, %[[W]])
// CHECK:   linalg.fill
// CHECK:   linalg.matmul
// CHECK: %[[D1:.*]] = dlc.dispatch(%[[D0]], %[[W]])
// CHECK:   linalg.fill
// CHECK:   linalg.matmul
// CHECK: return %[[D1]]
func.func @two_matmuls(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %w = arith.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]]> : tensor<8x8xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %m0 = linalg.matmul ins(%a, %w : tensor<8x8xf32>, tensor<8x8xf32>) outs(%f : tensor<8x8xf32>) -> tensor<8x8xf32>
  %m1 = linalg.matmul ins(%m0, %w : tensor<8x8xf32>, tensor<8x8xf32>) outs(%f : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %m1 : tensor<8x8xf32>
}

// -----

// Outputs that are inputs, or repeat another output, get copy kernels;
// reshapes stay on the host.
// CHECK-LABEL: func @outputs
// CHECK: %[[C:.*]] = tensor.collapse_shape
// CHECK: %[[D0:.*]] = dlc.dispatch(%[[C]])
// CHECK:   linalg.copy
// CHECK: %[[D1:.*]] = dlc.dispatch(%[[C]])
// CHECK:   linalg.copy
// CHECK: return %[[D0]], %[[D1]]
func.func @outputs(%a: tensor<2x4xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %c = tensor.collapse_shape %a [[0, 1]] : tensor<2x4xf32> into tensor<8xf32>
  return %c, %c : tensor<8xf32>, tensor<8xf32>
}

// -----

// A nearest-neighbour upsample reads its producer through a division: it
// does not join the convolution's kernel (neighbouring tiles would
// recompute the same conv outputs).
// CHECK-LABEL: func @upsample_not_fused
// CHECK: %[[C:.*]] = dlc.dispatch
// CHECK:   linalg.conv_2d_nchw_fchw
// CHECK:   dlc.yield
// CHECK: dlc.dispatch(%[[C]])
// CHECK:   linalg.generic
#up_in = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 floordiv 2, d3 floordiv 2)>
#up_out = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @upsample_not_fused(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x1x1xf32>) -> tensor<1x4x16x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x8x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x4x8x8xf32>, tensor<4x4x1x1xf32>) outs(%f : tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %e2 = tensor.empty() : tensor<1x4x16x16xf32>
  %u = linalg.generic {indexing_maps = [#up_in, #up_out], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c : tensor<1x4x8x8xf32>) outs(%e2 : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<1x4x16x16xf32>
  return %u : tensor<1x4x16x16xf32>
}

// -----

// A channels-last convolution's result read back in NCHW: the channel dim
// split into `c floordiv 4` and `c mod 4` over a dim of 4 reads every
// element once, so the transpose joins the convolution's kernel, and the
// epilogue after it.
// CHECK-LABEL: func @channel_blocks_fused
// CHECK: %[[D:.*]] = dlc.dispatch
// CHECK:   linalg.generic
// CHECK:   linalg.generic
// CHECK:   linalg.generic
// CHECK:   dlc.yield
// CHECK-NOT: dlc.dispatch
// CHECK: return %[[D]]
#blk_in = affine_map<(d0, d1) -> (d0, d1 floordiv 4, d1 mod 4)>
#blk_id = affine_map<(d0, d1) -> (d0, d1)>
#mm_a = affine_map<(i, jb, ji, k) -> (i, k)>
#mm_b = affine_map<(i, jb, ji, k) -> (k, jb, ji)>
#mm_c = affine_map<(i, jb, ji, k) -> (i, jb, ji)>
func.func @channel_blocks_fused(%a: tensor<6x8xf32>, %b: tensor<8x2x4xf32>) -> tensor<6x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<6x2x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<6x2x4xf32>) -> tensor<6x2x4xf32>
  %blocked = linalg.generic {indexing_maps = [#mm_a, #mm_b, #mm_c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %b : tensor<6x8xf32>, tensor<8x2x4xf32>) outs(%f : tensor<6x2x4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %q = arith.addf %o, %p : f32
    linalg.yield %q : f32
  } -> tensor<6x2x4xf32>
  %e2 = tensor.empty() : tensor<6x8xf32>
  %t = linalg.generic {indexing_maps = [#blk_in, #blk_id], iterator_types = ["parallel", "parallel"]} ins(%blocked : tensor<6x2x4xf32>) outs(%e2 : tensor<6x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<6x8xf32>
  %r = linalg.generic {indexing_maps = [#blk_id, #blk_id], iterator_types = ["parallel", "parallel"]} ins(%t : tensor<6x8xf32>) outs(%e2 : tensor<6x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.maximumf %x, %zero : f32
    linalg.yield %y : f32
  } -> tensor<6x8xf32>
  return %r : tensor<6x8xf32>
}

// -----

// The epilogue joins the heavy producer even when a cheap per-channel
// computation is defined after it; the cheap op then joins as prologue.
// CHECK-LABEL: func @heavy_producer_wins
// CHECK: %[[D:.*]] = dlc.dispatch
// CHECK:   linalg.matmul
// CHECK:   linalg.generic
// CHECK:   linalg.generic
// CHECK:   dlc.yield
// CHECK-NOT: dlc.dispatch
// CHECK: return %[[D]]
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#vec = affine_map<(d0) -> (d0)>
func.func @heavy_producer_wins(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %s: tensor<16xf32>, %t: tensor<16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %m = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  %ev = tensor.empty() : tensor<16xf32>
  %scale = linalg.generic {indexing_maps = [#vec, #vec, #vec], iterator_types = ["parallel"]} ins(%s, %t : tensor<16xf32>, tensor<16xf32>) outs(%ev : tensor<16xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %q = arith.divf %x, %y : f32
    linalg.yield %q : f32
  } -> tensor<16xf32>
  %r = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%m, %scale : tensor<4x16xf32>, tensor<16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    linalg.yield %p : f32
  } -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// x * sigmoid(x) after a matmul (SiLU as exporters write it): x has two
// users, the sigmoid and the multiply, and the sigmoid's only user is the
// multiply, so both join the matmul's kernel; only the product leaves it.
// CHECK-LABEL: func @silu_epilogue
// CHECK: %[[D:.*]] = dlc.dispatch
// CHECK:   linalg.matmul
// CHECK:   math.exp
// CHECK:   arith.mulf
// CHECK:   dlc.yield
// CHECK-NOT: dlc.dispatch
// CHECK: return %[[D]]
func.func @silu_epilogue(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %m = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  %sig = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%m : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %n = arith.negf %x : f32
    %x1 = math.exp %n : f32
    %d = arith.addf %x1, %one : f32
    %s = arith.divf %one, %d : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  %silu = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%m, %sig : tensor<4x16xf32>, tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    linalg.yield %p : f32
  } -> tensor<4x16xf32>
  return %silu : tensor<4x16xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// The same shape, but the sigmoid is also a result of the function: it
// leaves for elsewhere, so nothing joins the matmul, and the sigmoid and
// the multiply are kernels of their own.
// CHECK-LABEL: func @side_used_elsewhere
// CHECK: dlc.dispatch
// CHECK:   linalg.matmul
// CHECK-NOT: math.exp
// CHECK:   dlc.yield
// CHECK: dlc.dispatch
// CHECK: dlc.dispatch
func.func @side_used_elsewhere(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %m = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  %sig = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%m : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %n = arith.negf %x : f32
    %x1 = math.exp %n : f32
    %d = arith.addf %x1, %one : f32
    %s = arith.divf %one, %d : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  %silu = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%m, %sig : tensor<4x16xf32>, tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    linalg.yield %p : f32
  } -> tensor<4x16xf32>
  return %silu, %sig : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// -----

// A repack for dot products (dlc.materialize) after a channels-last
// product read back through the block split does not join that kernel: as
// its root, a tile of its channels would reach the product's blocks only
// through the split, which tiling cannot slice, and every workgroup would
// compute the whole product. The read-back and its epilogue do join.
// CHECK-LABEL: func @materialized_after_block_split
// CHECK: %[[D:.*]] = dlc.dispatch
// CHECK:   linalg.generic
// CHECK:   linalg.generic
// CHECK:   linalg.generic
// CHECK-NOT: dlc.materialize
// CHECK:   dlc.yield
// CHECK: %[[R:.*]] = dlc.dispatch(%[[D]])
// CHECK:   dlc.materialize
// CHECK: return %[[R]]
#mb_in = affine_map<(d0, d1) -> (d0, d1 floordiv 4, d1 mod 4)>
#mb_id = affine_map<(d0, d1) -> (d0, d1)>
#mb_a = affine_map<(i, jb, ji, k) -> (i, k)>
#mb_b = affine_map<(i, jb, ji, k) -> (k, jb, ji)>
#mb_c = affine_map<(i, jb, ji, k) -> (i, jb, ji)>
#mb_pk = affine_map<(d0, d1, d2) -> (d0, d1 * 4 + d2)>
#mb_id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @materialized_after_block_split(%a: tensor<6x8xf32>, %b: tensor<8x2x4xf32>) -> tensor<6x2x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<6x2x4xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<6x2x4xf32>) -> tensor<6x2x4xf32>
  %blocked = linalg.generic {indexing_maps = [#mb_a, #mb_b, #mb_c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%a, %b : tensor<6x8xf32>, tensor<8x2x4xf32>) outs(%f : tensor<6x2x4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %q = arith.addf %o, %p : f32
    linalg.yield %q : f32
  } -> tensor<6x2x4xf32>
  %e2 = tensor.empty() : tensor<6x8xf32>
  %t = linalg.generic {indexing_maps = [#mb_in, #mb_id], iterator_types = ["parallel", "parallel"]} ins(%blocked : tensor<6x2x4xf32>) outs(%e2 : tensor<6x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<6x8xf32>
  %r = linalg.generic {indexing_maps = [#mb_id, #mb_id], iterator_types = ["parallel", "parallel"]} ins(%t : tensor<6x8xf32>) outs(%e2 : tensor<6x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.maximumf %x, %zero : f32
    linalg.yield %y : f32
  } -> tensor<6x8xf32>
  %pk = linalg.generic {indexing_maps = [#mb_pk, #mb_id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%r : tensor<6x8xf32>) outs(%e : tensor<6x2x4xf32>) attrs = {dlc.materialize} {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<6x2x4xf32>
  return %pk : tensor<6x2x4xf32>
}

// An op computed into a padding stays a kernel of its own: a tile of the
// padding would need a tile of its source whose size depends on where it
// lies. A pad of that pad fuses as usual, into a
// repack marked dlc.materialize (which does not join its users as a
// prologue, but takes an elementwise user as its epilogue).
// CHECK-LABEL: func @computed_into_pad
// CHECK: %[[S:.*]] = dlc.dispatch(%arg0)
// CHECK:   math.exp
// CHECK:   dlc.yield
// CHECK: %[[P:.*]] = dlc.dispatch(%[[S]])
// CHECK:   tensor.pad
// CHECK:   tensor.pad
// CHECK:   dlc.materialize
// CHECK:   math.sqrt
// CHECK:   dlc.yield
// CHECK: return %[[P]]
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#pk = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 * 4 + d4, d2, d3)>
#id5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
func.func @computed_into_pad(%x: tensor<1x3x8x8xf32>) -> tensor<1x1x10x10x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x3x8x8xf32>
  %s = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x3x8x8xf32>) outs(%e : tensor<1x3x8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  } -> tensor<1x3x8x8xf32>
  %p = tensor.pad %s low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x3x8x8xf32> to tensor<1x3x10x10xf32>
  %c = tensor.pad %p low[0, 0, 0, 0] high[0, 1, 0, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x3x10x10xf32> to tensor<1x4x10x10xf32>
  %e5 = tensor.empty() : tensor<1x1x10x10x4xf32>
  %pk = linalg.generic {indexing_maps = [#pk, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%c : tensor<1x4x10x10xf32>) outs(%e5 : tensor<1x1x10x10x4xf32>) attrs = {dlc.materialize} {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<1x1x10x10x4xf32>
  %r = linalg.generic {indexing_maps = [#id5, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%pk : tensor<1x1x10x10x4xf32>) outs(%e5 : tensor<1x1x10x10x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.sqrt %a : f32
    linalg.yield %v : f32
  } -> tensor<1x1x10x10x4xf32>
  return %r : tensor<1x1x10x10x4xf32>
}

// -----

// The same in front of a convolution (an input normalization, or the Cast
// of a 16-bit model's input): tiled along output rows, the convolution
// would read a computed source of dynamic size. The pad joins the
// convolution; what it pads is computed by a kernel of its own.
// CHECK-LABEL: func @computed_into_conv_pad
// CHECK: %[[N:.*]] = dlc.dispatch(%arg0)
// CHECK:   arith.truncf
// CHECK:   dlc.yield
// CHECK: %[[C:.*]] = dlc.dispatch(%[[N]], %arg1)
// CHECK:   tensor.pad
// CHECK:   linalg.conv_2d_nchw_fchw
// CHECK:   dlc.yield
// CHECK: return %[[C]]
#cid = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @computed_into_conv_pad(%x: tensor<1x3x224x224xf32>, %w: tensor<8x3x3x3xf16>) -> tensor<1x8x112x112xf32> {
  %zero = arith.constant 0.0 : f32
  %h0 = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<1x3x224x224xf16>
  %s = linalg.generic {indexing_maps = [#cid, #cid], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x3x224x224xf32>) outs(%e : tensor<1x3x224x224xf16>) {
  ^bb0(%a: f32, %o: f16):
    %v = arith.truncf %a : f32 to f16
    linalg.yield %v : f16
  } -> tensor<1x3x224x224xf16>
  %p = tensor.pad %s low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %h0 : f16
  } : tensor<1x3x224x224xf16> to tensor<1x3x226x226xf16>
  %o = tensor.empty() : tensor<1x8x112x112xf32>
  %f = linalg.fill ins(%zero : f32) outs(%o : tensor<1x8x112x112xf32>) -> tensor<1x8x112x112xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%p, %w : tensor<1x3x226x226xf16>, tensor<8x3x3x3xf16>) outs(%f : tensor<1x8x112x112xf32>) -> tensor<1x8x112x112xf32>
  return %c : tensor<1x8x112x112xf32>
}

// -----

// A repack marked dlc.materialize stays out of the matmul that reads it: the
// matmul reads the repacked layout from memory.
// CHECK-LABEL: func @materialized_operand
// CHECK: %[[T:.*]] = dlc.dispatch(%arg0)
// CHECK:   dlc.materialize
// CHECK:   dlc.yield
// CHECK: %[[M:.*]] = dlc.dispatch(%[[T]], %arg1)
// CHECK:   linalg.matmul
// CHECK: return %[[M]]
#t = affine_map<(d0, d1) -> (d1, d0)>
#i = affine_map<(d0, d1) -> (d0, d1)>
func.func @materialized_operand(%a: tensor<8x4xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %et = tensor.empty() : tensor<4x8xf32>
  %t = linalg.generic {indexing_maps = [#t, #i], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<8x4xf32>) outs(%et : tensor<4x8xf32>) attrs = {dlc.materialize} {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %m = linalg.matmul ins(%t, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %m : tensor<4x16xf32>
}

// -----

// An integer matrix product with a zero point as a third input is no
// upstream contraction, but two of its inputs walk the reduced dim: it is
// heavy, and the reduction before it (a global pool) stays a kernel of its
// own instead of joining it (every invocation of the product would pool
// again).
// CHECK-LABEL: func @integer_matmul_zero_point
// CHECK: %[[R:.*]] = dlc.dispatch(%arg0)
// CHECK:   arith.trunci
// CHECK:   dlc.yield
// CHECK: %[[M:.*]] = dlc.dispatch(%[[R]], %arg1)
// CHECK:   arith.muli
// CHECK:   dlc.yield
// CHECK: return %[[M]]
#px = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#po = affine_map<(d0, d1, d2) -> (d0, d1)>
#pe = affine_map<(d0, d1) -> (d0, d1)>
#ma = affine_map<(d0, d1, d2) -> (d0, d2)>
#mb = affine_map<(d0, d1, d2) -> (d2, d1)>
#mz = affine_map<(d0, d1, d2) -> ()>
#mo = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @integer_matmul_zero_point(%x: tensor<1x8x49xi32>, %b: tensor<8x4xi8>) -> tensor<1x4xi32> {
  %c0 = arith.constant 0 : i32
  %z = arith.constant dense<3> : tensor<i8>
  %e = tensor.empty() : tensor<1x8xi32>
  %f = linalg.fill ins(%c0 : i32) outs(%e : tensor<1x8xi32>) -> tensor<1x8xi32>
  %s = linalg.generic {indexing_maps = [#px, #po], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<1x8x49xi32>) outs(%f : tensor<1x8xi32>) {
  ^bb0(%v: i32, %acc: i32):
    %0 = arith.addi %acc, %v : i32
    linalg.yield %0 : i32
  } -> tensor<1x8xi32>
  %e8 = tensor.empty() : tensor<1x8xi8>
  %a = linalg.generic {indexing_maps = [#pe, #pe], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<1x8xi32>) outs(%e8 : tensor<1x8xi8>) {
  ^bb0(%v: i32, %o: i8):
    %0 = arith.trunci %v : i32 to i8
    linalg.yield %0 : i8
  } -> tensor<1x8xi8>
  %em = tensor.empty() : tensor<1x4xi32>
  %fm = linalg.fill ins(%c0 : i32) outs(%em : tensor<1x4xi32>) -> tensor<1x4xi32>
  %m = linalg.generic {indexing_maps = [#ma, #mb, #mz, #mo], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b, %z : tensor<1x8xi8>, tensor<8x4xi8>, tensor<i8>) outs(%fm : tensor<1x4xi32>) {
  ^bb0(%va: i8, %vb: i8, %vz: i8, %acc: i32):
    %0 = arith.extsi %va : i8 to i32
    %1 = arith.extsi %vz : i8 to i32
    %2 = arith.subi %0, %1 : i32
    %3 = arith.extsi %vb : i8 to i32
    %4 = arith.muli %2, %3 : i32
    %5 = arith.addi %acc, %4 : i32
    linalg.yield %5 : i32
  } -> tensor<1x4xi32>
  return %m : tensor<1x4xi32>
}

// -----

// A pad that two NCHW convolutions and an elementwise op read (a
// detector's feature map, padded for its box and class heads): each
// convolution pads its own copy (its kernel then copies only its tile's
// rows); the elementwise op, the pad's one reader left, takes the pad
// as its prologue. No kernel pads for the others.
// CHECK-LABEL: func @shared_pad
// CHECK-NOT: dlc.dispatch(%arg0) :
// CHECK: dlc.dispatch(%arg0, %arg1)
// CHECK:   tensor.pad
// CHECK:   linalg.conv_2d_nchw_fchw
// CHECK: dlc.dispatch(%arg0, %arg1)
// CHECK:   tensor.pad
// CHECK:   linalg.conv_2d_nchw_fchw
// CHECK: dlc.dispatch(%arg0)
// CHECK:   tensor.pad
// CHECK:   math.exp
#sp = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @shared_pad(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x10x10xf32>) {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x4x8x8xf32> to tensor<1x4x10x10xf32>
  %o = tensor.empty() : tensor<1x4x8x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%o : tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %c1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x4x10x10xf32>, tensor<4x4x3x3xf32>) outs(%f : tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %c2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x4x10x10xf32>, tensor<4x4x3x3xf32>) outs(%f : tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %e = tensor.empty() : tensor<1x4x10x10xf32>
  %x2 = linalg.generic {indexing_maps = [#sp, #sp], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%p : tensor<1x4x10x10xf32>) outs(%e : tensor<1x4x10x10xf32>) {
  ^bb0(%a: f32, %b: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  } -> tensor<1x4x10x10xf32>
  return %c1, %c2, %x2 : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x10x10xf32>
}

// -----

// Ops of a branch on a run-time condition (dlc.branch) share kernels only
// with ops of the same branch, so that its kernels can be skipped whole;
// the op that selects between the branches (dlc.selects) is a kernel of
// its own, and so is the op computing its condition.
// CHECK-LABEL: func @branches
// CHECK: %[[K:.*]] = dlc.dispatch(%{{.*}})
// CHECK:   arith.cmpf
// CHECK: %[[T:.*]] = dlc.dispatch(%{{.*}})
// CHECK:   math.exp
// CHECK:   math.sqrt
// CHECK: %[[E:.*]] = dlc.dispatch(%{{.*}})
// CHECK:   arith.negf
// CHECK-NOT: math.sqrt
// CHECK: dlc.dispatch(%[[K]], %[[T]], %[[E]])
// CHECK:   arith.select
// CHECK-NOT: dlc.dispatch
#id = affine_map<(d0) -> (d0)>
#sc = affine_map<(d0) -> ()>
#s0 = affine_map<() -> ()>
func.func @branches(%x: tensor<4xf32>, %s: tensor<f32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %eb = tensor.empty() : tensor<i1>
  %c = linalg.generic {indexing_maps = [#s0, #s0], iterator_types = []} ins(%s : tensor<f32>) outs(%eb : tensor<i1>) {
  ^bb0(%p: f32, %o: i1):
    %b = arith.cmpf ogt, %p, %zero : f32
    linalg.yield %b : i1
  } -> tensor<i1>
  %t0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) attrs = {dlc.branch = array<i64: 0, 1>} {
  ^bb0(%p: f32, %o: f32):
    %r = math.exp %p : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %t1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%t0 : tensor<4xf32>) outs(%e : tensor<4xf32>) attrs = {dlc.branch = array<i64: 0, 1>} {
  ^bb0(%p: f32, %o: f32):
    %r = math.sqrt %p : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %f0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) attrs = {dlc.branch = array<i64: 0, 0>} {
  ^bb0(%p: f32, %o: f32):
    %r = arith.negf %p : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %y = linalg.generic {indexing_maps = [#sc, #id, #id, #id], iterator_types = ["parallel"]} ins(%c, %t1, %f0 : tensor<i1>, tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) attrs = {dlc.selects = 0 : i64} {
  ^bb0(%q: i1, %p: f32, %n: f32, %o: f32):
    %r = arith.select %q, %p, %n : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

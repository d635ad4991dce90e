// RUN: dlc-opt %s --split-input-file --dlc-tileable-gathers --dlc-tile-and-distribute="workgroups=8 min-work=1" --canonicalize | FileCheck %s
// RUN: dlc-opt %s --split-input-file --dlc-tileable-gathers=copies=1 --dlc-tile-and-distribute="threads=64" --canonicalize | FileCheck %s --check-prefix=GPU
// RUN: dlc-opt %s --split-input-file --dlc-tileable-gathers=copies=1 --dlc-tile-and-distribute="threads=64 subgroup-lanes=8" --canonicalize | FileCheck %s --check-prefix=LANES
// RUN: dlc-opt %s --split-input-file --dlc-tileable-gathers --dlc-tile-and-distribute="workgroups=64 min-work=16384" --canonicalize | FileCheck %s --check-prefix=WORK
// RUN: dlc-opt %s --split-input-file --dlc-tileable-gathers --dlc-tile-and-distribute="workgroups=8 min-work=1" 2>&1 >/dev/null | FileCheck %s --check-prefix=QUIET --allow-empty
// RUN: dlc-opt %s --split-input-file --dlc-tileable-gathers --dlc-tile-and-distribute="workgroups=64 min-work=16384 scratch-bytes=8192" --canonicalize | FileCheck %s --check-prefix=SCRATCH

// The result op is split along its outer parallel loop, in tiles of 8 rows
// (a register block's rows): 2 of the 8 workgroups asked for. The 32
// columns stay whole (tiles of at least 32). The matmul producer is fused
// into the loop body.
// CHECK-LABEL: func.func @matmul_bias
// CHECK-SAME: dlc.grid = array<i64: 2, 1, 1>
// CHECK: scf.forall (%[[I:.*]]) = (0) to (16) step (8)
// CHECK:   linalg.fill {{.*}} -> tensor<8x32xf32>
// CHECK:   linalg.matmul {{.*}} -> tensor<8x32xf32>
// CHECK:   linalg.generic
// CHECK:   } -> tensor<8x32xf32>
// CHECK:   tensor.parallel_insert_slice
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @matmul_bias(%a: tensor<16x64xf32>, %b: tensor<64x32xf32>, %bias: tensor<32xf32>) -> tensor<16x32xf32> attributes {dlc.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
  %m = linalg.matmul ins(%a, %b : tensor<16x64xf32>, tensor<64x32xf32>) outs(%f : tensor<16x32xf32>) -> tensor<16x32xf32>
  %r = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%m, %bias : tensor<16x32xf32>, tensor<32xf32>) outs(%e : tensor<16x32xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}

// -----

// Loops a fused statistics reduction reduces over stay whole; the grid uses
// divisors (6 of the 6 rows), and x is the innermost distributed loop.
// CHECK-LABEL: func.func @row_reduction
// CHECK-SAME: dlc.grid = array<i64: 6, 1, 1>
// CHECK: scf.forall (%{{.*}}) in (6)
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @row_reduction(%x: tensor<6x10xf32>) -> tensor<6x10xf32> attributes {dlc.kernel} {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<6xf32>
  %e2 = tensor.empty() : tensor<6x10xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e1 : tensor<6xf32>) -> tensor<6xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<6x10xf32>) outs(%f : tensor<6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<6xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %sum : tensor<6x10xf32>, tensor<6xf32>) outs(%e2 : tensor<6x10xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %d = arith.divf %a, %s : f32
    linalg.yield %d : f32
  } -> tensor<6x10xf32>
  return %r : tensor<6x10xf32>
}

// -----

// A statistic over a middle dim (YOLOv8's DFL softmax over 16 bins of
// [1, 16, 4, N]): that loop stays whole and the others are distributed.
// Keeping the innermost loop whole instead, as if every statistic reduced
// rows, gave each GPU thread 16 x 2048 exponentials in private memory,
// which lavapipe silently got wrong.
// CHECK-LABEL: func.func @middle_dim_reduction
// CHECK-SAME: dlc.grid = array<i64: 2, 4, 1>
// CHECK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (4, 2048) step (1, 1024)
// CHECK: tensor.extract_slice %{{.*}} [1, 16, 1, 1024]
// GPU-LABEL: func.func @middle_dim_reduction
// GPU-SAME: dlc.grid = array<i64: 32, 4, 1>, dlc.kernel, dlc.workgroup_size = array<i64: 64, 1, 1>
// GPU: scf.forall (%{{.*}}) in (64)
// GPU-NEXT: tensor.extract_slice %{{.*}} [1, 16, 1, 1]
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#stat = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
func.func @middle_dim_reduction(%x: tensor<1x16x4x2048xf32>) -> tensor<1x16x4x2048xf32> attributes {dlc.kernel} {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<1x4x2048xf32>
  %e2 = tensor.empty() : tensor<1x16x4x2048xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x4x2048xf32>) -> tensor<1x4x2048xf32>
  %sum = linalg.generic {indexing_maps = [#id, #stat], iterator_types = ["parallel", "reduction", "parallel", "parallel"]} ins(%x : tensor<1x16x4x2048xf32>) outs(%f : tensor<1x4x2048xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<1x4x2048xf32>
  %r = linalg.generic {indexing_maps = [#id, #stat, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %sum : tensor<1x16x4x2048xf32>, tensor<1x4x2048xf32>) outs(%e2 : tensor<1x16x4x2048xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %d = arith.divf %a, %s : f32
    linalg.yield %d : f32
  } -> tensor<1x16x4x2048xf32>
  return %r : tensor<1x16x4x2048xf32>
}

// -----

// A result that is not computed by a tileable op runs as one workgroup.
// CHECK-LABEL: func.func @concat
// CHECK-SAME: dlc.grid = array<i64: 1, 1, 1>
// CHECK-NOT: scf.forall
func.func @concat(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<5xf32> attributes {dlc.kernel} {
  %c = tensor.concat dim(0) %a, %b : (tensor<2xf32>, tensor<3xf32>) -> tensor<5xf32>
  return %c : tensor<5xf32>
}

// -----

// GPU tiling: a tensor.pad becomes an elementwise gather (index minus the
// low padding, in bounds or the padding value), which tiles to threads
// without the scf.if that tiling a pad produces.
// CHECK-LABEL: func.func @pad_gpu
// GPU-LABEL: func.func @pad_gpu
// GPU-NOT: tensor.pad
// GPU: scf.forall
// GPU: linalg.generic
// GPU: arith.subi
// GPU: arith.cmpi slt
// GPU: tensor.extract
// GPU: arith.select
// GPU-NOT: scf.if
func.func @pad_gpu(%a: tensor<4x4xf32>) -> tensor<6x6xf32> attributes {dlc.kernel} {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %a low[1, 1] high[1, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<4x4xf32> to tensor<6x6xf32>
  return %p : tensor<6x6xf32>
}

// -----

// A padding value read in the pad's body from a rank-0 input (a zero point
// computed at run time) moves before the pad, which then tiles like one
// with a constant value (upstream tiling fails on the body otherwise); on
// GPUs the gather selects the value read before it.
// CHECK-LABEL: func.func @pad_runtime_value
// CHECK: %[[Z:.*]] = tensor.extract %arg1[] : tensor<i8>
// CHECK: scf.forall
// CHECK:   tensor.pad
// CHECK:   tensor.yield %[[Z]] : i8
// GPU-LABEL: func.func @pad_runtime_value
// GPU: %[[Z:.*]] = tensor.extract %arg1[] : tensor<i8>
// GPU: scf.forall
// GPU: arith.select %{{.*}}, %{{.*}}, %[[Z]] : i8
func.func @pad_runtime_value(%a: tensor<1x8x16x16xi8>, %z: tensor<i8>) -> tensor<1x8x18x18xi8> attributes {dlc.kernel} {
  %p = tensor.pad %a low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    %v = tensor.extract %z[] : tensor<i8>
    tensor.yield %v : i8
  } : tensor<1x8x16x16xi8> to tensor<1x8x18x18xi8>
  return %p : tensor<1x8x18x18xi8>
}

// -----

// A small depthwise convolution (a keyword spotter's, 64 channels of
// 25x5): too little work to split for threads, so one workgroup pads the
// whole input (64x27x7 floats, 48384 bytes) and holds the whole
// convolution result (32000 bytes). With scratch-bytes=8192 (a
// microcontroller) the loops that index the padded input are split, outer
// first, until a workgroup's share fits: 16 tiles of 4 channels (3024 +
// 2000 bytes).
// WORK-LABEL: func.func @small_depthwise
// WORK-SAME: dlc.grid = array<i64: 1, 1, 1>
// SCRATCH-LABEL: func.func @small_depthwise
// SCRATCH-SAME: dlc.grid = array<i64: 16, 1, 1>
// SCRATCH: scf.forall (%{{.*}}) = (0) to (64) step (4)
// SCRATCH: tensor.pad
// SCRATCH: } : tensor<1x4x25x5xf32> to tensor<1x4x27x7xf32>
func.func @small_depthwise(%a: tensor<1x64x25x5xf32>, %w: tensor<64x3x3xf32>) -> tensor<1x64x25x5xf32> attributes {dlc.kernel} {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %a low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x64x25x5xf32> to tensor<1x64x27x7xf32>
  %e = tensor.empty() : tensor<1x64x25x5xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x64x25x5xf32>) -> tensor<1x64x25x5xf32>
  %c = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x64x27x7xf32>, tensor<64x3x3xf32>) outs(%f : tensor<1x64x25x5xf32>) -> tensor<1x64x25x5xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c : tensor<1x64x25x5xf32>) outs(%e : tensor<1x64x25x5xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.maximumf %x, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x64x25x5xf32>
  return %r : tensor<1x64x25x5xf32>
}

// -----

// GPU tiling: a tensor.concat becomes an elementwise gather that reads each
// input at a clamped index and selects by the concatenated dim's index.
// CHECK-LABEL: func.func @concat_gpu
// GPU-LABEL: func.func @concat_gpu
// GPU-NOT: tensor.concat
// GPU: scf.forall
// GPU: linalg.generic
// GPU: arith.maxsi
// GPU: arith.minsi
// GPU: tensor.extract
// GPU: tensor.extract
// GPU: arith.cmpi sge
// GPU: arith.select
func.func @concat_gpu(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> tensor<2x8xf32> attributes {dlc.kernel} {
  %c = tensor.concat dim(1) %a, %b : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  return %c : tensor<2x8xf32>
}

// -----

// An input read through a division (nearest upsampling) becomes a gather
// before tiling, on every target: tiling would offset it by the division of
// the tile's first index and then divide again inside the tile.
// CHECK-LABEL: func.func @upsample
// CHECK: scf.forall
// CHECK: linalg.generic
// CHECK-SAME: outs(
// CHECK: linalg.index 2
// CHECK: affine.apply #{{.*}}(%{{.*}})
// CHECK: tensor.extract %{{.*}}[
// GPU-LABEL: func.func @upsample
// GPU: tensor.extract
#up_in = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 floordiv 2, d3 floordiv 2)>
#up_out = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @upsample(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x16x16xf32> attributes {dlc.kernel} {
  %e = tensor.empty() : tensor<1x4x16x16xf32>
  %u = linalg.generic {indexing_maps = [#up_in, #up_out], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x4x8x8xf32>) outs(%e : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<1x4x16x16xf32>
  return %u : tensor<1x4x16x16xf32>
}

// -----

// GPU tiling: a kernel whose result is a slice becomes a gather, and the
// workgroup size lists only dims with more than one thread, in the x, y, z
// order the thread loop is mapped (197 is prime: one thread along it).
// CHECK-LABEL: func.func @slice_gpu
// GPU-LABEL: func.func @slice_gpu
// GPU-SAME: dlc.workgroup_size = array<i64: 64, 1, 1>
// GPU-NOT: tensor.extract_slice %arg0
// GPU: scf.forall
// GPU: linalg.generic
// GPU: tensor.extract %arg0
// GPU: {mapping = [#gpu.thread<x>]}
func.func @slice_gpu(%a: tensor<3x64x197xf32>) -> tensor<64x197xf32> attributes {dlc.kernel} {
  %s = tensor.extract_slice %a[1, 0, 0] [1, 64, 197] [1, 1, 1] : tensor<3x64x197xf32> to tensor<64x197xf32>
  return %s : tensor<64x197xf32>
}

// -----

// CPU: of the 8 workgroups asked for, the rows give 7; the columns, which
// kernels vectorize, are split only into tiles of at least 32.
// CHECK-LABEL: func.func @columns_stay_wide
// CHECK-SAME: dlc.grid = array<i64: 2, 7, 1>
// CHECK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (7, 64) step (1, 32)
#cw = affine_map<(d0, d1) -> (d0, d1)>
func.func @columns_stay_wide(%a: tensor<7x64xf32>) -> tensor<7x64xf32> attributes {dlc.kernel} {
  %e = tensor.empty() : tensor<7x64xf32>
  %r = linalg.generic {indexing_maps = [#cw, #cw], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<7x64xf32>) outs(%e : tensor<7x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  } -> tensor<7x64xf32>
  return %r : tensor<7x64xf32>
}

// -----

// CPU: a repack for dot products, (N, C / 4, H, W, 4) of (N, C, H, W), as
// the root of the 1x1 convolution that computes what it repacks: the
// convolution vectorizes along W, which stays whole (14 columns, as for an
// NCHW root), and the 4 bytes of a word are never split; the rows give 7.
// CHECK-LABEL: func.func @repack_root
// CHECK-SAME: dlc.grid = array<i64: 7, 1, 1>
// CHECK: scf.forall (%{{.*}}) = (0) to (14) step (2)
#rx = affine_map<(n, f, h, w, c) -> (n, c, h, w)>
#rw = affine_map<(n, f, h, w, c) -> (f, c)>
#ro = affine_map<(n, f, h, w, c) -> (n, f, h, w)>
#pin = affine_map<(n, b, h, w, k) -> (n, b * 4 + k, h, w)>
#pout = affine_map<(n, b, h, w, k) -> (n, b, h, w, k)>
func.func @repack_root(%x: tensor<1x16x14x14xf32>, %w: tensor<32x16xf32>) -> tensor<1x8x14x14x4xf32> attributes {dlc.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x32x14x14xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x32x14x14xf32>) -> tensor<1x32x14x14xf32>
  %c = linalg.generic {indexing_maps = [#rx, #rw, #ro], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%x, %w : tensor<1x16x14x14xf32>, tensor<32x16xf32>) outs(%f : tensor<1x32x14x14xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x32x14x14xf32>
  %pe = tensor.empty() : tensor<1x8x14x14x4xf32>
  %p = linalg.generic {indexing_maps = [#pin, #pout], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%c : tensor<1x32x14x14xf32>) outs(%pe : tensor<1x8x14x14x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<1x8x14x14x4xf32>
  return %p : tensor<1x8x14x14x4xf32>
}

// -----

// CPU: a convolution that pads its input in the kernel is split along the
// output rows first, in tiles of any size: every workgroup pads only the
// rows its tile reads, where a split along output channels would pad the
// whole input each time.
// CHECK-LABEL: func.func @padded_conv
// CHECK-SAME: dlc.grid = array<i64: 8, 1, 1>
// CHECK: scf.forall (%{{.*}}) = (0) to (16) step (2)
// CHECK:   tensor.pad
// CHECK:   to tensor<1x4x4x18xf32>
func.func @padded_conv(%x: tensor<1x4x16x16xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<1x8x16x16xf32> attributes {dlc.kernel} {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x4x16x16xf32> to tensor<1x4x18x18xf32>
  %e = tensor.empty() : tensor<1x8x16x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x4x18x18xf32>, tensor<8x4x3x3xf32>) outs(%f : tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
  return %c : tensor<1x8x16x16xf32>
}

// -----

// CPU: a contraction whose first input the kernel computes (the columns of
// a patch convolution, transposed in the kernel) and which outweighs the
// weights is split along that input's columns only: split along output
// channels, every workgroup would transpose all of it again.
// CHECK-LABEL: func.func @computed_columns
// CHECK-SAME: dlc.grid = array<i64: 8, 1, 1>
// CHECK: scf.forall (%{{.*}}) = (0) to (256) step (32)
// CHECK:   ins(%{{.*}} : tensor<32x96xf32>) outs(%{{.*}} : tensor<96x32xf32>)
// CHECK:   ins(%{{.*}}, %{{.*}} : tensor<96x32xf32>, tensor<32x96xf32>) outs(%{{.*}} : tensor<32x32xf32>)
#cx = affine_map<(p, k) -> (p, k)>
#ct = affine_map<(p, k) -> (k, p)>
#ca = affine_map<(f, k, p) -> (k, p)>
#cb = affine_map<(f, k, p) -> (f, k)>
#cc = affine_map<(f, k, p) -> (f, p)>
func.func @computed_columns(%x: tensor<256x96xf32>, %w: tensor<32x96xf32>) -> tensor<32x256xf32> attributes {dlc.kernel} {
  %zero = arith.constant 0.0 : f32
  %te = tensor.empty() : tensor<96x256xf32>
  %t = linalg.generic {indexing_maps = [#cx, #ct], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<256x96xf32>) outs(%te : tensor<96x256xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<96x256xf32>
  %e = tensor.empty() : tensor<32x256xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<32x256xf32>) -> tensor<32x256xf32>
  %c = linalg.generic {indexing_maps = [#ca, #cb, #cc], iterator_types = ["parallel", "reduction", "parallel"]} ins(%t, %w : tensor<96x256xf32>, tensor<32x96xf32>) outs(%f : tensor<32x256xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<32x256xf32>
  return %c : tensor<32x256xf32>
}

// -----

// CPU: a channels-last convolution (dlc-conv-channels-last) read back in
// NCHW by its epilogue is split along output channels only, in whole
// blocks of 32: each workgroup reads its block's filter once for all
// pixels. The 8 workgroups asked for would also split the rows; they are
// left whole. Its 3136 outputs are under min-work, but its 7.2M
// multiply-adds count as 113K iterations: split all the same.
// CHECK-LABEL: func.func @channels_last_conv
// CHECK-SAME: dlc.grid = array<i64: 2, 1, 1>
// CHECK: scf.forall (%{{.*}}) = (0) to (64) step (32)
// CHECK:   linalg.generic {{.*}} outs(%{{.*}} : tensor<1x7x7x1x32xf32>)
// WORK-LABEL: func.func @channels_last_conv
// WORK-SAME: dlc.grid = array<i64: 2, 1, 1>
#clx = affine_map<(n, oh, ow, fb, fi, c, kh, kw) -> (n, c, oh + kh, ow + kw)>
#clw = affine_map<(n, oh, ow, fb, fi, c, kh, kw) -> (fb, c, kh, kw, fi)>
#clo = affine_map<(n, oh, ow, fb, fi, c, kh, kw) -> (n, oh, ow, fb, fi)>
#clback = affine_map<(n, f, oh, ow) -> (n, oh, ow, f floordiv 32, f mod 32)>
#clid = affine_map<(n, f, oh, ow) -> (n, f, oh, ow)>
func.func @channels_last_conv(%x: tensor<1x256x9x9xf32>, %w: tensor<2x256x3x3x32xf32>) -> tensor<1x64x7x7xf32> attributes {dlc.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x7x7x2x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x7x7x2x32xf32>) -> tensor<1x7x7x2x32xf32>
  %c = linalg.generic {indexing_maps = [#clx, #clw, #clo], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w : tensor<1x256x9x9xf32>, tensor<2x256x3x3x32xf32>) outs(%f : tensor<1x7x7x2x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %q = arith.addf %o, %p : f32
    linalg.yield %q : f32
  } -> tensor<1x7x7x2x32xf32>
  %e2 = tensor.empty() : tensor<1x64x7x7xf32>
  %r = linalg.generic {indexing_maps = [#clback, #clid], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c : tensor<1x7x7x2x32xf32>) outs(%e2 : tensor<1x64x7x7xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x64x7x7xf32>
  return %r : tensor<1x64x7x7xf32>
}

// -----

// 50 output channels in blocks of 32 end in a partial block: a tile of all
// of them would be sliced through `f mod 32` to lanes 0 to 17 of every
// block, and tiles of whole blocks cannot be static. The kernel is left
// whole.
// CHECK-LABEL: func.func @channels_last_partial_block
// CHECK-SAME: dlc.grid = array<i64: 1, 1, 1>
// CHECK-NOT: scf.forall
#pbx = affine_map<(n, oh, ow, fb, fi, c, kh, kw) -> (n, c, oh + kh, ow + kw)>
#pbw = affine_map<(n, oh, ow, fb, fi, c, kh, kw) -> (fb, c, kh, kw, fi)>
#pbo = affine_map<(n, oh, ow, fb, fi, c, kh, kw) -> (n, oh, ow, fb, fi)>
#pbback = affine_map<(n, f, oh, ow) -> (n, oh, ow, f floordiv 32, f mod 32)>
#pbid = affine_map<(n, f, oh, ow) -> (n, f, oh, ow)>
func.func @channels_last_partial_block(%x: tensor<1x256x18x18xf32>, %w: tensor<2x256x3x3x32xf32>) -> tensor<1x50x16x16xf32> attributes {dlc.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x16x2x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16x16x2x32xf32>) -> tensor<1x16x16x2x32xf32>
  %c = linalg.generic {indexing_maps = [#pbx, #pbw, #pbo], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w : tensor<1x256x18x18xf32>, tensor<2x256x3x3x32xf32>) outs(%f : tensor<1x16x16x2x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %q = arith.addf %o, %p : f32
    linalg.yield %q : f32
  } -> tensor<1x16x16x2x32xf32>
  %e2 = tensor.empty() : tensor<1x50x16x16xf32>
  %r = linalg.generic {indexing_maps = [#pbback, #pbid], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c : tensor<1x16x16x2x32xf32>) outs(%e2 : tensor<1x50x16x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x50x16x16xf32>
  return %r : tensor<1x50x16x16xf32>
}

// -----

// The same with 4 input channels innermost for dot products
// (dlc-cpu-int8-conv): the filter's output channels come before that
// reduction dim, and the convolution is still split along them.
// CHECK-LABEL: func.func @dot_channels_last_conv
// CHECK-SAME: dlc.grid = array<i64: 2, 1, 1>
// CHECK: scf.forall (%{{.*}}) = (0) to (64) step (32)
// CHECK:   linalg.generic {{.*}} outs(%{{.*}} : tensor<1x7x7x1x32xi32>)
#dlx = affine_map<(n, oh, ow, fb, fi, c, kh, kw, k) -> (n, c, oh + kh, ow + kw, k)>
#dlw = affine_map<(n, oh, ow, fb, fi, c, kh, kw, k) -> (fb, c, kh, kw, fi, k)>
#dlo = affine_map<(n, oh, ow, fb, fi, c, kh, kw, k) -> (n, oh, ow, fb, fi)>
#dlback = affine_map<(n, f, oh, ow) -> (n, oh, ow, f floordiv 32, f mod 32)>
#dlid = affine_map<(n, f, oh, ow) -> (n, f, oh, ow)>
func.func @dot_channels_last_conv(%x: tensor<1x64x9x9x4xi8>, %w: tensor<2x64x3x3x32x4xi8>) -> tensor<1x64x7x7xi32> attributes {dlc.kernel} {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<1x7x7x2x32xi32>
  %f = linalg.fill ins(%zero : i32) outs(%e : tensor<1x7x7x2x32xi32>) -> tensor<1x7x7x2x32xi32>
  %c = linalg.generic {indexing_maps = [#dlx, #dlw, #dlo], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]} ins(%x, %w : tensor<1x64x9x9x4xi8>, tensor<2x64x3x3x32x4xi8>) outs(%f : tensor<1x7x7x2x32xi32>) {
  ^bb0(%a: i8, %b: i8, %o: i32):
    %0 = arith.extui %a : i8 to i32
    %1 = arith.extsi %b : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %o, %2 : i32
    linalg.yield %3 : i32
  } -> tensor<1x7x7x2x32xi32>
  %e2 = tensor.empty() : tensor<1x64x7x7xi32>
  %r = linalg.generic {indexing_maps = [#dlback, #dlid], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c : tensor<1x7x7x2x32xi32>) outs(%e2 : tensor<1x64x7x7xi32>) {
  ^bb0(%a: i32, %o: i32):
    %m = arith.maxsi %a, %zero : i32
    linalg.yield %m : i32
  } -> tensor<1x64x7x7xi32>
  return %r : tensor<1x64x7x7xi32>
}

// -----

// A channels-last convolution that reads its input from memory (no padding
// in the kernel: dlc-cpu-int8-conv's input repack pads) and has one block of
// channels is split along its pixel rows as well (56 rows, 7 tiles of 8).
// CHECK-LABEL: func.func @one_block_channels_last_conv
// CHECK-SAME: dlc.grid = array<i64: 7, 1, 1>
#obx = affine_map<(n, oh, ow, fb, fi, c, kh, kw, k) -> (n, c, oh * 2 + kh, ow * 2 + kw, k)>
#obw = affine_map<(n, oh, ow, fb, fi, c, kh, kw, k) -> (fb, c, kh, kw, fi, k)>
#obo = affine_map<(n, oh, ow, fb, fi, c, kh, kw, k) -> (n, oh, ow, fb, fi)>
#obback = affine_map<(n, f, oh, ow) -> (n, oh, ow, f floordiv 32, f mod 32)>
#obid = affine_map<(n, f, oh, ow) -> (n, f, oh, ow)>
func.func @one_block_channels_last_conv(%x: tensor<1x1x114x114x4xi8>, %w: tensor<1x1x3x3x32x4xi8>) -> tensor<1x32x56x56xi32> attributes {dlc.kernel} {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<1x56x56x1x32xi32>
  %f = linalg.fill ins(%zero : i32) outs(%e : tensor<1x56x56x1x32xi32>) -> tensor<1x56x56x1x32xi32>
  %c = linalg.generic {indexing_maps = [#obx, #obw, #obo], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]} ins(%x, %w : tensor<1x1x114x114x4xi8>, tensor<1x1x3x3x32x4xi8>) outs(%f : tensor<1x56x56x1x32xi32>) {
  ^bb0(%a: i8, %b: i8, %o: i32):
    %0 = arith.extui %a : i8 to i32
    %1 = arith.extsi %b : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %o, %2 : i32
    linalg.yield %3 : i32
  } -> tensor<1x56x56x1x32xi32>
  %e2 = tensor.empty() : tensor<1x32x56x56xi32>
  %r = linalg.generic {indexing_maps = [#obback, #obid], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c : tensor<1x56x56x1x32xi32>) outs(%e2 : tensor<1x32x56x56xi32>) {
  ^bb0(%a: i32, %o: i32):
    linalg.yield %a : i32
  } -> tensor<1x32x56x56xi32>
  return %r : tensor<1x32x56x56xi32>
}

// -----

// The integer matrix-vector product of dlc-cpu-int8-conv's layout (the
// weights' output columns before the 4 adjacent reduction bytes) read back
// as (M, N): split along blocks of output columns like a channels-last
// convolution, each workgroup computing only its blocks' products.
// CHECK-LABEL: func.func @dot_matvec
// CHECK-SAME: dlc.grid = array<i64: 8, 1, 1>
// CHECK: scf.forall (%{{.*}}) = (0) to (1024) step (128)
// CHECK:   linalg.generic {{.*}} outs(%{{.*}} : tensor<1x8x16xi32>)
#ma = affine_map<(m, b, l, k, q) -> (m, k, q)>
#mb = affine_map<(m, b, l, k, q) -> (b, k, l, q)>
#mo = affine_map<(m, b, l, k, q) -> (m, b, l)>
#back = affine_map<(m, n) -> (m, n floordiv 16, n mod 16)>
#id = affine_map<(m, n) -> (m, n)>
func.func @dot_matvec(%a: tensor<1x320x4xi8>, %w: tensor<64x320x16x4xi8>) -> tensor<1x1024xi32> attributes {dlc.kernel} {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<1x64x16xi32>
  %f = linalg.fill ins(%zero : i32) outs(%e : tensor<1x64x16xi32>) -> tensor<1x64x16xi32>
  %c = linalg.generic {indexing_maps = [#ma, #mb, #mo], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%a, %w : tensor<1x320x4xi8>, tensor<64x320x16x4xi8>) outs(%f : tensor<1x64x16xi32>) {
  ^bb0(%x: i8, %y: i8, %o: i32):
    %0 = arith.extui %x : i8 to i32
    %1 = arith.extsi %y : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %o, %2 : i32
    linalg.yield %3 : i32
  } -> tensor<1x64x16xi32>
  %e2 = tensor.empty() : tensor<1x1024xi32>
  %r = linalg.generic {indexing_maps = [#back, #id], iterator_types = ["parallel", "parallel"]} ins(%c : tensor<1x64x16xi32>) outs(%e2 : tensor<1x1024xi32>) {
  ^bb0(%x: i32, %o: i32):
    linalg.yield %x : i32
  } -> tensor<1x1024xi32>
  return %r : tensor<1x1024xi32>
}

// -----

// CPU: a matrix-vector product reads each weight once: its work is the
// weight matrix (64K elements, 4 workgroups of 16384), not its 64K
// multiply-adds at 64 to one output (1K, one workgroup): its 1024 columns
// split into tiles of 256.
// WORK-LABEL: func.func @matvec
// WORK-SAME: dlc.grid = array<i64: 4, 1, 1>
func.func @matvec(%x: tensor<1x64xf32>, %w: tensor<64x1024xf32>) -> tensor<1x1024xf32> attributes {dlc.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x1024xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x1024xf32>) -> tensor<1x1024xf32>
  %m = linalg.matmul ins(%x, %w : tensor<1x64xf32>, tensor<64x1024xf32>) outs(%f : tensor<1x1024xf32>) -> tensor<1x1024xf32>
  return %m : tensor<1x1024xf32>
}

// -----

// CPU: a wide matrix-vector product (64 workgroups of work) keeps tiles of
// 128 columns, not 32: each workgroup then reads 512 contiguous bytes of
// every weight row, which the prefetchers follow (16 workgroups).
// WORK-LABEL: func.func @matvec_wide
// WORK-SAME: dlc.grid = array<i64: 16, 1, 1>
// WORK: scf.forall (%{{.*}}) = (0) to (2048) step (128)
func.func @matvec_wide(%x: tensor<1x512xf32>, %w: tensor<512x2048xf32>) -> tensor<1x2048xf32> attributes {dlc.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2048xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2048xf32>) -> tensor<1x2048xf32>
  %m = linalg.matmul ins(%x, %w : tensor<1x512xf32>, tensor<512x2048xf32>) outs(%f : tensor<1x2048xf32>) -> tensor<1x2048xf32>
  return %m : tensor<1x2048xf32>
}

// -----

// CPU: every workgroup of a padded convolution copies the input rows its
// tile reads (a 3x3 filter: two more than the tile's rows), so on a tall
// image the rows go in tiles of at least two, and once they give enough
// workgroups (8) the output channels are not split as well: each split
// would copy the padded input again. 64 workgroups' worth of work: tiles
// of one row each would copy 3x the image, tiles of two rows 2x (the
// columns, which index the input too, are split in two as well).
// WORK-LABEL: func.func @padded_conv_tall
// WORK-SAME: dlc.grid = array<i64: 2, 32, 1>
// WORK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (64, 64) step (2, 32)
// WORK:   to tensor<1x32x4x34xf32>
func.func @padded_conv_tall(%x: tensor<1x32x64x64xf32>, %w: tensor<64x32x3x3xf32>) -> tensor<1x64x64x64xf32> attributes {dlc.kernel} {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x32x64x64xf32> to tensor<1x32x66x66xf32>
  %e = tensor.empty() : tensor<1x64x64x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x64x64x64xf32>) -> tensor<1x64x64x64xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x32x66x66xf32>, tensor<64x32x3x3xf32>) outs(%f : tensor<1x64x64x64xf32>) -> tensor<1x64x64x64xf32>
  return %c : tensor<1x64x64x64xf32>
}

// -----

// Work for 36 workgroups on an image of 8 rows: the rows, in tiles of two,
// (and columns, which the input is indexed by too) are split, the output
// channels not: each split of those would copy the padded input again.
// WORK-LABEL: func.func @padded_conv_no_channel_split
// WORK-SAME: dlc.grid = array<i64: 2, 4, 1>
// WORK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (8, 64) step (2, 32)
func.func @padded_conv_no_channel_split(%x: tensor<1x64x8x64xf32>, %w: tensor<128x64x3x3xf32>) -> tensor<1x128x8x64xf32> attributes {dlc.kernel} {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x64x8x64xf32> to tensor<1x64x10x66xf32>
  %e = tensor.empty() : tensor<1x128x8x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x128x8x64xf32>) -> tensor<1x128x8x64xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x64x10x66xf32>, tensor<128x64x3x3xf32>) outs(%f : tensor<1x128x8x64xf32>) -> tensor<1x128x8x64xf32>
  return %c : tensor<1x128x8x64xf32>
}

// -----

// A channels-last convolution that pads its input: every workgroup (a
// block of output channels) copies the whole padded input, so 64
// workgroups' worth of work gets 8 of the 16 channel blocks' workgroups.
// WORK-LABEL: func.func @padded_channels_last_conv
// WORK-SAME: dlc.grid = array<i64: 8, 1, 1>
// WORK: scf.forall (%{{.*}}) = (0) to (512) step (64)
#pclx = affine_map<(n, oh, ow, fb, fi, c, kh, kw) -> (n, c, oh + kh, ow + kw)>
#pclw = affine_map<(n, oh, ow, fb, fi, c, kh, kw) -> (fb, c, kh, kw, fi)>
#pclo = affine_map<(n, oh, ow, fb, fi, c, kh, kw) -> (n, oh, ow, fb, fi)>
#pclback = affine_map<(n, f, oh, ow) -> (n, oh, ow, f floordiv 32, f mod 32)>
#pclid = affine_map<(n, f, oh, ow) -> (n, f, oh, ow)>
func.func @padded_channels_last_conv(%x: tensor<1x512x7x7xf32>, %w: tensor<16x512x3x3x32xf32>) -> tensor<1x512x7x7xf32> attributes {dlc.kernel} {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x512x7x7xf32> to tensor<1x512x9x9xf32>
  %e = tensor.empty() : tensor<1x7x7x16x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x7x7x16x32xf32>) -> tensor<1x7x7x16x32xf32>
  %c = linalg.generic {indexing_maps = [#pclx, #pclw, #pclo], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%p, %w : tensor<1x512x9x9xf32>, tensor<16x512x3x3x32xf32>) outs(%f : tensor<1x7x7x16x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %q = arith.addf %o, %m : f32
    linalg.yield %q : f32
  } -> tensor<1x7x7x16x32xf32>
  %e2 = tensor.empty() : tensor<1x512x7x7xf32>
  %r = linalg.generic {indexing_maps = [#pclback, #pclid], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c : tensor<1x7x7x16x32xf32>) outs(%e2 : tensor<1x512x7x7xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<1x512x7x7xf32>
  return %r : tensor<1x512x7x7xf32>
}

// -----

// GPU register tiles: a convolution's threads each take several output
// channels (which reuse each loaded image element) or consecutive columns
// (which reuse each filter element), as many as keep 128 workgroups of at
// least a warp and 16K threads in all: here (64 threads a workgroup) 4
// channels, threads 16 x 4 (normalized thread loops from 0 in steps of 1),
// 256 workgroups.
// CHECK-LABEL: func.func @conv_register_tile
// GPU-LABEL: func.func @conv_register_tile
// GPU-SAME: dlc.grid = array<i64: 1, 4, 64>
// GPU-SAME: dlc.workgroup_size = array<i64: 16, 4, 1>
// GPU: scf.forall (%{{.*}}, %{{.*}}, %{{.*}}) = (0, 0, 0) to (256, 16, 16) step (4, 4, 16)
// GPU: scf.forall (%{{.*}}, %{{.*}}) in (4, 16)
// GPU: linalg.conv_2d_nchw_fchw
// GPU-SAME: outs(%{{.*}} : tensor<1x4x1x1xf32>)
func.func @conv_register_tile(%x: tensor<1x16x18x18xf32>, %w: tensor<256x16x3x3xf32>) -> tensor<1x256x16x16xf32> attributes {dlc.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x256x16x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x256x16x16xf32>) -> tensor<1x256x16x16xf32>
  %c = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x16x18x18xf32>, tensor<256x16x3x3xf32>) outs(%f : tensor<1x256x16x16xf32>) -> tensor<1x256x16x16xf32>
  return %c : tensor<1x256x16x16xf32>
}

// -----

// No register tiles where they were measured slower: a depthwise
// convolution (9 multiply-adds per output; its channels reuse nothing), a
// 1x1 convolution (a matrix product: no filter window) and a matrix
// product: one output per thread.
// CHECK-LABEL: func.func @depthwise_no_register_tile
// GPU-LABEL: func.func @depthwise_no_register_tile
// GPU: linalg.depthwise_conv_2d_nchw_chw
// GPU-SAME: outs(%{{.*}} : tensor<1x1x1x1xf32>)
func.func @depthwise_no_register_tile(%x: tensor<1x256x18x18xf32>, %w: tensor<256x3x3xf32>) -> tensor<1x256x16x16xf32> attributes {dlc.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x256x16x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x256x16x16xf32>) -> tensor<1x256x16x16xf32>
  %c = linalg.depthwise_conv_2d_nchw_chw ins(%x, %w : tensor<1x256x18x18xf32>, tensor<256x3x3xf32>) outs(%f : tensor<1x256x16x16xf32>) -> tensor<1x256x16x16xf32>
  return %c : tensor<1x256x16x16xf32>
}
// CHECK-LABEL: func.func @pointwise_no_register_tile
// GPU-LABEL: func.func @pointwise_no_register_tile
// GPU: linalg.conv_2d_nchw_fchw
// GPU-SAME: outs(%{{.*}} : tensor<1x1x1x1xf32>)
func.func @pointwise_no_register_tile(%x: tensor<1x256x16x16xf32>, %w: tensor<256x256x1x1xf32>) -> tensor<1x256x16x16xf32> attributes {dlc.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x256x16x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x256x16x16xf32>) -> tensor<1x256x16x16xf32>
  %c = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x256x16x16xf32>, tensor<256x256x1x1xf32>) outs(%f : tensor<1x256x16x16xf32>) -> tensor<1x256x16x16xf32>
  return %c : tensor<1x256x16x16xf32>
}
// CHECK-LABEL: func.func @matmul_no_register_tile
// GPU-LABEL: func.func @matmul_no_register_tile
// GPU: linalg.matmul
// GPU-SAME: outs(%{{.*}} : tensor<1x1xf32>)
func.func @matmul_no_register_tile(%a: tensor<256x256xf32>, %b: tensor<256x256xf32>) -> tensor<256x256xf32> attributes {dlc.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256x256xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<256x256xf32>) -> tensor<256x256xf32>
  %c = linalg.matmul ins(%a, %b : tensor<256x256xf32>, tensor<256x256xf32>) outs(%f : tensor<256x256xf32>) -> tensor<256x256xf32>
  return %c : tensor<256x256xf32>
}

// -----

// A kernel of few threads in all (4 output channels of a squeeze-excite
// convolution) keeps one output per thread: a register tile would leave
// one thread doing everything.
// CHECK-LABEL: func.func @tiny_conv
// GPU-LABEL: func.func @tiny_conv
// GPU-SAME: dlc.workgroup_size = array<i64: 4, 1, 1>
// GPU: linalg.conv_2d_nchw_fchw
// GPU-SAME: outs(%{{.*}} : tensor<1x1x1x1xf32>)
func.func @tiny_conv(%x: tensor<1x96x1x1xf32>, %w: tensor<4x96x1x1xf32>) -> tensor<1x4x1x1xf32> attributes {dlc.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x1x1xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x1x1xf32>) -> tensor<1x4x1x1xf32>
  %c = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x96x1x1xf32>, tensor<4x96x1x1xf32>) outs(%f : tensor<1x4x1x1xf32>) -> tensor<1x4x1x1xf32>
  return %c : tensor<1x4x1x1xf32>
}

// -----

// With subgroup lanes (Vulkan +subgroup), a softmax's rows are shared by 8
// lanes (x), each a contiguous 16 of the 128 columns; rows go to y. The
// kernel is marked for dlc-gpu-subgroup-rows. Without lanes a thread takes
// a whole row.
// LANES-LABEL: func.func @softmax_rows
// LANES-SAME: dlc.subgroup_lanes = 8
// LANES-SAME: dlc.workgroup_size = array<i64: 8, 8, 1>
// LANES: scf.forall (%{{.*}}, %{{.*}}) in (8, 8)
// LANES: linalg.generic {{.*}} outs(%{{.*}} : tensor<1x16xf32>)
// GPU-LABEL: func.func @softmax_rows
// GPU-NOT: subgroup_lanes
// GPU: outs(%{{.*}} : tensor<1x128xf32>)
#sm_row = affine_map<(d0, d1) -> (d0, d1)>
#sm_red = affine_map<(d0, d1) -> (d0)>
func.func @softmax_rows(%x: tensor<64x128xf32>) -> tensor<64x128xf32> attributes {dlc.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %s = linalg.generic {indexing_maps = [#sm_row, #sm_red], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x128xf32>) outs(%f : tensor<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    %a = arith.addf %out, %v : f32
    linalg.yield %a : f32
  } -> tensor<64xf32>
  %o = tensor.empty() : tensor<64x128xf32>
  %r = linalg.generic {indexing_maps = [#sm_row, #sm_red, #sm_row], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : tensor<64x128xf32>, tensor<64xf32>) outs(%o : tensor<64x128xf32>) {
  ^bb0(%in: f32, %d: f32, %out: f32):
    %v = math.exp %in : f32
    %q = arith.divf %v, %d : f32
    linalg.yield %q : f32
  } -> tensor<64x128xf32>
  return %r : tensor<64x128xf32>
}

// -----

// A producer whose output is not read through a projection (a sum kept as
// [.., 1, 1]) cannot be fused into the loop: it stays whole before it, and
// the compile goes on without an error (upstream's report of the declined
// fusion is not shown).
// QUIET-NOT: error
// CHECK-LABEL: func.func @unfusable_producer
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "reduction"]
// CHECK: scf.forall
// CHECK:   tensor.extract_slice %[[SUM]]
#in4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#sum4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, 0)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @unfusable_producer(%x: tensor<1x64x8x8xi32>) -> tensor<1x64x1x1xf32> attributes {dlc.kernel} {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<1x64x1x1xi32>
  %f = linalg.fill ins(%zero : i32) outs(%e : tensor<1x64x1x1xi32>) -> tensor<1x64x1x1xi32>
  %s = linalg.generic {indexing_maps = [#in4, #sum4], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%x : tensor<1x64x8x8xi32>) outs(%f : tensor<1x64x1x1xi32>) {
  ^bb0(%a: i32, %o: i32):
    %t = arith.addi %o, %a : i32
    linalg.yield %t : i32
  } -> tensor<1x64x1x1xi32>
  %ef = tensor.empty() : tensor<1x64x1x1xf32>
  %r = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<1x64x1x1xi32>) outs(%ef : tensor<1x64x1x1xf32>) {
  ^bb0(%a: i32, %o: f32):
    %c = arith.sitofp %a : i32 to f32
    linalg.yield %c : f32
  } -> tensor<1x64x1x1xf32>
  return %r : tensor<1x64x1x1xf32>
}

// -----

// Work for 64 workgroups on an image of 4 rows (CRNN's late layers): the
// rows give 2 tiles of two rows (a tile of one row would leave the
// register tiler no row loop to skip the taps on padding rows with), and
// the output channels only make up the rest of 8, since each channel tile
// copies the same padded rows again (4 tiles of 48, not 12 of 16).
// WORK-LABEL: func.func @padded_conv_short
// WORK-SAME: dlc.grid = array<i64: 2, 4, 1>
// WORK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (192, 4) step (48, 2)
func.func @padded_conv_short(%x: tensor<1x192x4x80xf32>, %w: tensor<192x192x3x3xf32>) -> tensor<1x192x4x80xf32> attributes {dlc.kernel} {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x192x4x80xf32> to tensor<1x192x6x82xf32>
  %e = tensor.empty() : tensor<1x192x4x80xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x192x4x80xf32>) -> tensor<1x192x4x80xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w : tensor<1x192x6x82xf32>, tensor<192x192x3x3xf32>) outs(%f : tensor<1x192x4x80xf32>) -> tensor<1x192x4x80xf32>
  return %c : tensor<1x192x4x80xf32>
}

// RUN: dlc-opt %s --split-input-file --dlc-tileable-gathers | FileCheck %s
// RUN: dlc-opt %s --split-input-file --dlc-tileable-gathers=copies=1 | FileCheck %s --check-prefix=COPIES

// An input read through a division (nearest upsampling) is read by
// tensor.extract at the map applied to the loop indices, on every target.
// CHECK-LABEL: func.func @upsample
// CHECK: linalg.generic
// CHECK-SAME: outs(
// CHECK-DAG: linalg.index 2
// CHECK-DAG: linalg.index 3
// CHECK: affine.apply #{{.*}}(%{{.*}})
// CHECK: tensor.extract %arg0[
// COPIES-LABEL: func.func @upsample
// COPIES: tensor.extract %arg0[
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

// A reversed read (negative stride) is gathered too; the input read with
// a plain map stays an operand.
// CHECK-LABEL: func.func @reverse_plus
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg1 : tensor<8xf32>)
// CHECK: tensor.extract %arg0[
#rev = affine_map<(d0) -> (-d0 + 7)>
#id1 = affine_map<(d0) -> (d0)>
func.func @reverse_plus(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> attributes {dlc.kernel} {
  %e = tensor.empty() : tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#rev, #id1, #id1], iterator_types = ["parallel"]} ins(%x, %y : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// A channels-last convolution's result, read back in NCHW through
// (f floordiv 32, f mod 32), stays an operand: tiling keeps to whole
// blocks of 32 channels there.
// CHECK-LABEL: func.func @channels_last_conv
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}}, %arg2 : tensor<1x7x7x2x32xf32>, tensor<64xf32>)
// CHECK-NOT: tensor.extract
// CHECK: return
#clx = affine_map<(n, oh, ow, b, l, c, kh, kw) -> (n, c, oh + kh, ow + kw)>
#clw = affine_map<(n, oh, ow, b, l, c, kh, kw) -> (b, c, kh, kw, l)>
#clo = affine_map<(n, oh, ow, b, l, c, kh, kw) -> (n, oh, ow, b, l)>
#clback = affine_map<(n, f, oh, ow) -> (n, oh, ow, f floordiv 32, f mod 32)>
#clbias = affine_map<(n, f, oh, ow) -> (f)>
#clid = affine_map<(n, f, oh, ow) -> (n, f, oh, ow)>
func.func @channels_last_conv(%x: tensor<1x16x9x9xf32>, %w: tensor<2x16x3x3x32xf32>, %bias: tensor<64xf32>) -> tensor<1x64x7x7xf32> attributes {dlc.kernel} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x7x7x2x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x7x7x2x32xf32>) -> tensor<1x7x7x2x32xf32>
  %c = linalg.generic {indexing_maps = [#clx, #clw, #clo], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %w : tensor<1x16x9x9xf32>, tensor<2x16x3x3x32xf32>) outs(%f : tensor<1x7x7x2x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x7x7x2x32xf32>
  %e2 = tensor.empty() : tensor<1x64x7x7xf32>
  %r = linalg.generic {indexing_maps = [#clback, #clbias, #clid], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %bias : tensor<1x7x7x2x32xf32>, tensor<64xf32>) outs(%e2 : tensor<1x64x7x7xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x64x7x7xf32>
  return %r : tensor<1x64x7x7xf32>
}

// -----

// The same read of a result that no convolution computes is gathered.
// CHECK-LABEL: func.func @blocks_without_conv
// CHECK: linalg.generic
// CHECK: tensor.extract %arg0[
#bback = affine_map<(n, f) -> (n, f floordiv 32, f mod 32)>
#bid = affine_map<(n, f) -> (n, f)>
func.func @blocks_without_conv(%x: tensor<1x2x32xf32>) -> tensor<1x64xf32> attributes {dlc.kernel} {
  %e = tensor.empty() : tensor<1x64xf32>
  %r = linalg.generic {indexing_maps = [#bback, #bid], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<1x2x32xf32>) outs(%e : tensor<1x64xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<1x64xf32>
  return %r : tensor<1x64xf32>
}

// -----

// Only kernels are rewritten.
// CHECK-LABEL: func.func @not_a_kernel
// CHECK-NOT: tensor.extract
// CHECK: return
func.func @not_a_kernel(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x16x16xf32> {
  %e = tensor.empty() : tensor<1x4x16x16xf32>
  %u = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2 floordiv 2, d3 floordiv 2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x4x8x8xf32>) outs(%e : tensor<1x4x16x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<1x4x16x16xf32>
  return %u : tensor<1x4x16x16xf32>
}

// -----

// A padding value read in the pad's body from a rank-0 input (a zero point
// computed at run time) moves before the pad; the pad itself stays on
// CPUs. With `copies` the pad becomes a gather (index minus the low
// padding, in bounds or the value read before it).
// CHECK-LABEL: func.func @pad_runtime_value
// CHECK: %[[Z:.*]] = tensor.extract %arg1[] : tensor<i8>
// CHECK-NEXT: tensor.pad
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tensor.yield %[[Z]] : i8
// COPIES-LABEL: func.func @pad_runtime_value
// COPIES: %[[Z:.*]] = tensor.extract %arg1[] : tensor<i8>
// COPIES-NOT: tensor.pad
// COPIES: linalg.generic
// COPIES: arith.subi
// COPIES: arith.cmpi slt
// COPIES: tensor.extract %arg0
// COPIES: arith.select %{{.*}}, %{{.*}}, %[[Z]] : i8
func.func @pad_runtime_value(%a: tensor<1x8x16x16xi8>, %z: tensor<i8>) -> tensor<1x8x18x18xi8> attributes {dlc.kernel} {
  %p = tensor.pad %a low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    %v = tensor.extract %z[] : tensor<i8>
    tensor.yield %v : i8
  } : tensor<1x8x16x16xi8> to tensor<1x8x18x18xi8>
  return %p : tensor<1x8x18x18xi8>
}

// -----

// A padding value computed from the index stays in the pad, which stays a
// pad even with `copies`.
// COPIES-LABEL: func.func @pad_index_value
// COPIES: tensor.pad
func.func @pad_index_value(%a: tensor<4xi64>) -> tensor<6xi64> attributes {dlc.kernel} {
  %p = tensor.pad %a low[1] high[1] {
  ^bb0(%i: index):
    %v = arith.index_cast %i : index to i64
    tensor.yield %v : i64
  } : tensor<4xi64> to tensor<6xi64>
  return %p : tensor<6xi64>
}

// -----

// With `copies`, a tensor.concat becomes an elementwise gather that reads
// each input at a clamped index and selects by the concatenated dim's
// index; without, it stays.
// CHECK-LABEL: func.func @concat
// CHECK: tensor.concat
// COPIES-LABEL: func.func @concat
// COPIES-NOT: tensor.concat
// COPIES: linalg.generic
// COPIES: arith.maxsi
// COPIES: arith.minsi
// COPIES: tensor.extract %arg0
// COPIES: tensor.extract %arg1
// COPIES: arith.cmpi sge
// COPIES: arith.select
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> tensor<2x8xf32> attributes {dlc.kernel} {
  %c = tensor.concat dim(1) %a, %b : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
  return %c : tensor<2x8xf32>
}

// -----

// With `copies`, a returned extract_slice reads its source at offset plus
// index times stride (the dropped unit dim at its offset).
// CHECK-LABEL: func.func @extract_slice
// CHECK: tensor.extract_slice
// COPIES-LABEL: func.func @extract_slice
// COPIES-NOT: tensor.extract_slice
// COPIES: linalg.generic
// COPIES: %[[C1:.*]] = arith.constant 1 : index
// COPIES: %[[I:.*]] = linalg.index 0
// COPIES: %[[J:.*]] = linalg.index 1
// COPIES: %[[J2:.*]] = arith.muli %[[J]], %{{.*}}
// COPIES: tensor.extract %arg0[%[[C1]], %{{.*}}, %{{.*}}]
func.func @extract_slice(%a: tensor<3x64x200xf32>) -> tensor<64x100xf32> attributes {dlc.kernel} {
  %s = tensor.extract_slice %a[1, 0, 0] [1, 64, 100] [1, 1, 2] : tensor<3x64x200xf32> to tensor<64x100xf32>
  return %s : tensor<64x100xf32>
}

// -----

// With `copies`, a returned insert_slice reads the source inside the
// slice's window and the destination elsewhere; a slice that is not the
// kernel's result stays.
// CHECK-LABEL: func.func @insert_slice
// CHECK: tensor.insert_slice
// COPIES-LABEL: func.func @insert_slice
// COPIES-NOT: tensor.insert_slice
// COPIES: linalg.generic
// COPIES-SAME: ins(%arg1 : tensor<8x8xf32>)
// COPIES: arith.divsi
// COPIES: arith.remsi
// COPIES: tensor.extract %arg0
// COPIES: arith.select
func.func @insert_slice(%src: tensor<4x4xf32>, %dest: tensor<8x8xf32>) -> tensor<8x8xf32> attributes {dlc.kernel} {
  %s = tensor.insert_slice %src into %dest[2, 2] [4, 4] [1, 1] : tensor<4x4xf32> into tensor<8x8xf32>
  return %s : tensor<8x8xf32>
}

// RUN: dlc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dlc-cpu-int8-conv{lanes=4 dot-products=true}))' | FileCheck %s
// RUN: dlc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dlc-cpu-int8-conv{lanes=4}))' | FileCheck %s --check-prefix=NODOT
// RUN: dlc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dlc-cpu-int8-conv{lanes=4 dot-products=true signed-dot=true}))' | FileCheck %s --check-prefix=SDOT

// A 1x1 convolution on a 3x3 image (a row fills 5 of 8 lanes): along
// output channels. C = 6 input channels are padded to 8 with zeros; the
// filter w[o][c] = o - c becomes (F/8, C/4, 1, 1, 8, 4) with 4 channels
// innermost. The input zero point 3 leaves the body: the correction is
// -3 * sum_c (o - c) = 45 - 18 o. The reshape to (N, M, OH, OW) is folded
// into the transpose back.
// CHECK-DAG: #[[PACK:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 * 4 + d4, d2, d3)>
// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d5, d1 + d6, d2 + d7, d8)>
// CHECK-DAG: #[[W:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d3, d5, d6, d7, d4, d8)>
// CHECK-DAG: #[[BACK:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3, d1 floordiv 8, d1 mod 8)>
// CHECK-DAG: #[[CH:.*]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-LABEL: func.func @pointwise_channels
// CHECK: %[[WP:.*]] = arith.constant dense<{{\[\[\[\[\[\[}}0, -1, -2, -3], [1, 0, -1, -2]
// CHECK-SAME: {{\[\[\[\[}}-4, -5, 0, 0], [-3, -4, 0, 0]
// CHECK-SAME: tensor<1x2x1x1x8x4xi8>
// CHECK: %[[PAD:.*]] = tensor.pad %arg0 low[0, 0, 0, 0] high[0, 2, 0, 0]
// CHECK: %[[XP:.*]] = linalg.generic {indexing_maps = [#[[PACK]], {{.*}}]{{.*}} ins(%[[PAD]] : tensor<1x8x3x3xi8>) outs({{.*}} : tensor<1x2x3x3x4xi8>) attrs =  {dlc.materialize}
// CHECK-NEXT: ^bb0(%[[IN:.*]]: i8, %{{.*}}: i8):
// CHECK-NEXT: linalg.yield %[[IN]] : i8
// CHECK: %[[ACC:.*]] = linalg.generic {indexing_maps = [#[[X]], #[[W]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]} ins(%[[XP]], %[[WP]] : tensor<1x2x3x3x4xi8>, tensor<1x2x1x1x8x4xi8>) outs({{.*}} : tensor<1x3x3x1x8xi32>)
// CHECK: arith.extui
// CHECK: arith.extsi
// CHECK: arith.muli
// CHECK: arith.addi
// CHECK: %[[CORR:.*]] = arith.constant dense<[45, 27, 9, -9, -27, -45, -63, -81]> : tensor<8xi32>
// CHECK: %[[OUT:.*]] = linalg.generic {indexing_maps = [#[[BACK]], #[[CH]], {{.*}}]{{.*}} ins(%[[ACC]], %[[CORR]] : tensor<1x3x3x1x8xi32>, tensor<8xi32>)
// CHECK: return %[[OUT]] : tensor<1x8x3x3xi32>
// With signed x signed dot products (AArch64 sdot), the unsigned input is
// repacked as signed bytes (its sign bit flipped: x - 128) and sign-
// extended, and its zero point moves with it: 3 - 128 = -125, so the
// correction is 125 * sum_c (o - c) = -1875 + 750 o.
// SDOT-LABEL: func.func @pointwise_channels
// SDOT: linalg.generic {{.*}} attrs =  {dlc.materialize}
// SDOT-NEXT: ^bb0(%[[IN:.*]]: i8, %{{.*}}: i8):
// SDOT-NEXT: %[[FLIP:.*]] = arith.constant -128 : i8
// SDOT-NEXT: arith.xori %[[IN]], %[[FLIP]] : i8
// SDOT: arith.extsi
// SDOT: arith.extsi
// SDOT: arith.constant dense<[-1875, -1125, -375, 375, 1125, 1875, 2625, 3375]> : tensor<8xi32>
// Without dot products the convolution keeps its layout; the zero point
// leaves its body, for the same correction, and the unit group loop goes:
// it reads the input before the reshape that added the group dim and
// writes (N, M, OH, OW), where the correction's add follows it.
// NODOT-DAG: #[[X:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 + d5, d3 + d6)>
// NODOT-DAG: #[[W:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
// NODOT-DAG: #[[O:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
// NODOT-LABEL: func.func @pointwise_channels
// NODOT-NOT: dlc.materialize
// NODOT: %[[ACC:.*]] = linalg.generic {indexing_maps = [#[[X]], #[[W]], #[[O]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%arg0, %{{.*}} : tensor<1x6x3x3xi8>, tensor<8x6x1x1xi8>) outs(%{{.*}} : tensor<1x8x3x3xi32>)
// NODOT: %[[CORR:.*]] = arith.constant dense<[45, 27, 9, -9, -27, -45, -63, -81]> : tensor<8xi32>
// NODOT: %[[OUT:.*]] = linalg.generic {{.*}} ins(%[[ACC]], %[[CORR]] : tensor<1x8x3x3xi32>, tensor<8xi32>)
// NODOT: return %[[OUT]] : tensor<1x8x3x3xi32>
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d5, d3 + d6, d4 + d7)>
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d2, d5, d6, d7)>
#s = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> ()>
#o = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>
func.func @pointwise_channels(%x4: tensor<1x6x3x3xi8>) -> tensor<1x8x3x3xi32> {
  %w = arith.constant dense<[[[[[0]], [[-1]], [[-2]], [[-3]], [[-4]], [[-5]]], [[[1]], [[0]], [[-1]], [[-2]], [[-3]], [[-4]]], [[[2]], [[1]], [[0]], [[-1]], [[-2]], [[-3]]], [[[3]], [[2]], [[1]], [[0]], [[-1]], [[-2]]], [[[4]], [[3]], [[2]], [[1]], [[0]], [[-1]]], [[[5]], [[4]], [[3]], [[2]], [[1]], [[0]]], [[[6]], [[5]], [[4]], [[3]], [[2]], [[1]]], [[[7]], [[6]], [[5]], [[4]], [[3]], [[2]]]]]> : tensor<1x8x6x1x1xi8>
  %zx = arith.constant dense<3> : tensor<i8>
  %c0 = arith.constant 0 : i32
  %x = tensor.expand_shape %x4 [[0], [1, 2], [3], [4]] output_shape [1, 1, 6, 3, 3] : tensor<1x6x3x3xi8> into tensor<1x1x6x3x3xi8>
  %e = tensor.empty() : tensor<1x1x8x3x3xi32>
  %init = linalg.fill ins(%c0 : i32) outs(%e : tensor<1x1x8x3x3xi32>) -> tensor<1x1x8x3x3xi32>
  %y = linalg.generic {indexing_maps = [#x, #w, #s, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w, %zx : tensor<1x1x6x3x3xi8>, tensor<1x8x6x1x1xi8>, tensor<i8>) outs(%init : tensor<1x1x8x3x3xi32>) {
  ^bb0(%a: i8, %b: i8, %z: i8, %acc: i32):
    %0 = arith.extui %a : i8 to i32
    %1 = arith.extui %z : i8 to i32
    %2 = arith.subi %0, %1 : i32
    %3 = arith.extsi %b : i8 to i32
    %4 = arith.muli %2, %3 : i32
    %5 = arith.addi %acc, %4 : i32
    linalg.yield %5 : i32
  } -> tensor<1x1x8x3x3xi32>
  %c = tensor.collapse_shape %y [[0], [1, 2], [3], [4]] : tensor<1x1x8x3x3xi32> into tensor<1x8x3x3xi32>
  return %c : tensor<1x8x3x3xi32>
}

// -----

// Six output channels along channels would end in a partial block of 4
// lanes (see @matmul_partial_block): the convolution keeps its layout
// (integer multiply-adds) instead.
// CHECK-LABEL: func.func @pointwise_partial_block
// CHECK-NOT: dlc.materialize
// CHECK-NOT: floordiv
// CHECK: linalg.generic {{.*}} ins(%arg0, %{{.*}} : tensor<1x6x3x3xi8>, tensor<6x6x1x1xi8>) outs(%{{.*}} : tensor<1x6x3x3xi32>)
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d5, d3 + d6, d4 + d7)>
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d2, d5, d6, d7)>
#s = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> ()>
#o = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>
func.func @pointwise_partial_block(%x4: tensor<1x6x3x3xi8>) -> tensor<1x6x3x3xi32> {
  %w = arith.constant dense<1> : tensor<1x6x6x1x1xi8>
  %zx = arith.constant dense<3> : tensor<i8>
  %c0 = arith.constant 0 : i32
  %x = tensor.expand_shape %x4 [[0], [1, 2], [3], [4]] output_shape [1, 1, 6, 3, 3] : tensor<1x6x3x3xi8> into tensor<1x1x6x3x3xi8>
  %e = tensor.empty() : tensor<1x1x6x3x3xi32>
  %init = linalg.fill ins(%c0 : i32) outs(%e : tensor<1x1x6x3x3xi32>) -> tensor<1x1x6x3x3xi32>
  %y = linalg.generic {indexing_maps = [#x, #w, #s, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w, %zx : tensor<1x1x6x3x3xi8>, tensor<1x6x6x1x1xi8>, tensor<i8>) outs(%init : tensor<1x1x6x3x3xi32>) {
  ^bb0(%a: i8, %b: i8, %z: i8, %acc: i32):
    %0 = arith.extui %a : i8 to i32
    %1 = arith.extui %z : i8 to i32
    %2 = arith.subi %0, %1 : i32
    %3 = arith.extsi %b : i8 to i32
    %4 = arith.muli %2, %3 : i32
    %5 = arith.addi %acc, %4 : i32
    linalg.yield %5 : i32
  } -> tensor<1x1x6x3x3xi32>
  %c = tensor.collapse_shape %y [[0], [1, 2], [3], [4]] : tensor<1x1x6x3x3xi32> into tensor<1x6x3x3xi32>
  return %c : tensor<1x6x3x3xi32>
}


// -----

// A 1x1 convolution at stride 1 over its whole 5x5 input: rows of 5 pixels
// would fill vectors badly, but its 25 pixels are one run (25 of 28
// lanes), so it goes along pixels, NCHW out, with no transpose back.
// CHECK-LABEL: func.func @pointwise_pixels
// CHECK: %[[XP:.*]] = linalg.generic {{.*}} outs({{.*}} : tensor<1x2x5x5x4xi8>) attrs =  {dlc.materialize}
// CHECK: linalg.generic {{.*}} ins(%[[XP]], %{{.*}} : tensor<1x2x5x5x4xi8>, tensor<8x2x1x1x4xi8>) outs({{.*}} : tensor<1x8x5x5xi32>)
// CHECK-NOT: floordiv
// CHECK: return
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d5, d3 + d6, d4 + d7)>
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d2, d5, d6, d7)>
#s = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> ()>
#o = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>
func.func @pointwise_pixels(%x4: tensor<1x8x5x5xi8>) -> tensor<1x8x5x5xi32> {
  %w = arith.constant dense<1> : tensor<1x8x8x1x1xi8>
  %zx = arith.constant dense<3> : tensor<i8>
  %c0 = arith.constant 0 : i32
  %x = tensor.expand_shape %x4 [[0], [1, 2], [3], [4]] output_shape [1, 1, 8, 5, 5] : tensor<1x8x5x5xi8> into tensor<1x1x8x5x5xi8>
  %e = tensor.empty() : tensor<1x1x8x5x5xi32>
  %init = linalg.fill ins(%c0 : i32) outs(%e : tensor<1x1x8x5x5xi32>) -> tensor<1x1x8x5x5xi32>
  %y = linalg.generic {indexing_maps = [#x, #w, #s, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w, %zx : tensor<1x1x8x5x5xi8>, tensor<1x8x8x1x1xi8>, tensor<i8>) outs(%init : tensor<1x1x8x5x5xi32>) {
  ^bb0(%a: i8, %b: i8, %z: i8, %acc: i32):
    %0 = arith.extui %a : i8 to i32
    %1 = arith.extui %z : i8 to i32
    %2 = arith.subi %0, %1 : i32
    %3 = arith.extsi %b : i8 to i32
    %4 = arith.muli %2, %3 : i32
    %5 = arith.addi %acc, %4 : i32
    linalg.yield %5 : i32
  } -> tensor<1x1x8x5x5xi32>
  %c = tensor.collapse_shape %y [[0], [1, 2], [3], [4]] : tensor<1x1x8x5x5xi32> into tensor<1x8x5x5xi32>
  return %c : tensor<1x8x5x5xi32>
}
// -----

// A 3x3 convolution whose output rows (16 pixels) fill vectors: along
// pixels, NCHW out, the filter (F, C/4, KH, KW, 4) broadcast. Signed input
// bytes get their sign bit flipped (+128), so the zero point -2 becomes
// 126: the correction is -126 * 36 = -4536 (all 36 taps are 1).
// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d4, d2 + d5, d3 + d6, d7)>
// CHECK-DAG: #[[W:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d4, d5, d6, d7)>
// CHECK-DAG: #[[O:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @pixels_signed
// CHECK: %[[WP:.*]] = arith.constant dense<1> : tensor<2x1x3x3x4xi8>
// CHECK: %[[XP:.*]] = linalg.generic {{.*}} ins(%arg0 : tensor<1x4x18x18xi8>) outs({{.*}} : tensor<1x1x18x18x4xi8>) attrs =  {dlc.materialize}
// CHECK: %[[FLIP:.*]] = arith.constant -128 : i8
// CHECK: arith.xori %{{.*}}, %[[FLIP]] : i8
// CHECK: %[[ACC:.*]] = linalg.generic {indexing_maps = [#[[X]], #[[W]], #[[O]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]} ins(%[[XP]], %[[WP]] : {{.*}}) outs({{.*}} : tensor<1x2x16x16xi32>)
// CHECK: arith.constant dense<-4536> : tensor<2xi32>
// CHECK: return {{.*}} : tensor<1x2x16x16xi32>
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d5, d3 + d6, d4 + d7)>
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d2, d5, d6, d7)>
#s = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> ()>
#o = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>
func.func @pixels_signed(%x4: tensor<1x4x18x18xi8>) -> tensor<1x2x16x16xi32> {
  %w = arith.constant dense<1> : tensor<1x2x4x3x3xi8>
  %zx = arith.constant dense<-2> : tensor<i8>
  %c0 = arith.constant 0 : i32
  %x = tensor.expand_shape %x4 [[0], [1, 2], [3], [4]] output_shape [1, 1, 4, 18, 18] : tensor<1x4x18x18xi8> into tensor<1x1x4x18x18xi8>
  %e = tensor.empty() : tensor<1x1x2x16x16xi32>
  %init = linalg.fill ins(%c0 : i32) outs(%e : tensor<1x1x2x16x16xi32>) -> tensor<1x1x2x16x16xi32>
  %y = linalg.generic {indexing_maps = [#x, #w, #s, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w, %zx : tensor<1x1x4x18x18xi8>, tensor<1x2x4x3x3xi8>, tensor<i8>) outs(%init : tensor<1x1x2x16x16xi32>) {
  ^bb0(%a: i8, %b: i8, %z: i8, %acc: i32):
    %0 = arith.extsi %a : i8 to i32
    %1 = arith.extsi %z : i8 to i32
    %2 = arith.subi %0, %1 : i32
    %3 = arith.extsi %b : i8 to i32
    %4 = arith.muli %2, %3 : i32
    %5 = arith.addi %acc, %4 : i32
    linalg.yield %5 : i32
  } -> tensor<1x1x2x16x16xi32>
  %c = tensor.collapse_shape %y [[0], [1, 2], [3], [4]] : tensor<1x1x2x16x16xi32> into tensor<1x2x16x16xi32>
  return %c : tensor<1x2x16x16xi32>
}

// -----

// Along channels (two vectors of 4 output channels), the stride-2 window
// keeps its stride. Unsigned filter
// bytes with zero point 128 are centred: 130 - 128 = 2 per tap, 4 taps,
// no input zero point: no correction. Without the reshape to (N, M, OH,
// OW), the result keeps the group dim.
// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d5, d1 * 2 + d6, d2 * 2 + d7, d8)>
// CHECK-DAG: #[[BACK:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d4, d2 floordiv 8, d2 mod 8)>
// CHECK-DAG: #[[CH:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1 * 8 + d2)>
// CHECK-LABEL: func.func @strided_channels
// CHECK: arith.constant dense<2> : tensor<1x1x1x1x8x4xi8>
// CHECK: linalg.generic {indexing_maps = [#[[X]],
// CHECK-SAME: outs({{.*}} : tensor<1x3x3x1x8xi32>)
// CHECK: arith.constant dense<0> : tensor<8xi32>
// CHECK: linalg.generic {indexing_maps = [#[[BACK]], #[[CH]], {{.*}}]
// CHECK: return {{.*}} : tensor<1x1x8x3x3xi32>
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d5, d3 * 2 + d6, d4 * 2 + d7)>
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d2, d5, d6, d7)>
#s = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> ()>
#o = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>
func.func @strided_channels(%x: tensor<1x1x4x7x7xi8>) -> tensor<1x1x8x3x3xi32> {
  %w = arith.constant dense<-126> : tensor<1x8x4x1x1xi8>
  %zw = arith.constant dense<-128> : tensor<i8>
  %c0 = arith.constant 0 : i32
  %e = tensor.empty() : tensor<1x1x8x3x3xi32>
  %init = linalg.fill ins(%c0 : i32) outs(%e : tensor<1x1x8x3x3xi32>) -> tensor<1x1x8x3x3xi32>
  %y = linalg.generic {indexing_maps = [#x, #w, #s, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w, %zw : tensor<1x1x4x7x7xi8>, tensor<1x8x4x1x1xi8>, tensor<i8>) outs(%init : tensor<1x1x8x3x3xi32>) {
  ^bb0(%a: i8, %b: i8, %z: i8, %acc: i32):
    %0 = arith.extui %a : i8 to i32
    %1 = arith.extui %b : i8 to i32
    %2 = arith.extui %z : i8 to i32
    %3 = arith.subi %1, %2 : i32
    %4 = arith.muli %0, %3 : i32
    %5 = arith.addi %acc, %4 : i32
    linalg.yield %5 : i32
  } -> tensor<1x1x8x3x3xi32>
  return %y : tensor<1x1x8x3x3xi32>
}

// -----

// A depthwise convolution keeps its layout, with and without dot products:
// the body loses the zero points (input 5, filter per channel [1, 2]; the
// filter 3 becomes [2, 1]), the unit loops go (filter (G, KH, KW)), and
// the correction -5 * 9 * w' is added per channel.
// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 + d4, d3 + d5)>
// CHECK-DAG: #[[W:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d1, d4, d5)>
// CHECK-LABEL: func.func @depthwise
// CHECK: %[[WC:.*]] = arith.constant dense<{{\[\[\[}}2, 2, 2], [2, 2, 2], [2, 2, 2]], {{\[\[}}1, 1, 1], [1, 1, 1], [1, 1, 1]]]> : tensor<2x3x3xi8>
// CHECK: %[[ACC:.*]] = linalg.generic {indexing_maps = [#[[X]], #[[W]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%arg0, %[[WC]] : tensor<1x2x6x6xi8>, tensor<2x3x3xi8>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: i8, %[[B:.*]]: i8, %[[O:.*]]: i32):
// CHECK-NEXT: %[[XA:.*]] = arith.extui %[[A]] : i8 to i32
// CHECK-NEXT: %[[WB:.*]] = arith.extsi %[[B]] : i8 to i32
// CHECK-NEXT: %[[P:.*]] = arith.muli %[[XA]], %[[WB]] : i32
// CHECK-NEXT: %[[S:.*]] = arith.addi %[[O]], %[[P]] : i32
// CHECK-NEXT: linalg.yield %[[S]] : i32
// CHECK: arith.constant dense<[-90, -45]> : tensor<2xi32>
// CHECK: return {{.*}} : tensor<1x2x4x4xi32>
// NODOT-LABEL: func.func @depthwise
// NODOT: arith.constant dense<[-90, -45]> : tensor<2xi32>
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d5, d3 + d6, d4 + d7)>
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d2, d5, d6, d7)>
#s = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> ()>
#c = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d2)>
#o = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>
func.func @depthwise(%x4: tensor<1x2x6x6xi8>) -> tensor<1x2x4x4xi32> {
  %w = arith.constant dense<3> : tensor<2x1x1x3x3xi8>
  %zx = arith.constant dense<5> : tensor<i8>
  %zw = arith.constant dense<[[1], [2]]> : tensor<2x1xi8>
  %c0 = arith.constant 0 : i32
  %x = tensor.expand_shape %x4 [[0], [1, 2], [3], [4]] output_shape [1, 2, 1, 6, 6] : tensor<1x2x6x6xi8> into tensor<1x2x1x6x6xi8>
  %e = tensor.empty() : tensor<1x2x1x4x4xi32>
  %init = linalg.fill ins(%c0 : i32) outs(%e : tensor<1x2x1x4x4xi32>) -> tensor<1x2x1x4x4xi32>
  %y = linalg.generic {indexing_maps = [#x, #w, #s, #c, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w, %zx, %zw : tensor<1x2x1x6x6xi8>, tensor<2x1x1x3x3xi8>, tensor<i8>, tensor<2x1xi8>) outs(%init : tensor<1x2x1x4x4xi32>) {
  ^bb0(%a: i8, %b: i8, %z: i8, %zb: i8, %acc: i32):
    %0 = arith.extui %a : i8 to i32
    %1 = arith.extui %z : i8 to i32
    %2 = arith.subi %0, %1 : i32
    %3 = arith.extsi %b : i8 to i32
    %4 = arith.extsi %zb : i8 to i32
    %5 = arith.subi %3, %4 : i32
    %6 = arith.muli %2, %5 : i32
    %7 = arith.addi %acc, %6 : i32
    linalg.yield %7 : i32
  } -> tensor<1x2x1x4x4xi32>
  %c = tensor.collapse_shape %y [[0], [1, 2], [3], [4]] : tensor<1x2x1x4x4xi32> into tensor<1x2x4x4xi32>
  return %c : tensor<1x2x4x4xi32>
}

// -----

// Two groups of 16 channels: neither one group nor depthwise. Without dot
// products (and, having groups, with them too) the grouped loops and the
// reshape after them stay; the zero point still leaves the body.
// CHECK-LABEL: func.func @grouped
// CHECK: linalg.generic {{.*}} ins(%arg0, %{{.*}} : tensor<1x2x2x3x3xi8>, tensor<2x2x2x1x1xi8>) outs(%{{.*}} : tensor<1x2x2x3x3xi32>)
// CHECK-NOT: arith.subi
// CHECK: arith.constant dense<-12> : tensor<4xi32>
// CHECK: tensor.collapse_shape
// NODOT-LABEL: func.func @grouped
// NODOT: tensor.collapse_shape
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d5, d3 + d6, d4 + d7)>
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d2, d5, d6, d7)>
#s = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> ()>
#o = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>
func.func @grouped(%x: tensor<1x2x2x3x3xi8>) -> tensor<1x4x3x3xi32> {
  %w = arith.constant dense<3> : tensor<2x2x2x1x1xi8>
  %zx = arith.constant dense<2> : tensor<i8>
  %c0 = arith.constant 0 : i32
  %e = tensor.empty() : tensor<1x2x2x3x3xi32>
  %init = linalg.fill ins(%c0 : i32) outs(%e : tensor<1x2x2x3x3xi32>) -> tensor<1x2x2x3x3xi32>
  %y = linalg.generic {indexing_maps = [#x, #w, #s, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w, %zx : tensor<1x2x2x3x3xi8>, tensor<2x2x2x1x1xi8>, tensor<i8>) outs(%init : tensor<1x2x2x3x3xi32>) {
  ^bb0(%a: i8, %b: i8, %z: i8, %acc: i32):
    %0 = arith.extui %a : i8 to i32
    %1 = arith.extui %z : i8 to i32
    %2 = arith.subi %0, %1 : i32
    %3 = arith.extsi %b : i8 to i32
    %4 = arith.muli %2, %3 : i32
    %5 = arith.addi %acc, %4 : i32
    linalg.yield %5 : i32
  } -> tensor<1x2x2x3x3xi32>
  %c = tensor.collapse_shape %y [[0], [1, 2], [3], [4]] : tensor<1x2x2x3x3xi32> into tensor<1x4x3x3xi32>
  return %c : tensor<1x4x3x3xi32>
}

// -----

// Unsigned filter bytes 200 with zero point 0 do not fit in a signed byte:
// each output channel's filter is centred by an offset (200 = 127 + 73),
// and the offset times the input's window sums (a convolution with a
// filter of ones, along pixels) joins the correction, which is
// -3 * (4 * 127 + 4 * 73) = -2400 for the zero point. Without dot products
// (no window sums) the convolution stays as it is.
// CHECK-DAG: #[[SUMS:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, 0, d3, d4)>
// CHECK-LABEL: func.func @out_of_range
// CHECK: %[[WP:.*]] = arith.constant dense<127> : tensor<1x1x1x1x8x4xi8>
// CHECK: %[[XP:.*]] = linalg.generic {{.*}} attrs =  {dlc.materialize}
// CHECK: %[[ACC:.*]] = linalg.generic {{.*}} ins(%[[XP]], %[[WP]] : tensor<1x1x3x3x4xi8>, tensor<1x1x1x1x8x4xi8>) outs({{.*}} : tensor<1x3x3x1x8xi32>)
// CHECK: %[[ONES:.*]] = arith.constant dense<1> : tensor<1x1x1x1x4xi8>
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[XP]], %[[ONES]] : tensor<1x1x3x3x4xi8>, tensor<1x1x1x1x4xi8>) outs({{.*}} : tensor<1x1x3x3xi32>)
// CHECK: %[[CORR:.*]] = arith.constant dense<-2400> : tensor<8xi32>
// CHECK: %[[OFF:.*]] = arith.constant dense<73> : tensor<8xi32>
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #[[SUMS]], #{{.*}}, #{{.*}}]{{.*}} ins(%[[ACC]], %[[CORR]], %[[SUM]], %[[OFF]] : {{.*}})
// CHECK-NEXT: ^bb0(%[[A:.*]]: i32, %[[C:.*]]: i32, %[[S:.*]]: i32, %[[O:.*]]: i32, %{{.*}}: i32):
// CHECK-NEXT: %[[T0:.*]] = arith.addi %[[A]], %[[C]] : i32
// CHECK-NEXT: %[[T1:.*]] = arith.muli %[[S]], %[[O]] : i32
// CHECK-NEXT: arith.addi %[[T0]], %[[T1]] : i32
// NODOT-LABEL: func.func @out_of_range
// NODOT-NOT: dlc.materialize
// NODOT: arith.subi
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d5, d3 + d6, d4 + d7)>
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d2, d5, d6, d7)>
#s = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> ()>
#o = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>
func.func @out_of_range(%x: tensor<1x1x4x3x3xi8>) -> tensor<1x1x8x3x3xi32> {
  %w = arith.constant dense<-56> : tensor<1x8x4x1x1xi8>
  %zx = arith.constant dense<3> : tensor<i8>
  %c0 = arith.constant 0 : i32
  %e = tensor.empty() : tensor<1x1x8x3x3xi32>
  %init = linalg.fill ins(%c0 : i32) outs(%e : tensor<1x1x8x3x3xi32>) -> tensor<1x1x8x3x3xi32>
  %y = linalg.generic {indexing_maps = [#x, #w, #s, #o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %w, %zx : tensor<1x1x4x3x3xi8>, tensor<1x8x4x1x1xi8>, tensor<i8>) outs(%init : tensor<1x1x8x3x3xi32>) {
  ^bb0(%a: i8, %b: i8, %z: i8, %acc: i32):
    %0 = arith.extui %a : i8 to i32
    %1 = arith.extui %z : i8 to i32
    %2 = arith.subi %0, %1 : i32
    %3 = arith.extui %b : i8 to i32
    %4 = arith.muli %2, %3 : i32
    %5 = arith.addi %acc, %4 : i32
    linalg.yield %5 : i32
  } -> tensor<1x1x8x3x3xi32>
  return %y : tensor<1x1x8x3x3xi32>
}

// -----

// A matrix product with a constant right operand (here the transpose of a
// (N, K) constant, as QGemm with transB writes it): a becomes (M, K/4, 4)
// by a reshape after padding K = 6 to 8, b is packed to (N/8, K/4, 8, 4),
// and the result is read back as (M, N) with the correction -2 * 6 (the
// input's zero point times each column's sum). Without dot products it is
// left alone.
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d4)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d3, d2, d4)>
// CHECK-DAG: #[[BACK:.*]] = affine_map<(d0, d1) -> (d0, d1 floordiv 8, d1 mod 8)>
// CHECK-LABEL: func.func @matmul
// CHECK: %[[BP:.*]] = arith.constant dense<{{\[\[\[\[}}1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1]], {{\[}}[1, 1, 0, 0]
// CHECK-SAME: tensor<1x2x8x4xi8>
// CHECK: %[[PAD:.*]] = tensor.pad %arg0 low[0, 0] high[0, 2]
// CHECK: %[[AP:.*]] = tensor.expand_shape %[[PAD]] {{\[\[}}0], [1, 2]] {{.*}} : tensor<2x8xi8> into tensor<2x2x4xi8>
// CHECK: %[[ACC:.*]] = linalg.generic {indexing_maps = [#[[A]], #[[B]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%[[AP]], %[[BP]] : tensor<2x2x4xi8>, tensor<1x2x8x4xi8>) outs({{.*}} : tensor<2x1x8xi32>)
// CHECK: %[[CORR:.*]] = arith.constant dense<-12> : tensor<8xi32>
// CHECK: linalg.generic {indexing_maps = [#[[BACK]], {{.*}}]{{.*}} ins(%[[ACC]], %[[CORR]] : tensor<2x1x8xi32>, tensor<8xi32>)
// CHECK-NOT: linalg.transpose
// NODOT-LABEL: func.func @matmul
// NODOT: linalg.transpose
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#s = affine_map<(d0, d1, d2) -> ()>
#o = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @matmul(%a: tensor<2x6xi8>) -> tensor<2x8xi32> {
  %w = arith.constant dense<1> : tensor<8x6xi8>
  %za = arith.constant dense<2> : tensor<i8>
  %c0 = arith.constant 0 : i32
  %et = tensor.empty() : tensor<6x8xi8>
  %wt = linalg.transpose ins(%w : tensor<8x6xi8>) outs(%et : tensor<6x8xi8>) permutation = [1, 0]
  %e = tensor.empty() : tensor<2x8xi32>
  %init = linalg.fill ins(%c0 : i32) outs(%e : tensor<2x8xi32>) -> tensor<2x8xi32>
  %y = linalg.generic {indexing_maps = [#a, #b, #s, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %wt, %za : tensor<2x6xi8>, tensor<6x8xi8>, tensor<i8>) outs(%init : tensor<2x8xi32>) {
  ^bb0(%x: i8, %v: i8, %z: i8, %acc: i32):
    %0 = arith.extui %x : i8 to i32
    %1 = arith.extui %z : i8 to i32
    %2 = arith.subi %0, %1 : i32
    %3 = arith.extsi %v : i8 to i32
    %4 = arith.muli %2, %3 : i32
    %5 = arith.addi %acc, %4 : i32
    linalg.yield %5 : i32
  } -> tensor<2x8xi32>
  return %y : tensor<2x8xi32>
}

// -----

// N = 5 columns end in a partial block of 4 lanes: packed, the result would
// be read as (n floordiv 4, n mod 4), which workgroup tiling slices wrongly
// for a range of columns that ends inside a block (the lanes past the
// remainder would be lost in every other block). The product stays as it
// is, with dot products or without.
// CHECK-LABEL: func.func @matmul_partial_block
// CHECK-NOT: floordiv
// CHECK: linalg.transpose
// CHECK: linalg.generic {{.*}} ins(%arg0, %{{.*}} : tensor<2x6xi8>, tensor<6x5xi8>, tensor<i8>) outs(%{{.*}} : tensor<2x5xi32>)
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#s = affine_map<(d0, d1, d2) -> ()>
#o = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @matmul_partial_block(%a: tensor<2x6xi8>) -> tensor<2x5xi32> {
  %w = arith.constant dense<1> : tensor<5x6xi8>
  %za = arith.constant dense<2> : tensor<i8>
  %c0 = arith.constant 0 : i32
  %et = tensor.empty() : tensor<6x5xi8>
  %wt = linalg.transpose ins(%w : tensor<5x6xi8>) outs(%et : tensor<6x5xi8>) permutation = [1, 0]
  %e = tensor.empty() : tensor<2x5xi32>
  %init = linalg.fill ins(%c0 : i32) outs(%e : tensor<2x5xi32>) -> tensor<2x5xi32>
  %y = linalg.generic {indexing_maps = [#a, #b, #s, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %wt, %za : tensor<2x6xi8>, tensor<6x5xi8>, tensor<i8>) outs(%init : tensor<2x5xi32>) {
  ^bb0(%x: i8, %v: i8, %z: i8, %acc: i32):
    %0 = arith.extui %x : i8 to i32
    %1 = arith.extui %z : i8 to i32
    %2 = arith.subi %0, %1 : i32
    %3 = arith.extsi %v : i8 to i32
    %4 = arith.muli %2, %3 : i32
    %5 = arith.addi %acc, %4 : i32
    linalg.yield %5 : i32
  } -> tensor<2x5xi32>
  return %y : tensor<2x5xi32>
}

// -----

// One row (a classifier on one image): nothing but the column loop could
// split it into workgroups, and dlc-tile-and-distribute does not split that
// into partial blocks, so the product is packed for dot products all the
// same (N = 5 padded to 8).
// CHECK-DAG: #[[BACK:.*]] = affine_map<(d0, d1) -> (d0, d1 floordiv 8, d1 mod 8)>
// CHECK-LABEL: func.func @gemv_partial_block
// CHECK: linalg.generic {{.*}} outs({{.*}} : tensor<1x1x8xi32>)
// CHECK: linalg.generic {indexing_maps = [#[[BACK]]
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#s = affine_map<(d0, d1, d2) -> ()>
#o = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @gemv_partial_block(%a: tensor<1x6xi8>) -> tensor<1x5xi32> {
  %w = arith.constant dense<1> : tensor<5x6xi8>
  %za = arith.constant dense<2> : tensor<i8>
  %c0 = arith.constant 0 : i32
  %et = tensor.empty() : tensor<6x5xi8>
  %wt = linalg.transpose ins(%w : tensor<5x6xi8>) outs(%et : tensor<6x5xi8>) permutation = [1, 0]
  %e = tensor.empty() : tensor<1x5xi32>
  %init = linalg.fill ins(%c0 : i32) outs(%e : tensor<1x5xi32>) -> tensor<1x5xi32>
  %y = linalg.generic {indexing_maps = [#a, #b, #s, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %wt, %za : tensor<1x6xi8>, tensor<6x5xi8>, tensor<i8>) outs(%init : tensor<1x5xi32>) {
  ^bb0(%x: i8, %v: i8, %z: i8, %acc: i32):
    %0 = arith.extui %x : i8 to i32
    %1 = arith.extui %z : i8 to i32
    %2 = arith.subi %0, %1 : i32
    %3 = arith.extsi %v : i8 to i32
    %4 = arith.muli %2, %3 : i32
    %5 = arith.addi %acc, %4 : i32
    linalg.yield %5 : i32
  } -> tensor<1x5xi32>
  return %y : tensor<1x5xi32>
}

// -----

// A zero point computed at run time (DynamicQuantizeLinear's, an argument
// here) and unsigned filter bytes far from their zero point 116 (the
// columns span -116..139, beyond a signed byte): the zero point leaves the
// reduction as a run-time term, -ext(z) * (sum(b') + K * offset) per
// column, and the columns centred by offset 12 add 12 times a's row sums
// (a product with ones). Columns: b = 0 and 255 alternating, sum 6 * 255 /
// 2 - 6 * 116 = 69 and b' = b - 116 - 12 for K = 6 rows, so
// sum(b') + 6 * 12 = 69 - 72 + 72 = 69.
// CHECK-LABEL: func.func @runtime_zero_point
// CHECK-SAME: (%[[AIN:.*]]: tensor<3x6xi8>, %[[Z:.*]]: tensor<i8>)
// CHECK: %[[BP:.*]] = arith.constant dense<{{.*}}> : tensor<1x2x8x4xi8>
// CHECK: %[[AP:.*]] = tensor.expand_shape
// CHECK: %[[ACC:.*]] = linalg.generic {{.*}} ins(%[[AP]], %[[BP]] : tensor<3x2x4xi8>, tensor<1x2x8x4xi8>) outs({{.*}} : tensor<3x1x8xi32>)
// CHECK: %[[ONES:.*]] = arith.constant dense<{{\[}}[1, 1, 1, 1], [1, 1, 0, 0]]> : tensor<2x4xi8>
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[AP]], %[[ONES]] : tensor<3x2x4xi8>, tensor<2x4xi8>) outs({{.*}} : tensor<3xi32>)
// CHECK: %[[CORR:.*]] = arith.constant dense<0> : tensor<8xi32>
// CHECK: %[[TIMES:.*]] = arith.constant dense<69> : tensor<8xi32>
// CHECK: %[[OFF:.*]] = arith.constant dense<12> : tensor<8xi32>
// CHECK: linalg.generic {{.*}} ins(%[[ACC]], %[[CORR]], %[[Z]], %[[TIMES]], %[[SUM]], %[[OFF]] : tensor<3x1x8xi32>, tensor<8xi32>, tensor<i8>, tensor<8xi32>, tensor<3xi32>, tensor<8xi32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: i32, %[[C:.*]]: i32, %[[ZV:.*]]: i8, %[[T:.*]]: i32, %[[S:.*]]: i32, %[[O:.*]]: i32, %{{.*}}: i32):
// CHECK-NEXT: %[[V0:.*]] = arith.addi %[[A]], %[[C]] : i32
// CHECK-NEXT: %[[ZE:.*]] = arith.extui %[[ZV]] : i8 to i32
// CHECK-NEXT: %[[ZT:.*]] = arith.muli %[[ZE]], %[[T]] : i32
// CHECK-NEXT: %[[V1:.*]] = arith.subi %[[V0]], %[[ZT]] : i32
// CHECK-NEXT: %[[SO:.*]] = arith.muli %[[S]], %[[O]] : i32
// CHECK-NEXT: arith.addi %[[V1]], %[[SO]] : i32
// NODOT-LABEL: func.func @runtime_zero_point
// NODOT: linalg.transpose
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#s = affine_map<(d0, d1, d2) -> ()>
#o = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @runtime_zero_point(%a: tensor<3x6xi8>, %za: tensor<i8>) -> tensor<3x8xi32> {
  %w = arith.constant dense<[[0, -1, 0, -1, 0, -1], [0, -1, 0, -1, 0, -1], [0, -1, 0, -1, 0, -1], [0, -1, 0, -1, 0, -1], [0, -1, 0, -1, 0, -1], [0, -1, 0, -1, 0, -1], [0, -1, 0, -1, 0, -1], [0, -1, 0, -1, 0, -1]]> : tensor<8x6xi8>
  %zb = arith.constant dense<116> : tensor<i8>
  %c0 = arith.constant 0 : i32
  %et = tensor.empty() : tensor<6x8xi8>
  %wt = linalg.transpose ins(%w : tensor<8x6xi8>) outs(%et : tensor<6x8xi8>) permutation = [1, 0]
  %e = tensor.empty() : tensor<3x8xi32>
  %init = linalg.fill ins(%c0 : i32) outs(%e : tensor<3x8xi32>) -> tensor<3x8xi32>
  %y = linalg.generic {indexing_maps = [#a, #b, #s, #s, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %wt, %za, %zb : tensor<3x6xi8>, tensor<6x8xi8>, tensor<i8>, tensor<i8>) outs(%init : tensor<3x8xi32>) {
  ^bb0(%x: i8, %v: i8, %z: i8, %zv: i8, %acc: i32):
    %0 = arith.extui %x : i8 to i32
    %1 = arith.extui %z : i8 to i32
    %2 = arith.subi %0, %1 : i32
    %3 = arith.extui %v : i8 to i32
    %4 = arith.extui %zv : i8 to i32
    %5 = arith.subi %3, %4 : i32
    %6 = arith.muli %2, %5 : i32
    %7 = arith.addi %acc, %6 : i32
    linalg.yield %7 : i32
  } -> tensor<3x8xi32>
  return %y : tensor<3x8xi32>
}

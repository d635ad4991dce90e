// RUN: dlc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dlc-conv-channels-last{lanes=16}))' | FileCheck %s

// A 1x1 convolution on a 7x7 image: 49 pixels fill 49 of 64 lanes, 32
// output channels fill both of their vectors. The filter is transposed at
// compile time into blocks of 32 channels, (F/32, C, KH, KW, 32): here
// w[o][i] = 2 * o + i becomes [i][o]. The convolution writes (N, OH, OW,
// F/32, 32); an elementwise generic reads it back as NCHW.
// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d5, d1 + d6, d2 + d7)>
// CHECK-DAG: #[[W:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d3, d5, d6, d7, d4)>
// CHECK-DAG: #[[O:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>
// CHECK-DAG: #[[BACK:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3, d1 floordiv 32, d1 mod 32)>
// CHECK-LABEL: func.func @pointwise_7x7
// CHECK: %[[PACKED:.*]] = arith.constant dense<{{\[\[\[\[\[}}0.000000e+00, 2.000000e+00, 4.000000e+00,
// CHECK-SAME: 6.200000e+01{{\]\]\]}}, {{\[\[\[}}1.000000e+00, 3.000000e+00,
// CHECK-SAME: tensor<1x2x1x1x32xf32>
// CHECK: %[[INIT:.*]] = linalg.fill {{.*}} -> tensor<1x7x7x1x32xf32>
// CHECK: %[[NHWC:.*]] = linalg.generic {indexing_maps = [#[[X]], #[[W]], #[[O]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
// CHECK-SAME: ins(%{{.*}}, %[[PACKED]] : tensor<1x2x7x7xf32>, tensor<1x2x1x1x32xf32>) outs(%[[INIT]]
// CHECK:   arith.mulf
// CHECK:   arith.addf
// CHECK: %[[NCHW:.*]] = linalg.generic {indexing_maps = [#[[BACK]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[NHWC]] : tensor<1x7x7x1x32xf32>)
// CHECK: return %[[NCHW]] : tensor<1x32x7x7xf32>
func.func @pointwise_7x7(%x: tensor<1x2x7x7xf32>) -> tensor<1x32x7x7xf32> {
  %w = arith.constant dense<[[[[0.0]], [[1.0]]], [[[2.0]], [[3.0]]], [[[4.0]], [[5.0]]], [[[6.0]], [[7.0]]],
      [[[8.0]], [[9.0]]], [[[10.0]], [[11.0]]], [[[12.0]], [[13.0]]], [[[14.0]], [[15.0]]],
      [[[16.0]], [[17.0]]], [[[18.0]], [[19.0]]], [[[20.0]], [[21.0]]], [[[22.0]], [[23.0]]],
      [[[24.0]], [[25.0]]], [[[26.0]], [[27.0]]], [[[28.0]], [[29.0]]], [[[30.0]], [[31.0]]],
      [[[32.0]], [[33.0]]], [[[34.0]], [[35.0]]], [[[36.0]], [[37.0]]], [[[38.0]], [[39.0]]],
      [[[40.0]], [[41.0]]], [[[42.0]], [[43.0]]], [[[44.0]], [[45.0]]], [[[46.0]], [[47.0]]],
      [[[48.0]], [[49.0]]], [[[50.0]], [[51.0]]], [[[52.0]], [[53.0]]], [[[54.0]], [[55.0]]],
      [[[56.0]], [[57.0]]], [[[58.0]], [[59.0]]], [[[60.0]], [[61.0]]], [[[62.0]], [[63.0]]]]> : tensor<32x2x1x1xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x32x7x7xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x32x7x7xf32>) -> tensor<1x32x7x7xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x2x7x7xf32>, tensor<32x2x1x1xf32>) outs(%init : tensor<1x32x7x7xf32>) -> tensor<1x32x7x7xf32>
  return %y : tensor<1x32x7x7xf32>
}

// -----

// A strided, dilated 3x3 convolution with a 7-pixel output row: strides
// and dilations move into the input's map.
// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d5, d1 * 2 + d6 * 2, d2 * 2 + d7 * 2)>
// CHECK-LABEL: func.func @strided_dilated
// CHECK: linalg.generic {indexing_maps = [#[[X]],
// CHECK-SAME: tensor<2x3x3x3x32xf32>
// CHECK-NOT: linalg.conv_2d_nchw_fchw
func.func @strided_dilated(%x: tensor<1x3x17x17xf32>) -> tensor<1x64x7x7xf32> {
  %w = arith.constant dense<1.0> : tensor<64x3x3x3xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x64x7x7xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x64x7x7xf32>) -> tensor<1x64x7x7xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<2> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %w : tensor<1x3x17x17xf32>, tensor<64x3x3x3xf32>) outs(%init : tensor<1x64x7x7xf32>) -> tensor<1x64x7x7xf32>
  return %y : tensor<1x64x7x7xf32>
}

// -----

// Left alone: a 56-pixel row fills its vectors well; output channels that
// are not a multiple of 16 (24); a filter computed at run time; and an
// accumulator that is not a fill.
// CHECK-LABEL: func.func @wide
// CHECK: linalg.conv_2d_nchw_fchw
// CHECK-LABEL: func.func @odd_channels
// CHECK: linalg.conv_2d_nchw_fchw
// CHECK-LABEL: func.func @runtime_filter
// CHECK: linalg.conv_2d_nchw_fchw
// CHECK-LABEL: func.func @accumulate
// CHECK: linalg.conv_2d_nchw_fchw
func.func @wide(%x: tensor<1x4x58x58xf32>) -> tensor<1x64x56x56xf32> {
  %w = arith.constant dense<1.0> : tensor<64x4x3x3xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x64x56x56xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x4x58x58xf32>, tensor<64x4x3x3xf32>) outs(%init : tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
  return %y : tensor<1x64x56x56xf32>
}
func.func @odd_channels(%x: tensor<1x4x9x9xf32>) -> tensor<1x24x7x7xf32> {
  %w = arith.constant dense<1.0> : tensor<24x4x3x3xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x24x7x7xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x24x7x7xf32>) -> tensor<1x24x7x7xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x4x9x9xf32>, tensor<24x4x3x3xf32>) outs(%init : tensor<1x24x7x7xf32>) -> tensor<1x24x7x7xf32>
  return %y : tensor<1x24x7x7xf32>
}
func.func @runtime_filter(%x: tensor<1x4x9x9xf32>, %w: tensor<64x4x3x3xf32>) -> tensor<1x64x7x7xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x64x7x7xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x64x7x7xf32>) -> tensor<1x64x7x7xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x4x9x9xf32>, tensor<64x4x3x3xf32>) outs(%init : tensor<1x64x7x7xf32>) -> tensor<1x64x7x7xf32>
  return %y : tensor<1x64x7x7xf32>
}
func.func @accumulate(%x: tensor<1x4x9x9xf32>, %init: tensor<1x64x7x7xf32>) -> tensor<1x64x7x7xf32> {
  %w = arith.constant dense<1.0> : tensor<64x4x3x3xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x4x9x9xf32>, tensor<64x4x3x3xf32>) outs(%init : tensor<1x64x7x7xf32>) -> tensor<1x64x7x7xf32>
  return %y : tensor<1x64x7x7xf32>
}

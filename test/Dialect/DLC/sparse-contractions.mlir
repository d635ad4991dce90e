// RUN: dlc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dlc-sparse-contractions{force=true columns=4}))' | FileCheck %s
// RUN: dlc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dlc-sparse-contractions{step-cost=1.0 max-ratio=0.5}))' | FileCheck %s --check-prefix=AUTO
// RUN: dlc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dlc-sparse-contractions{step-cost=1.0 output-cost=64 max-ratio=0.5}))' | FileCheck %s --check-prefix=MEMORY
// RUN: dlc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dlc-sparse-contractions{step-cost=1.0 max-ratio=0.5 columns=4}))' | FileCheck %s --check-prefix=LANES4
// RUN: not dlc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dlc-sparse-contractions{rows=0}))' 2>&1 | FileCheck %s --check-prefix=ROWS
// ROWS: error: dlc-sparse-contractions: rows and columns must be >= 1

// Eight filters over four input channels, two groups of four rows: the
// first group has nonzeros in channels 1 and 3 only, the second in channel
// 0 only. Each row lists its group's channels after their count, padded to
// the longest list (two) with channel 0; the compressed filter holds each
// row's weights at those channels (zero in the padding). Pixels are
// collapsed; x is read at the listed channel. Kept pairs: 3 of 8, so the
// model predicts 0.375 without memory traffic (under 0.5: sparse) and more
// with it (dense).
// CHECK-LABEL: func.func @pointwise
// CHECK-DAG: %[[T:.*]] = arith.constant dense<{{\[}}[2, 1, 3], [2, 1, 3], [2, 1, 3], [2, 1, 3], [1, 0, 0], [1, 0, 0], [1, 0, 0], [1, 0, 0]]> : tensor<8x3xi32>
// CHECK-DAG: %[[W:.*]] = arith.constant dense<{{\[}}[1.000000e+00, 2.000000e+00], [0.000000e+00, 3.000000e+00], [4.000000e+00, 0.000000e+00], [5.000000e+00, 6.000000e+00], [7.000000e+00, 0.000000e+00], [8.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00], [9.000000e+00, 0.000000e+00]]> : tensor<8x2xf32>
// CHECK-DAG: %[[X:.*]] = tensor.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : tensor<1x4x3x5xf32> into tensor<1x4x15xf32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<1x8x15xf32>
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<1x8x15xf32>)
// CHECK: %[[S:.*]] = linalg.generic {indexing_maps = [#[[MW:.*]], #[[MT:.*]], #[[MO:.*]]], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%[[W]], %[[T]] : tensor<8x2xf32>, tensor<8x3xi32>) outs(%[[F]] : tensor<1x8x15xf32>)
// CHECK-SAME: attrs = {dlc.sparse_pairs = array<i64: 3, 8>, dlc.sparse_rows = 4 : i64}
// CHECK:   %[[C:.*]] = arith.index_cast %{{.*}} : i32 to index
// CHECK:   %[[N:.*]] = linalg.index 0 : index
// CHECK:   %[[P:.*]] = linalg.index 3 : index
// CHECK:   tensor.extract %[[X]][%[[N]], %[[C]], %[[P]]] : tensor<1x4x15xf32>
// CHECK:   arith.mulf
// CHECK:   arith.addf
// CHECK: } -> tensor<1x8x15xf32>
// CHECK: %[[R:.*]] = tensor.expand_shape %[[S]] {{\[}}[0], [1], [2, 3]] output_shape [1, 8, 3, 5]
// CHECK: return %[[R]]
// AUTO-LABEL: func.func @pointwise
// AUTO: dlc.sparse_rows = 4
// MEMORY-LABEL: func.func @pointwise
// MEMORY: linalg.conv_2d_nchw_fchw
// MEMORY-NOT: dlc.sparse_rows
func.func @pointwise(%x: tensor<1x4x3x5xf32>) -> tensor<1x8x3x5xf32> {
  %w = arith.constant dense<[[[[0.0]], [[1.0]], [[0.0]], [[2.0]]],
                             [[[0.0]], [[0.0]], [[0.0]], [[3.0]]],
                             [[[0.0]], [[4.0]], [[0.0]], [[0.0]]],
                             [[[0.0]], [[5.0]], [[0.0]], [[6.0]]],
                             [[[7.0]], [[0.0]], [[0.0]], [[0.0]]],
                             [[[8.0]], [[0.0]], [[0.0]], [[0.0]]],
                             [[[0.0]], [[0.0]], [[0.0]], [[0.0]]],
                             [[[9.0]], [[0.0]], [[0.0]], [[0.0]]]]> : tensor<8x4x1x1xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x3x5xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x3x5xf32>) -> tensor<1x8x3x5xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x4x3x5xf32>, tensor<8x4x1x1xf32>) outs(%init : tensor<1x8x3x5xf32>) -> tensor<1x8x3x5xf32>
  return %y : tensor<1x8x3x5xf32>
}

// -----

// A dense filter drops no pair: unchanged even with force. So are a
// stride of 2 and output channels that are not whole groups. A 3x3 filter
// (one tap of one channel nonzero, the rest zero) becomes the window form:
// the one kept (channel 0, tap (1, 1)) is the offset 0 * 36 + 1 * 6 + 1 =
// 7 into x flattened per image, and the kernel reads x at 7 + y * 6 + x.
// CHECK-LABEL: func.func @not_sparse
// CHECK: linalg.conv_2d_nchw_fchw
// CHECK-DAG: %[[T:.*]] = arith.constant dense<{{\[}}[1, 7], [1, 7], [1, 7], [1, 7]]> : tensor<4x2xi32>
// CHECK-DAG: %[[X:.*]] = tensor.collapse_shape %arg0 {{\[}}[0], [1, 2, 3]] : tensor<1x4x6x6xf32> into tensor<1x144xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[T]] : tensor<4x1xf32>, tensor<4x2xi32>) outs(%{{.*}} : tensor<1x4x4x4xf32>)
// CHECK-SAME: dlc.sparse_pairs = array<i64: 1, 36>, dlc.sparse_rows = 4 : i64
// CHECK:   %[[E:.*]] = arith.index_cast %{{.*}} : i32 to index
// CHECK:   %[[N:.*]] = linalg.index 0 : index
// CHECK:   %[[Y:.*]] = linalg.index 3 : index
// CHECK:   %[[XI:.*]] = linalg.index 4 : index
// CHECK:   %[[R:.*]] = arith.muli %[[Y]], %c6{{.*}} : index
// CHECK:   %[[S:.*]] = arith.addi %[[E]], %[[R]] : index
// CHECK:   %[[A:.*]] = arith.addi %[[S]], %[[XI]] : index
// CHECK:   tensor.extract %[[X]][%[[N]], %[[A]]] : tensor<1x144xf32>
// CHECK-COUNT-2: linalg.conv_2d_nchw_fchw
// CHECK-NOT: dlc.sparse_rows
func.func @not_sparse(%x: tensor<1x4x6x6xf32>) -> (tensor<1x4x6x6xf32>, tensor<1x4x4x4xf32>, tensor<1x4x3x3xf32>, tensor<1x6x6x6xf32>) {
  %dense = arith.constant dense<1.0> : tensor<4x4x1x1xf32>
  %w3 = arith.constant dense<[[[[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]], [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]],
                              [[[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]],
                              [[[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]],
                              [[[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]]]> : tensor<4x4x3x3xf32>
  %sparse = arith.constant dense<[[[[1.0]], [[0.0]], [[0.0]], [[0.0]]], [[[0.0]], [[0.0]], [[0.0]], [[0.0]]], [[[0.0]], [[0.0]], [[0.0]], [[0.0]]], [[[0.0]], [[0.0]], [[0.0]], [[0.0]]]]> : tensor<4x4x1x1xf32>
  %six = arith.constant dense<[[[[1.0]], [[0.0]], [[0.0]], [[0.0]]], [[[0.0]], [[0.0]], [[0.0]], [[0.0]]], [[[0.0]], [[0.0]], [[0.0]], [[0.0]]], [[[0.0]], [[0.0]], [[0.0]], [[0.0]]], [[[0.0]], [[0.0]], [[0.0]], [[0.0]]], [[[0.0]], [[0.0]], [[0.0]], [[0.0]]]]> : tensor<6x4x1x1xf32>
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<1x4x6x6xf32>
  %i0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %y0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %dense : tensor<1x4x6x6xf32>, tensor<4x4x1x1xf32>) outs(%i0 : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %e1 = tensor.empty() : tensor<1x4x4x4xf32>
  %i1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %y1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w3 : tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>) outs(%i1 : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %e2 = tensor.empty() : tensor<1x4x3x3xf32>
  %i2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  %y2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %sparse : tensor<1x4x6x6xf32>, tensor<4x4x1x1xf32>) outs(%i2 : tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  %e3 = tensor.empty() : tensor<1x6x6x6xf32>
  %i3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<1x6x6x6xf32>) -> tensor<1x6x6x6xf32>
  %y3 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %six : tensor<1x4x6x6xf32>, tensor<6x4x1x1xf32>) outs(%i3 : tensor<1x6x6x6xf32>) -> tensor<1x6x6x6xf32>
  return %y0, %y1, %y2, %y3 : tensor<1x4x6x6xf32>, tensor<1x4x4x4xf32>, tensor<1x4x3x3xf32>, tensor<1x6x6x6xf32>
}

// -----

// An output that is not a fill (a residual accumulated into) is collapsed
// and accumulated into as it is.
// CHECK-LABEL: func.func @accumulate
// CHECK: %[[I:.*]] = tensor.collapse_shape %arg1 {{\[}}[0], [1], [2, 3]] : tensor<2x4x2x2xf32> into tensor<2x4x4xf32>
// CHECK: linalg.generic
// CHECK-SAME: outs(%[[I]] : tensor<2x4x4xf32>)
// CHECK: dlc.sparse_rows = 4
func.func @accumulate(%x: tensor<2x4x2x2xf32>, %acc: tensor<2x4x2x2xf32>) -> tensor<2x4x2x2xf32> {
  %w = arith.constant dense<[[[[1.0]], [[0.0]], [[0.0]], [[0.0]]], [[[0.0]], [[0.0]], [[0.0]], [[0.0]]], [[[0.0]], [[0.0]], [[0.0]], [[0.0]]], [[[0.0]], [[0.0]], [[0.0]], [[2.0]]]]> : tensor<4x4x1x1xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<2x4x2x2xf32>, tensor<4x4x1x1xf32>) outs(%acc : tensor<2x4x2x2xf32>) -> tensor<2x4x2x2xf32>
  return %y : tensor<2x4x2x2xf32>
}

// -----

// A matrix product x[3, 4] * w[4, 8] in groups of 4 columns: columns 0-3
// use reduction rows 1 and 3, columns 4-7 rows 0 and 3 (row 2 is zero).
// The output is seen as [3, 2 groups, 4 columns]; each group's weights at
// its kept rows are compressed to [2, 4] (contiguous), its table row holds
// the count and the rows; x is read at the row and the table entry.
// CHECK-LABEL: func.func @product
// CHECK-DAG: %[[W:.*]] = arith.constant dense<{{\[\[\[}}1.000000e+00, 0.000000e+00, 2.000000e+00, 0.000000e+00], [0.000000e+00, 3.000000e+00, 0.000000e+00, 4.000000e+00]], {{\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00], [0.000000e+00, 0.000000e+00, 0.000000e+00, 5.000000e+00]]]> : tensor<2x2x4xf32>
// CHECK-DAG: %[[T:.*]] = arith.constant dense<{{\[}}[2, 1, 3], [2, 0, 3]]> : tensor<2x3xi32>
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<3x2x4xf32>)
// CHECK: %[[S:.*]] = linalg.generic {indexing_maps = [#[[MW:.*]], #[[MT:.*]], #[[MO:.*]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[W]], %[[T]] : tensor<2x2x4xf32>, tensor<2x3xi32>) outs(%[[F]] : tensor<3x2x4xf32>)
// CHECK-SAME: attrs = {dlc.sparse_pairs = array<i64: 4, 8>, dlc.sparse_rows = 4 : i64}
// CHECK:   %[[K:.*]] = arith.index_cast %{{.*}} : i32 to index
// CHECK:   %[[M:.*]] = linalg.index 0 : index
// CHECK:   tensor.extract %arg0[%[[M]], %[[K]]] : tensor<3x4xf32>
// CHECK: %[[R:.*]] = tensor.collapse_shape %[[S]] {{\[}}[0], [1, 2]] : tensor<3x2x4xf32> into tensor<3x8xf32>
// CHECK: return %[[R]]
func.func @product(%x: tensor<3x4xf32>) -> tensor<3x8xf32> {
  %w = arith.constant dense<[[0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 4.0],
                             [1.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                             [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                             [0.0, 3.0, 0.0, 4.0, 0.0, 0.0, 0.0, 5.0]]> : tensor<4x8xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<3x8xf32>) -> tensor<3x8xf32>
  %y = linalg.matmul ins(%x, %w : tensor<3x4xf32>, tensor<4x8xf32>) outs(%init : tensor<3x8xf32>) -> tensor<3x8xf32>
  return %y : tensor<3x8xf32>
}

// -----

// Gemm with transB: the same weight stored [N, K] gives the same groups.
// Columns that are not whole groups (6 of 4) stay dense.
// CHECK-LABEL: func.func @product_transposed
// CHECK: arith.constant dense<{{\[}}[2, 1, 3], [2, 0, 3]]> : tensor<2x3xi32>
// CHECK: dlc.sparse_rows = 4
// CHECK-LABEL: func.func @product_partial_group
// CHECK: linalg.matmul
// CHECK-NOT: dlc.sparse_rows
func.func @product_transposed(%x: tensor<3x4xf32>) -> tensor<3x8xf32> {
  %w = arith.constant dense<[[0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 3.0], [0.0, 2.0, 0.0, 0.0], [0.0, 0.0, 0.0, 4.0],
                             [1.0, 0.0, 0.0, 0.0], [2.0, 0.0, 0.0, 0.0], [3.0, 0.0, 0.0, 0.0], [4.0, 0.0, 0.0, 5.0]]> : tensor<8x4xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<3x8xf32>) -> tensor<3x8xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] ins(%x, %w : tensor<3x4xf32>, tensor<8x4xf32>) outs(%init : tensor<3x8xf32>) -> tensor<3x8xf32>
  return %y : tensor<3x8xf32>
}

func.func @product_partial_group(%x: tensor<3x4xf32>) -> tensor<3x6xf32> {
  %w = arith.constant dense<[[1.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 2.0]]> : tensor<4x6xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x6xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<3x6xf32>) -> tensor<3x6xf32>
  %y = linalg.matmul ins(%x, %w : tensor<3x4xf32>, tensor<4x6xf32>) outs(%init : tensor<3x6xf32>) -> tensor<3x6xf32>
  return %y : tensor<3x6xf32>
}

// -----

// A 3x3 window over one channel keeping 3 of 9 taps: a third of the
// multiply-adds. Its output rows are 4 wide: with 16-lane vectors a
// quarter of each vector works, and the model predicts 0.33 / 0.25 of the
// dense time (dense); with 4 lanes 0.33 (sparse).
// CHECK-LABEL: func.func @narrow_rows
// CHECK: dlc.sparse_pairs = array<i64: 3, 9>, dlc.sparse_rows = 4 : i64
// AUTO-LABEL: func.func @narrow_rows
// AUTO: linalg.conv_2d_nchw_fchw
// AUTO-NOT: dlc.sparse_rows
// LANES4-LABEL: func.func @narrow_rows
// LANES4: dlc.sparse_rows = 4
func.func @narrow_rows(%x: tensor<1x1x6x6xf32>) -> tensor<1x4x4x4xf32> {
  %w = arith.constant dense<[[[[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 3.0]]],
                             [[[4.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 5.0]]],
                             [[[0.0, 0.0, 0.0], [0.0, 6.0, 0.0], [0.0, 0.0, 0.0]]],
                             [[[7.0, 0.0, 0.0], [0.0, 8.0, 0.0], [0.0, 0.0, 9.0]]]]> : tensor<4x1x3x3xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x1x6x6xf32>, tensor<4x1x3x3xf32>) outs(%init : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %y : tensor<1x4x4x4xf32>
}

// -----

// A stride-2 window reads x's 2 x 2 phases: x (5x5, no padding: a 2x2
// output) padded to 6x6, split into phases of 3x3 (x[2y + py, 2x + px] at
// phase (py, px)) by a generic of its own (dlc.materialize), flattened.
// The one kept tap (1, 2) is phase (1, 0) = 2 at (0, 1): offset
// 2 * 9 + 0 * 3 + 1 = 19; output pixel (y, x) reads 19 + y * 3 + x.
// CHECK: #[[MX:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d3, d4 * 2 + d1, d5 * 2 + d2)>
// CHECK-LABEL: func.func @strided_window
// CHECK: %[[T:.*]] = arith.constant dense<{{\[}}[1, 19], [1, 19], [1, 19], [1, 19]]> : tensor<4x2xi32>
// CHECK: %[[P:.*]] = tensor.pad %arg0 low[0, 0, 0, 0] high[0, 0, 1, 1]
// CHECK: %[[S:.*]] = linalg.generic {indexing_maps = [#[[MX]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%[[P]] : tensor<1x1x6x6xf32>) outs(%{{.*}} : tensor<1x2x2x1x3x3xf32>) attrs = {dlc.materialize}
// CHECK: %[[X:.*]] = tensor.collapse_shape %[[S]] {{\[}}[0], [1, 2, 3, 4, 5]] : tensor<1x2x2x1x3x3xf32> into tensor<1x36xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[T]] : tensor<4x1xf32>, tensor<4x2xi32>)
// CHECK:   arith.index_cast
// CHECK:   arith.muli %{{.*}}, %c3{{.*}} : index
// CHECK:   tensor.extract %[[X]]
// AUTO-LABEL: func.func @strided_window
func.func @strided_window(%x: tensor<1x1x5x5xf32>) -> tensor<1x4x2x2xf32> {
  %w = arith.constant dense<[[[[0.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]]],
                             [[[0.0, 0.0, 0.0], [0.0, 0.0, 2.0], [0.0, 0.0, 0.0]]],
                             [[[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]],
                             [[[0.0, 0.0, 0.0], [0.0, 0.0, 3.0], [0.0, 0.0, 0.0]]]]> : tensor<4x1x3x3xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x2x2xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x1x5x5xf32>, tensor<4x1x3x3xf32>) outs(%init : tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  return %y : tensor<1x4x2x2xf32>
}

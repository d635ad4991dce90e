// RUN: dlc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dlc-transpose-into-matvec))' | FileCheck %s

// A decoder's attention scores at one query: q [4 x 1 x 64] times the
// transposed key cache, K [1 x 4 x 128 x 64] -> [1 x 4 x 64 x 128],
// collapsed to [4 x 64 x 128] for the batch_matmul. The product reads the
// cache as stored, collapsed the same way, at (b, n, k): no transpose.
// CHECK-DAG: #[[K:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-LABEL: func.func @attention_scores
// CHECK-NOT: linalg.transpose
// CHECK: %[[C:.*]] = tensor.collapse_shape %arg1 {{\[}}[0, 1], [2], [3]] : tensor<1x4x128x64xf32> into tensor<4x128x64xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[K]], #{{.*}}]
// CHECK-SAME: ins(%arg0, %[[C]] : tensor<4x1x64xf32>, tensor<4x128x64xf32>)
func.func @attention_scores(%q: tensor<4x1x64xf32>, %k: tensor<1x4x128x64xf32>, %i: tensor<4x1x128xf32>) -> tensor<4x1x128xf32> {
  %e = tensor.empty() : tensor<1x4x64x128xf32>
  %t = linalg.transpose ins(%k : tensor<1x4x128x64xf32>) outs(%e : tensor<1x4x64x128xf32>) permutation = [0, 1, 3, 2]
  %c = tensor.collapse_shape %t [[0, 1], [2], [3]] : tensor<1x4x64x128xf32> into tensor<4x64x128xf32>
  %s = linalg.batch_matmul ins(%q, %c : tensor<4x1x64xf32>, tensor<4x64x128xf32>) outs(%i : tensor<4x1x128xf32>) -> tensor<4x1x128xf32>
  return %s : tensor<4x1x128xf32>
}

// -----

// A plain matrix-vector product over a transposed matrix: read at (n, k).
// CHECK-DAG: #[[W:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @matvec
// CHECK-NOT: linalg.transpose
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[W]], #{{.*}}]
// CHECK-SAME: ins(%arg0, %arg1 : tensor<1x64xf32>, tensor<32x64xf32>)
func.func @matvec(%x: tensor<1x64xf32>, %w: tensor<32x64xf32>, %i: tensor<1x32xf32>) -> tensor<1x32xf32> {
  %e = tensor.empty() : tensor<64x32xf32>
  %t = linalg.transpose ins(%w : tensor<32x64xf32>) outs(%e : tensor<64x32xf32>) permutation = [1, 0]
  %y = linalg.matmul ins(%x, %t : tensor<1x64xf32>, tensor<64x32xf32>) outs(%i : tensor<1x32xf32>) -> tensor<1x32xf32>
  return %y : tensor<1x32xf32>
}

// -----

// Left alone: two output rows (the register tile broadcasts rows against
// vectors of the transposed operand); a transpose with another use; a
// collapse that merges dims the transpose separates.
// CHECK-LABEL: func.func @left_alone
// CHECK: %[[T1:.*]] = linalg.transpose
// CHECK: linalg.matmul ins(%arg0, %[[T1]]
// CHECK: %[[T2:.*]] = linalg.transpose
// CHECK: linalg.matmul ins(%arg1, %[[T2]]
// CHECK: %[[T3:.*]] = linalg.transpose
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[T3]]
// CHECK: linalg.matmul ins(%arg6, %[[C]]
func.func @left_alone(%x2: tensor<2x64xf32>, %x1: tensor<1x64xf32>, %w: tensor<32x64xf32>, %i2: tensor<2x32xf32>, %i1: tensor<1x32xf32>, %k: tensor<2x4x8xf32>, %q: tensor<1x16xf32>, %j: tensor<1x4xf32>) -> (tensor<2x32xf32>, tensor<1x32xf32>, tensor<64x32xf32>, tensor<1x4xf32>) {
  %e = tensor.empty() : tensor<64x32xf32>
  %t = linalg.transpose ins(%w : tensor<32x64xf32>) outs(%e : tensor<64x32xf32>) permutation = [1, 0]
  %y2 = linalg.matmul ins(%x2, %t : tensor<2x64xf32>, tensor<64x32xf32>) outs(%i2 : tensor<2x32xf32>) -> tensor<2x32xf32>
  %t2 = linalg.transpose ins(%w : tensor<32x64xf32>) outs(%e : tensor<64x32xf32>) permutation = [1, 0]
  %y1 = linalg.matmul ins(%x1, %t2 : tensor<1x64xf32>, tensor<64x32xf32>) outs(%i1 : tensor<1x32xf32>) -> tensor<1x32xf32>
  // [2 x 4 x 8] -> [8 x 2 x 4]: collapsing its first two dims (8, 2)
  // would need the input's dims 2 and 0 together.
  %ek = tensor.empty() : tensor<8x2x4xf32>
  %tk = linalg.transpose ins(%k : tensor<2x4x8xf32>) outs(%ek : tensor<8x2x4xf32>) permutation = [2, 0, 1]
  %ck = tensor.collapse_shape %tk [[0, 1], [2]] : tensor<8x2x4xf32> into tensor<16x4xf32>
  %s = linalg.matmul ins(%q, %ck : tensor<1x16xf32>, tensor<16x4xf32>) outs(%j : tensor<1x4xf32>) -> tensor<1x4xf32>
  return %y2, %y1, %t2, %s : tensor<2x32xf32>, tensor<1x32xf32>, tensor<64x32xf32>, tensor<1x4xf32>
}

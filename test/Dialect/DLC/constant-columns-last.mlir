// RUN: dlc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dlc-constant-columns-last{lanes=4}))' | FileCheck %s

// Gemm with transB: y[m][n] = sum_k x[m][k] * w[n][k], w a constant. Its
// columns n are not w's innermost dim; w[n][k] = 3n + k becomes w'[k][n],
// read at (k, n). The products and their order stay.
// CHECK-DAG: #[[W:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-LABEL: func.func @gemm_trans_b
// CHECK: %[[T:.*]] = arith.constant dense<{{\[}}[0.000000e+00, 3.000000e+00, 6.000000e+00, 9.000000e+00], [1.000000e+00, 4.000000e+00, 7.000000e+00, 1.000000e+01], [2.000000e+00, 5.000000e+00, 8.000000e+00, 1.100000e+01]]> : tensor<3x4xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[W]], #{{.*}}]
// CHECK-SAME: ins(%arg0, %[[T]] : tensor<2x3xf32>, tensor<3x4xf32>)
// CHECK:   arith.mulf
// CHECK:   arith.addf
#x = affine_map<(m, n, k) -> (m, k)>
#wt = affine_map<(m, n, k) -> (n, k)>
#y = affine_map<(m, n, k) -> (m, n)>
func.func @gemm_trans_b(%x: tensor<2x3xf32>, %init: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %w = arith.constant dense<[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0], [9.0, 10.0, 11.0]]> : tensor<4x3xf32>
  %y = linalg.generic {indexing_maps = [#x, #wt, #y], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<2x3xf32>, tensor<4x3xf32>) outs(%init : tensor<2x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// An LSTM direction's weight: a static slice of a [directions, gates,
// input] resource, collapsed to [gates, input]. The second direction's
// slice (12..23) is transposed into a resource of its own, hoisted to the
// function's start (not into the loop around the contraction).
// CHECK-LABEL: func.func @direction_slice
// CHECK-NEXT: %[[T:.*]] = arith.constant dense_resource<w.columns_last> : tensor<3x4xf32>
// CHECK: scf.for
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg0, %[[T]] : tensor<2x3xf32>, tensor<3x4xf32>)
// CHECK: w.columns_last: "0x040000000000404100007041000090410000A8410000504100008041000098410000B04100006041000088410000A0410000B841"
#x2 = affine_map<(m, n, k) -> (m, k)>
#wt2 = affine_map<(m, n, k) -> (n, k)>
#y2 = affine_map<(m, n, k) -> (m, n)>
func.func @direction_slice(%x: tensor<2x3xf32>, %init: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %w = arith.constant dense_resource<w> : tensor<2x4x3xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %r = scf.for %i = %c0 to %c2 step %c1 iter_args(%acc = %init) -> (tensor<2x4xf32>) {
    %s = tensor.extract_slice %w[1, 0, 0] [1, 4, 3] [1, 1, 1] : tensor<2x4x3xf32> to tensor<1x4x3xf32>
    %c = tensor.collapse_shape %s [[0, 1], [2]] : tensor<1x4x3xf32> into tensor<4x3xf32>
    %y = linalg.generic {indexing_maps = [#x2, #wt2, #y2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %c : tensor<2x3xf32>, tensor<4x3xf32>) outs(%acc : tensor<2x4xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %p = arith.mulf %a, %b : f32
      %q = arith.addf %o, %p : f32
      linalg.yield %q : f32
    } -> tensor<2x4xf32>
    scf.yield %y : tensor<2x4xf32>
  }
  return %r : tensor<2x4xf32>
}
{-#
  dialect_resources: {
    builtin: {
      w: "0x04000000000000000000803f0000004000004040000080400000a0400000c0400000e0400000004100001041000020410000304100004041000050410000604100007041000080410000884100009041000098410000a0410000a8410000b0410000b841"
    }
  }
#-}

// -----

// Left alone: fewer columns than a vector's lanes; a constant already
// columns-last; a weight computed at run time; an input the columns index
// on both sides (no single vector operand).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: dense<3.000000e+00> : tensor<3x4xf32>
// CHECK: ins(%arg0, %{{.*}} : tensor<2x3xf32>, tensor<2x3xf32>)
// CHECK: ins(%arg0, %{{.*}} : tensor<2x3xf32>, tensor<3x4xf32>)
// CHECK: ins(%arg0, %arg1 : tensor<2x3xf32>, tensor<4x3xf32>)
// CHECK: ins(%arg1, %{{.*}} : tensor<4x3xf32>, tensor<4x3xf32>)
// CHECK: return
#xa = affine_map<(m, n, k) -> (m, k)>
#wa = affine_map<(m, n, k) -> (n, k)>
#wk = affine_map<(m, n, k) -> (k, n)>
#ya = affine_map<(m, n, k) -> (m, n)>
#both = affine_map<(m, n, k) -> (n, k)>
func.func @left_alone(%x: tensor<2x3xf32>, %v: tensor<4x3xf32>, %i2: tensor<2x2xf32>, %i4: tensor<2x4xf32>) -> (tensor<2x2xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<4x4xf32>) {
  %narrow = arith.constant dense<1.0> : tensor<2x3xf32>
  %a = linalg.generic {indexing_maps = [#xa, #wa, #ya], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %narrow : tensor<2x3xf32>, tensor<2x3xf32>) outs(%i2 : tensor<2x2xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x2xf32>
  %kn = arith.constant dense<2.0> : tensor<3x4xf32>
  %b = linalg.generic {indexing_maps = [#xa, #wk, #ya], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %kn : tensor<2x3xf32>, tensor<3x4xf32>) outs(%i4 : tensor<2x4xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x4xf32>
  %c = linalg.generic {indexing_maps = [#xa, #wa, #ya], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %v : tensor<2x3xf32>, tensor<4x3xf32>) outs(%i4 : tensor<2x4xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x4xf32>
  %w = arith.constant dense<3.0> : tensor<4x3xf32>
  %e = tensor.empty() : tensor<4x4xf32>
  %d = linalg.generic {indexing_maps = [#both, #both, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%v, %w : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  return %a, %b, %c, %d : tensor<2x2xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<4x4xf32>
}

// -----

// ONNX's Gemm with transB lowers to a linalg.matmul whose B map is (n, k):
// generalized and rewritten like the generic above. A matrix-vector
// product over a weight of more than 512 KiB keeps rows of the reduction
// (a stream from memory): the 1 x 1000 product over [1000 x 512] stays.
// CHECK-LABEL: func.func @named_matmul_trans_b
// CHECK: %[[T:.*]] = arith.constant dense<2.000000e+00> : tensor<3x4xf32>
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg0, %[[T]] : tensor<2x3xf32>, tensor<3x4xf32>)
// CHECK: linalg.matmul
// CHECK-SAME: ins(%arg2, %{{.*}} : tensor<1x512xf32>, tensor<1000x512xf32>)
// CHECK-NOT: tensor<512x1000xf32>
func.func @named_matmul_trans_b(%x: tensor<2x3xf32>, %i: tensor<2x4xf32>, %v: tensor<1x512xf32>, %j: tensor<1x1000xf32>) -> (tensor<2x4xf32>, tensor<1x1000xf32>) {
  %w = arith.constant dense<2.0> : tensor<4x3xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] ins(%x, %w : tensor<2x3xf32>, tensor<4x3xf32>) outs(%i : tensor<2x4xf32>) -> tensor<2x4xf32>
  %big = arith.constant dense<1.0> : tensor<1000x512xf32>
  %z = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] ins(%v, %big : tensor<1x512xf32>, tensor<1000x512xf32>) outs(%j : tensor<1x1000xf32>) -> tensor<1x1000xf32>
  return %y, %z : tensor<2x4xf32>, tensor<1x1000xf32>
}

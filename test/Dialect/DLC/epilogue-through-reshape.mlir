// RUN: dlc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dlc-epilogue-through-reshape))' | FileCheck %s

// A MatMul on [1, 4, 8] x [8, 16]: the 2-D contraction's result is
// expanded to [1, 4, 16] before the bias Add and a Tanh read it. Both
// elementwise ops move to the contraction's shape [4, 16], the first one
// reading the contraction's result directly, and the last result is
// expanded instead.
// CHECK-LABEL: func.func @matmul_bias_tanh
// CHECK: %[[MM:.*]] = linalg.matmul
// CHECK: %[[ADD:.*]] = linalg.generic {{.*}} ins(%[[MM]], %{{.*}} : tensor<4x16xf32>, tensor<16xf32>)
// CHECK:   arith.addf
// CHECK: %[[TANH:.*]] = linalg.generic {{.*}} ins(%[[ADD]] : tensor<4x16xf32>)
// CHECK:   math.tanh
// CHECK: %[[OUT:.*]] = tensor.expand_shape %[[TANH]] {{\[}}[0, 1], [2]] output_shape [1, 4, 16] : tensor<4x16xf32> into tensor<1x4x16xf32>
// CHECK: return %[[OUT]]
#bias = affine_map<(b, m, n) -> (n)>
#id3 = affine_map<(b, m, n) -> (b, m, n)>
func.func @matmul_bias_tanh(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %bias: tensor<16xf32>) -> tensor<1x4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  %ex = tensor.expand_shape %mm [[0, 1], [2]] output_shape [1, 4, 16] : tensor<4x16xf32> into tensor<1x4x16xf32>
  %e3 = tensor.empty() : tensor<1x4x16xf32>
  %add = linalg.generic {indexing_maps = [#id3, #bias, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ex, %bias : tensor<1x4x16xf32>, tensor<16xf32>) outs(%e3 : tensor<1x4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x4x16xf32>
  %t = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%add : tensor<1x4x16xf32>) outs(%e3 : tensor<1x4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.tanh %a : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16xf32>
  return %t : tensor<1x4x16xf32>
}

// -----

// A softmax reads the expanded result of a batched product with a
// reduction (its row maximum): the reshape stays, and so do all of its
// readers, the elementwise one included.
// CHECK-LABEL: func.func @softmax_keeps_shape
// CHECK: tensor.expand_shape
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} ins(%{{.*}} : tensor<1x4x16xf32>)
// CHECK: linalg.generic {{.*}}ins(%{{.*}}, %{{.*}} : tensor<1x4x16xf32>, tensor<1x4xf32>)
#row = affine_map<(b, m, n) -> (b, m)>
#id3b = affine_map<(b, m, n) -> (b, m, n)>
func.func @softmax_keeps_shape(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<1x4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x16xf32>) -> tensor<4x16xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x16xf32>) outs(%f : tensor<4x16xf32>) -> tensor<4x16xf32>
  %ex = tensor.expand_shape %mm [[0, 1], [2]] output_shape [1, 4, 16] : tensor<4x16xf32> into tensor<1x4x16xf32>
  %er = tensor.empty() : tensor<1x4xf32>
  %fr = linalg.fill ins(%zero : f32) outs(%er : tensor<1x4xf32>) -> tensor<1x4xf32>
  %max = linalg.generic {indexing_maps = [#id3b, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%ex : tensor<1x4x16xf32>) outs(%fr : tensor<1x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %o : f32
    linalg.yield %m : f32
  } -> tensor<1x4xf32>
  %e3 = tensor.empty() : tensor<1x4x16xf32>
  %sub = linalg.generic {indexing_maps = [#id3b, #row, #id3b], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ex, %max : tensor<1x4x16xf32>, tensor<1x4xf32>) outs(%e3 : tensor<1x4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x4x16xf32>
  return %sub : tensor<1x4x16xf32>
}

// -----

// An expanded input that no contraction computed: left alone.
// CHECK-LABEL: func.func @not_from_contraction
// CHECK: tensor.expand_shape %arg0
// CHECK: linalg.generic {{.*}}ins(%{{.*}} : tensor<1x4x16xf32>)
#id3c = affine_map<(b, m, n) -> (b, m, n)>
func.func @not_from_contraction(%x: tensor<4x16xf32>) -> tensor<1x4x16xf32> {
  %ex = tensor.expand_shape %x [[0, 1], [2]] output_shape [1, 4, 16] : tensor<4x16xf32> into tensor<1x4x16xf32>
  %e3 = tensor.empty() : tensor<1x4x16xf32>
  %t = linalg.generic {indexing_maps = [#id3c, #id3c], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ex : tensor<1x4x16xf32>) outs(%e3 : tensor<1x4x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.tanh %a : f32
    linalg.yield %r : f32
  } -> tensor<1x4x16xf32>
  return %t : tensor<1x4x16xf32>
}

// -----

// A one-token step: [1, 16] expanded to [1, 1, 16] with the unit token dim
// in the features' group ([[0], [1, 2]]), which the bias indexes only in
// part. The reshape is regrouped ([[0, 1], [2]], the same shapes) and the
// bias Add then moves to [1, 16] like above.
// CHECK-LABEL: func.func @one_token
// CHECK: %[[MM:.*]] = linalg.matmul
// CHECK: %[[ADD:.*]] = linalg.generic {{.*}} ins(%[[MM]], %{{.*}} : tensor<1x16xf32>, tensor<16xf32>)
// CHECK: tensor.expand_shape %[[ADD]] {{\[}}[0, 1], [2]] output_shape [1, 1, 16] : tensor<1x16xf32> into tensor<1x1x16xf32>
#bias1 = affine_map<(b, m, n) -> (n)>
#id31 = affine_map<(b, m, n) -> (b, m, n)>
func.func @one_token(%x: tensor<1x8xf32>, %w: tensor<8x16xf32>, %bias: tensor<16xf32>) -> tensor<1x1x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x16xf32>) -> tensor<1x16xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<1x8xf32>, tensor<8x16xf32>) outs(%f : tensor<1x16xf32>) -> tensor<1x16xf32>
  %ex = tensor.expand_shape %mm [[0], [1, 2]] output_shape [1, 1, 16] : tensor<1x16xf32> into tensor<1x1x16xf32>
  %e3 = tensor.empty() : tensor<1x1x16xf32>
  %add = linalg.generic {indexing_maps = [#id31, #bias1, #id31], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ex, %bias : tensor<1x1x16xf32>, tensor<16xf32>) outs(%e3 : tensor<1x1x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<1x1x16xf32>
  return %add : tensor<1x1x16xf32>
}

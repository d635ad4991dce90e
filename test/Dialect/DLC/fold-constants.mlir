// RUN: dlc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dlc-fold-constants))' | FileCheck %s

// A batch norm's per-channel scale, scale / sqrt(var + eps), from its
// constant parameters (the scale a resource blob, as the importer makes
// large tensors): computed once.
// CHECK-LABEL: func.func @batchnorm_scale
// CHECK: %[[C:.*]] = arith.constant dense<[2.000000e+00, 3.000000e+00]> : tensor<2xf32>
// CHECK-NOT: linalg.generic
// CHECK: return %[[C]]
#id = affine_map<(c) -> (c)>
func.func @batchnorm_scale() -> tensor<2xf32> {
  %scale = arith.constant dense_resource<scale> : tensor<2xf32>
  %var = arith.constant dense<[3.0, 8.0]> : tensor<2xf32>
  %e = tensor.empty() : tensor<2xf32>
  %a = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%scale, %var : tensor<2xf32>, tensor<2xf32>) outs(%e : tensor<2xf32>) {
  ^bb0(%s: f32, %v: f32, %o: f32):
    %eps = arith.constant 1.0 : f32
    %ve = arith.addf %v, %eps : f32
    %r = math.sqrt %ve : f32
    %q = arith.divf %s, %r : f32
    linalg.yield %q : f32
  } -> tensor<2xf32>
  return %a : tensor<2xf32>
}
{-#
  dialect_resources: {
    builtin: {
      scale: "0x040000000000804000001041"
    }
  }
#-}

// -----

// A transposed read: the result is laid out by its own indexing map.
// CHECK-LABEL: func.func @transposed
// CHECK: arith.constant dense<{{\[}}[1.000000e+00, 3.000000e+00], [2.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
#tr = affine_map<(i, j) -> (j, i)>
#ij = affine_map<(i, j) -> (i, j)>
func.func @transposed() -> tensor<2x2xf32> {
  %x = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %e = tensor.empty() : tensor<2x2xf32>
  %t = linalg.generic {indexing_maps = [#tr, #ij], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<2x2xf32>
  return %t : tensor<2x2xf32>
}

// -----

// Kept: a broadcast of a per-channel constant over an image (the artifact
// would grow), int8 weights dequantized to f32 (they stay integers), an
// input that is not a constant, and values computed from loop indices.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-4: linalg.generic
#c = affine_map<(c, p) -> (c)>
#cp = affine_map<(c, p) -> (c, p)>
func.func @kept(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) {
  %bias = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %w = arith.constant dense<3> : tensor<2x8xi8>
  %e = tensor.empty() : tensor<2x8xf32>
  %b = linalg.generic {indexing_maps = [#c, #cp], iterator_types = ["parallel", "parallel"]} ins(%bias : tensor<2xf32>) outs(%e : tensor<2x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<2x8xf32>
  %d = linalg.generic {indexing_maps = [#cp, #cp], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<2x8xi8>) outs(%e : tensor<2x8xf32>) {
  ^bb0(%a: i8, %o: f32):
    %f = arith.sitofp %a : i8 to f32
    %s = arith.constant 0.5 : f32
    %m = arith.mulf %f, %s : f32
    linalg.yield %m : f32
  } -> tensor<2x8xf32>
  %n = linalg.generic {indexing_maps = [#cp, #cp], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<2x8xf32>) outs(%e : tensor<2x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.negf %a : f32
    linalg.yield %m : f32
  } -> tensor<2x8xf32>
  %i = linalg.generic {indexing_maps = [#cp], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<2x8xf32>) {
  ^bb0(%o: f32):
    %r = linalg.index 1 : index
    %ri = arith.index_cast %r : index to i32
    %f = arith.sitofp %ri : i32 to f32
    linalg.yield %f : f32
  } -> tensor<2x8xf32>
  return %b, %d, %n, %i : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// Splat constant inputs become scalars in the body: the one indexed by d0
// (which the output bounds) goes away; the one indexed by d1 (which nothing
// else bounds) is replaced by an unread empty tensor.
// CHECK-LABEL: func.func @splat_inputs
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "reduction"]} ins(%arg0, %[[E:.*]] : tensor<4xi64>, tensor<4xi64>)
// CHECK-NEXT: ^bb0(%{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64):
// CHECK-NEXT: %[[C1:.*]] = arith.constant 7 : i64
// CHECK-NEXT: %[[C2:.*]] = arith.constant 7 : i64
// CHECK-NEXT: arith.cmpi sgt, %[[C2]], %[[C1]]
#d0 = affine_map<(d0, d1) -> (d0)>
#d1 = affine_map<(d0, d1) -> (d1)>
func.func @splat_inputs(%x: tensor<4xi64>) -> tensor<4xi64> {
  %cst = arith.constant dense<7> : tensor<4xi64>
  %e = tensor.empty() : tensor<4xi64>
  %r = linalg.generic {indexing_maps = [#d0, #d0, #d1, #d0], iterator_types = ["parallel", "reduction"]} ins(%x, %cst, %cst : tensor<4xi64>, tensor<4xi64>, tensor<4xi64>) outs(%e : tensor<4xi64>) {
  ^bb0(%a: i64, %b: i64, %c: i64, %o: i64):
    %gt = arith.cmpi sgt, %c, %b : i64
    %z = arith.extui %gt : i1 to i64
    %s = arith.addi %o, %z : i64
    %t = arith.addi %s, %a : i64
    linalg.yield %t : i64
  } -> tensor<4xi64>
  return %r : tensor<4xi64>
}

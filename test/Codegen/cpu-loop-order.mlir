// RUN: dlc-opt %s --split-input-file --dlc-cpu-loop-order | FileCheck %s

// matmul becomes i-k-j: j walks C and B with stride 1, so it goes innermost
// and the reduction k just outside it; the accumulation may contract and
// reassociate.
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @matmul
// CHECK: linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[C]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK: arith.mulf {{.*}} fastmath<reassoc,contract>
// CHECK: arith.addf {{.*}} fastmath<reassoc,contract>
func.func @matmul(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  return
}

// -----

// With B transposed (Gemm transB=1) j would walk B with stride 64; k walks
// both inputs contiguously and keeps C[i, j] in a register, so the
// reduction stays innermost.
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[C:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @matmul_transposed
// CHECK: linalg.generic {indexing_maps = [#[[A]], #[[B]], #[[C]]], iterator_types = ["parallel", "parallel", "reduction"]}
#ma = affine_map<(i, j, k) -> (i, k)>
#mb = affine_map<(i, j, k) -> (j, k)>
#mc = affine_map<(i, j, k) -> (i, j)>
func.func @matmul_transposed(%a: memref<2x64xf32>, %b: memref<16x64xf32>, %c: memref<2x16xf32>) {
  linalg.generic {indexing_maps = [#ma, #mb, #mc], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<2x64xf32>, memref<16x64xf32>) outs(%c : memref<2x16xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %z, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A 1x1 convolution at 7x7: the unit batch and window loops disappear and
// oh, ow merge into one loop of 49 over collapsed buffers, which goes
// innermost (f, c, p).
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (0, d1, d2)>
// CHECK-DAG: #[[W:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, 0, 0)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (0, d0, d2)>
// CHECK-LABEL: func.func @conv1x1
// CHECK-DAG: %[[I:.*]] = memref.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3]] : memref<1x8x7x7xf32> into memref<1x8x49xf32>
// CHECK-DAG: %[[O:.*]] = memref.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3]] : memref<1x16x7x7xf32> into memref<1x16x49xf32>
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[W]], #[[OUT]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME: ins(%[[I]], %{{.*}} : memref<1x8x49xf32>, memref<16x8x1x1xf32>) outs(%[[O]] : memref<1x16x49xf32>)
func.func @conv1x1(%x: memref<1x8x7x7xf32>, %w: memref<16x8x1x1xf32>, %y: memref<1x16x7x7xf32>) {
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : memref<1x8x7x7xf32>, memref<16x8x1x1xf32>) outs(%y : memref<1x16x7x7xf32>)
  return
}

// -----

// A loop whose index the body reads is not merged with its neighbours
// (each element would take the index apart from the merged one by a
// division); the loops after it are. Elementwise arithmetic rounds as
// written: neither contracted (a Mul then an Add rounds twice in ONNX
// Runtime) nor reassociated.
// CHECK-LABEL: func.func @elementwise
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel"]
// CHECK-SAME: memref<4x16xf32>
// CHECK: %[[P:.*]] = linalg.index 0 : index
// CHECK-NOT: arith.divui
// CHECK-NOT: arith.remui
// CHECK: arith.index_cast %[[P]]
// CHECK: arith.mulf
// CHECK-NOT: fastmath
// CHECK: arith.addf
// CHECK-NOT: fastmath
// CHECK: linalg.yield
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @elementwise(%a: memref<4x8x2xf32>, %c: memref<4x8x2xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a : memref<4x8x2xf32>) outs(%c : memref<4x8x2xf32>) {
  ^bb0(%x: f32, %y: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i32
    %fi = arith.sitofp %ii : i32 to f32
    %m = arith.mulf %x, %fi : f32
    %s = arith.addf %m, %y : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A transposing copy cannot merge its loops; the loop that walks the output
// with stride 1 goes innermost.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @transpose
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]]
#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d1, d0)>
func.func @transpose(%a: memref<4x8xf32>, %c: memref<8x4xf32>) {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4x8xf32>) outs(%c : memref<8x4xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  return
}

// -----

// A repack to 4 bytes a word, (C / 4, P, 4) of (C, P): the pixels p vectorize
// best (the input contiguous, the output in steps of 4), and the 4-trip loop
// that fills the bytes between goes inside them, so that LLVM unrolls it and
// vectorizes p with interleaved stores (p innermost, every store strided,
// stayed scalar).
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d0 * 4 + d2, d1)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @interleaved_repack
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel"]}
#ri = affine_map<(b, k, p) -> (b * 4 + k, p)>
#ro = affine_map<(b, k, p) -> (b, p, k)>
func.func @interleaved_repack(%in: memref<32x196xi32>, %out: memref<8x196x4xi8>) {
  linalg.generic {indexing_maps = [#ri, #ro], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%in : memref<32x196xi32>) outs(%out : memref<8x196x4xi8>) {
  ^bb0(%x: i32, %o: i8):
    %t = arith.trunci %x : i32 to i8
    linalg.yield %t : i8
  }
  return
}

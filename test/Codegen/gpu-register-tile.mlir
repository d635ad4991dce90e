// RUN: dlc-opt %s --split-input-file --dlc-gpu-register-tile | FileCheck %s
// RUN: dlc-opt %s --split-input-file --dlc-gpu-register-tile=max-accumulators=2 | FileCheck %s --check-prefix=SMALL

// A thread's 2x2 tile of a matrix product: four accumulators loaded once,
// carried through the K loop, stored once; each step loads the two
// elements of each operand the tile reads (not one per output element),
// and the multiply-adds may contract.
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[A:.*]]: memref<2x8xf32>, %[[B:.*]]: memref<8x2xf32>, %[[O:.*]]: memref<2x2xf32>)
// CHECK-NOT: linalg.generic
// CHECK-DAG: %[[O00:.*]] = memref.load %[[O]][%c0{{.*}}, %c0{{.*}}]
// CHECK-DAG: %[[O11:.*]] = memref.load %[[O]][%c1{{.*}}, %c1{{.*}}]
// CHECK: %[[R:.*]]:4 = scf.for %[[K:.*]] = %c0{{.*}} to %c8{{.*}} step %c1{{.*}} iter_args(%[[S0:.*]] = %[[O00]], %[[S1:.*]] = %{{.*}}, %[[S2:.*]] = %{{.*}}, %[[S3:.*]] = %[[O11]]) -> (f32, f32, f32, f32)
// CHECK:   %[[A0:.*]] = memref.load %[[A]][%c0{{.*}}, %[[K]]]
// CHECK:   %[[B0:.*]] = memref.load %[[B]][%[[K]], %c0{{.*}}]
// CHECK:   %[[P:.*]] = arith.mulf %[[A0]], %[[B0]] fastmath<contract>
// CHECK:   %[[N0:.*]] = arith.addf %[[S0]], %[[P]] fastmath<contract>
// CHECK:   %[[B1:.*]] = memref.load %[[B]][%[[K]], %c1{{.*}}]
// CHECK:   arith.mulf %[[A0]], %[[B1]]
// CHECK:   %[[A1:.*]] = memref.load %[[A]][%c1{{.*}}, %[[K]]]
// CHECK:   arith.mulf %[[A1]], %[[B0]]
// CHECK:   arith.mulf %[[A1]], %[[B1]]
// CHECK-NOT: memref.load
// CHECK:   scf.yield %[[N0]],
// CHECK: memref.store %[[R]]#0, %[[O]][%c0{{.*}}, %c0{{.*}}]
// CHECK: memref.store %[[R]]#3, %[[O]][%c1{{.*}}, %c1{{.*}}]
// SMALL-LABEL: func.func @matmul
// SMALL: linalg.generic
#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (k, n)>
#o = affine_map<(m, n, k) -> (m, n)>
func.func @matmul(%a: memref<2x8xf32>, %b: memref<8x2xf32>, %o: memref<2x2xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #o], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<2x8xf32>, memref<8x2xf32>) outs(%o : memref<2x2xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A named convolution of two output channels by two columns, through
// strided views: the reduction loops nest in their order (channels, rows,
// columns of the filter); an image element is loaded once for both output
// channels, and neighbouring columns read it again at the next filter
// column.
// CHECK-LABEL: func.func @conv
// CHECK-NOT: linalg.conv
// CHECK: scf.for %[[C:.*]] = %c0{{.*}} to %c4{{.*}} step %c1{{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32)
// CHECK:   scf.for %[[H:.*]] = %c0{{.*}} to %c3{{.*}} step %c1{{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32)
// CHECK:     scf.for %[[W:.*]] = %c0{{.*}} to %c3{{.*}} step %c1{{.*}} iter_args({{.*}}) -> (f32, f32, f32, f32)
// CHECK:       %[[X0:.*]] = memref.load %arg0[%c0{{.*}}, %[[C]], %[[H]], %[[W]]]
// CHECK:       %[[F0:.*]] = memref.load %arg1[%c0{{.*}}, %[[C]], %[[H]], %[[W]]]
// CHECK:       arith.mulf %[[X0]], %[[F0]]
// CHECK:       %[[W1:.*]] = affine.apply #{{.*}}(%[[W]])
// CHECK:       %[[X1:.*]] = memref.load %arg0[%c0{{.*}}, %[[C]], %[[H]], %[[W1]]]
// CHECK:       arith.mulf %[[X1]], %[[F0]]
// CHECK:       %[[F1:.*]] = memref.load %arg1[%c1{{.*}}, %[[C]], %[[H]], %[[W]]]
// CHECK:       arith.mulf %[[X0]], %[[F1]]
// CHECK:       arith.mulf %[[X1]], %[[F1]]
// CHECK-COUNT-4: memref.store
func.func @conv(%x: memref<1x4x3x4xf32, strided<[200, 50, 10, 1], offset: ?>>, %w: memref<2x4x3x3xf32>, %o: memref<1x2x1x2xf32, strided<[400, 40, 10, 1], offset: ?>>) {
  linalg.conv_2d_nchw_fchw ins(%x, %w : memref<1x4x3x4xf32, strided<[200, 50, 10, 1], offset: ?>>, memref<2x4x3x3xf32>) outs(%o : memref<1x2x1x2xf32, strided<[400, 40, 10, 1], offset: ?>>)
  return
}

// -----

// Pooling (a max whose window operand is read for its shape only, never
// loaded) and an index-dependent body: linalg.index becomes the loop value
// (a reduction loop) or the output element's constant index.
// CHECK-LABEL: func.func @argmax_like
// CHECK: scf.for %[[K:.*]] = %c0{{.*}} to %c5{{.*}} step %c1{{.*}} iter_args(%[[S0:.*]] = %{{.*}}, %[[S1:.*]] = %{{.*}}) -> (i64, i64)
// CHECK:   arith.addi %[[K]], %c0{{.*}} : index
// CHECK:   arith.maxsi %[[S0]]
// CHECK:   arith.addi %[[K]], %c1{{.*}} : index
// CHECK:   arith.maxsi %[[S1]]
// CHECK: memref.store
// CHECK: memref.store
#in = affine_map<(i, k) -> (i, k)>
#out = affine_map<(i, k) -> (i)>
func.func @argmax_like(%a: memref<2x5xf32>, %o: memref<2xi64>) {
  linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<2x5xf32>) outs(%o : memref<2xi64>) {
  ^bb0(%x: f32, %acc: i64):
    %k = linalg.index 1 : index
    %i = linalg.index 0 : index
    %s = arith.addi %k, %i : index
    %c = arith.index_cast %s : index to i64
    %m = arith.maxsi %acc, %c : i64
    linalg.yield %m : i64
  }
  return
}

// CHECK-LABEL: func.func @pool
// CHECK: scf.for
// CHECK:   scf.for
// CHECK-NOT: memref.load %arg1
// CHECK:     memref.load %arg0
// CHECK:     arith.maximumf
func.func @pool(%x: memref<1x1x4x4xf32>, %w: memref<3x3xf32>, %o: memref<1x1x2x2xf32>) {
  linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %w : memref<1x1x4x4xf32>, memref<3x3xf32>) outs(%o : memref<1x1x2x2xf32>)
  return
}

// -----

// Left alone: one reduction step, a dynamic loop, tensors, an output
// indexed by a reduction loop.
// CHECK-LABEL: func.func @unchanged
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK: linalg.generic
#r = affine_map<(i, k) -> (i, k)>
#s = affine_map<(i, k) -> (i)>
func.func @unchanged(%a: memref<2x1xf32>, %o: memref<2xf32>, %d: memref<?x4xf32>, %od: memref<?xf32>, %t: tensor<2x4xf32>, %ot: tensor<2xf32>, %t2: memref<2x4xf32>, %o2: memref<2x4xf32>) -> tensor<2xf32> {
  linalg.generic {indexing_maps = [#r, #s], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<2x1xf32>) outs(%o : memref<2xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#r, #s], iterator_types = ["parallel", "reduction"]}
      ins(%d : memref<?x4xf32>) outs(%od : memref<?xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  }
  %r = linalg.generic {indexing_maps = [#r, #s], iterator_types = ["parallel", "reduction"]}
      ins(%t : tensor<2x4xf32>) outs(%ot : tensor<2xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  } -> tensor<2xf32>
  linalg.generic {indexing_maps = [#r, #r], iterator_types = ["parallel", "reduction"]}
      ins(%t2 : memref<2x4xf32>) outs(%o2 : memref<2x4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  }
  return %r : tensor<2xf32>
}

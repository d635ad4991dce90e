// RUN: dlc-opt %s --split-input-file --dlc-cpu-sparse-tile="vector-bits=256 vector-registers=16" 2>&1 | FileCheck %s
// RUN: dlc-opt %s --split-input-file --dlc-cpu-sparse-tile="vector-bits=512 vector-registers=32" 2>&1 | FileCheck %s --check-prefix=AVX512

// Eight rows in two groups of four over 43 pixels, 8-lane vectors and 16
// registers: blocks of 4 rows x 3 vectors (12 accumulators, 3 loads of x,
// one broadcast). The row loop reads its group's count of kept channels
// from the table; each step reads the next channel from it, loads that
// channel's 3 vectors of x, broadcasts the 4 rows' weights and issues 12
// fused multiply-adds. One full block of 24 pixels, then 19 left: 3
// vectors, the last masked to 3 lanes.
// With 32 registers of 16 lanes: 6 vectors would pass the pixels; 2
// vectors (32 pixels) and a masked block of 11.
// CHECK-LABEL: func.func @sparse
// CHECK: scf.for %[[N:[a-z0-9_]+]] = %c0{{.*}} to %c1{{.*}} step %c1
// CHECK:   scf.for %[[F:[a-z0-9_]+]] = %c0{{.*}} to %c8{{.*}} step %c4
// CHECK:     %[[CNT:.*]] = memref.load %arg2[%[[F]], %c0{{.*}}] : memref<8x3xi32>
// CHECK:     %[[K:.*]] = arith.index_cast %[[CNT]] : i32 to index
// CHECK:     scf.for %[[P:[a-z0-9_]+]] = %c0{{.*}} to %c24{{.*}} step %c24
// CHECK-COUNT-12: vector.load %arg3[%[[N]], %{{.*}}, %{{.*}}] : memref<1x8x43xf32>, vector<8xf32>
// CHECK:       %[[ACC:.*]]:12 = scf.for %[[J:[a-z0-9_]+]] = %c0{{.*}} to %[[K]] step %c1{{.*}} iter_args
// CHECK:         %[[E:.*]] = memref.load %arg2[%[[F]], %{{.*}}] : memref<8x3xi32>
// CHECK:         %[[C:.*]] = arith.index_cast %[[E]] : i32 to index
// CHECK:         vector.load %arg0[%[[N]], %[[C]], %[[P]]] : memref<1x4x43xf32>, vector<8xf32>
// CHECK-COUNT-2: vector.load %arg0[%[[N]], %[[C]], %{{.*}}] : memref<1x4x43xf32>, vector<8xf32>
// CHECK:         memref.load %arg1[%[[F]], %[[J]]] : memref<8x2xf32>
// CHECK:         vector.broadcast
// CHECK-COUNT-3: vector.fma
// CHECK:         memref.load %arg1[%{{.*}}, %[[J]]] : memref<8x2xf32>
// CHECK-COUNT-3: vector.fma
// CHECK:         scf.yield
// CHECK-COUNT-12: vector.store
// CHECK:     %[[M:.*]] = vector.constant_mask [3] : vector<8xi1>
// CHECK:     scf.for {{.*}} iter_args
// CHECK-COUNT-2: vector.load %arg0
// CHECK:         vector.maskedload %arg0[{{.*}}], %[[M]]
// CHECK:     vector.maskedstore
// CHECK-NOT: linalg.generic
// AVX512-LABEL: func.func @sparse
// AVX512: scf.for %{{.*}} = %c0{{.*}} to %c32{{.*}} step %c32
// AVX512: scf.for {{.*}} -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// AVX512: vector.constant_mask [11] : vector<16xi1>
#w = affine_map<(d0, d1, d2, d3) -> (d1, d2)>
#t = affine_map<(d0, d1, d2, d3) -> (d1, d2 + 1)>
#o = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
func.func @sparse(%x: memref<1x4x43xf32>, %w: memref<8x2xf32>, %t: memref<8x3xi32>, %out: memref<1x8x43xf32>) {
  linalg.generic {indexing_maps = [#w, #t, #o], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%w, %t : memref<8x2xf32>, memref<8x3xi32>) outs(%out : memref<1x8x43xf32>) attrs = {dlc.sparse_rows = 4 : i64} {
  ^bb0(%a: f32, %i: i32, %acc: f32):
    %n = linalg.index 0 : index
    %p = linalg.index 3 : index
    %c = arith.index_cast %i : i32 to index
    %v = memref.load %x[%n, %c, %p] : memref<1x4x43xf32>
    %m = arith.mulf %v, %a : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A workgroup's tile of rows that starts where no group may start (an
// offset not known to be a multiple of 4): row by row, each with its own
// table row. Pixels offset by the tile's first (p + s0) stay unit-stride;
// a dynamic pixel extent takes its last block under runtime masks.
// CHECK-LABEL: func.func @misaligned
// CHECK: scf.for %[[F:[a-z0-9_]+]] = %c0{{.*}} to %c8{{.*}} step %c1
// CHECK:   memref.load %{{.*}}[%[[F]], %c0{{.*}}]
// CHECK:   scf.if
// CHECK:     vector.create_mask
// CHECK:     vector.maskedload
// CHECK-NOT: linalg.generic
#w = affine_map<(d0, d1, d2) -> (d0, d2)>
#t = affine_map<(d0, d1, d2) -> (d0, d2 + 1)>
#o = affine_map<(d0, d1, d2) -> (0, d0, d1)>
func.func @misaligned(%x: memref<1x4x100xf32>, %wall: memref<16x2xf32>, %tall: memref<16x3xi32>, %oall: memref<1x16x100xf32>, %row: index, %col: index, %cols: index) {
  %w = memref.subview %wall[%row, 0] [8, 2] [1, 1] : memref<16x2xf32> to memref<8x2xf32, strided<[2, 1], offset: ?>>
  %t = memref.subview %tall[%row, 0] [8, 3] [1, 1] : memref<16x3xi32> to memref<8x3xi32, strided<[3, 1], offset: ?>>
  %out = memref.subview %oall[0, %row, %col] [1, 8, %cols] [1, 1, 1] : memref<1x16x100xf32> to memref<1x8x?xf32, strided<[1600, 100, 1], offset: ?>>
  linalg.generic {indexing_maps = [#w, #t, #o], iterator_types = ["parallel", "parallel", "reduction"]} ins(%w, %t : memref<8x2xf32, strided<[2, 1], offset: ?>>, memref<8x3xi32, strided<[3, 1], offset: ?>>) outs(%out : memref<1x8x?xf32, strided<[1600, 100, 1], offset: ?>>) attrs = {dlc.sparse_rows = 4 : i64} {
  ^bb0(%a: f32, %i: i32, %acc: f32):
    %p = linalg.index 1 : index
    %q = affine.apply affine_map<(d0)[s0] -> (d0 + s0)>(%p)[%col]
    %c = arith.index_cast %i : i32 to index
    %c0 = arith.constant 0 : index
    %v = memref.load %x[%c0, %c, %q] : memref<1x4x100xf32>
    %m = arith.mulf %a, %v : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A tile that starts at a multiple of 4 rows (8 x a workgroup id) keeps
// its groups of 4.
// CHECK-LABEL: func.func @aligned
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c8{{.*}} step %c4
#w = affine_map<(d0, d1, d2) -> (d0, d2)>
#t = affine_map<(d0, d1, d2) -> (d0, d2 + 1)>
#o = affine_map<(d0, d1, d2) -> (0, d0, d1)>
func.func @aligned(%x: memref<1x4x32xf32>, %wall: memref<16x2xf32>, %tall: memref<16x3xi32>, %oall: memref<1x16x32xf32>, %id: index) {
  %c8 = arith.constant 8 : index
  %row = arith.muli %id, %c8 : index
  %w = memref.subview %wall[%row, 0] [8, 2] [1, 1] : memref<16x2xf32> to memref<8x2xf32, strided<[2, 1], offset: ?>>
  %t = memref.subview %tall[%row, 0] [8, 3] [1, 1] : memref<16x3xi32> to memref<8x3xi32, strided<[3, 1], offset: ?>>
  %out = memref.subview %oall[0, %row, 0] [1, 8, 32] [1, 1, 1] : memref<1x16x32xf32> to memref<1x8x32xf32, strided<[512, 32, 1], offset: ?>>
  linalg.generic {indexing_maps = [#w, #t, #o], iterator_types = ["parallel", "parallel", "reduction"]} ins(%w, %t : memref<8x2xf32, strided<[2, 1], offset: ?>>, memref<8x3xi32, strided<[3, 1], offset: ?>>) outs(%out : memref<1x8x32xf32, strided<[512, 32, 1], offset: ?>>) attrs = {dlc.sparse_rows = 4 : i64} {
  ^bb0(%a: f32, %i: i32, %acc: f32):
    %p = linalg.index 1 : index
    %c = arith.index_cast %i : i32 to index
    %c0 = arith.constant 0 : index
    %v = memref.load %x[%c0, %c, %p] : memref<1x4x32xf32>
    %m = arith.mulf %a, %v : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Not the form: x read across pixels at stride 2. Left to the scalar
// loops, with a remark.
// CHECK: remark: dlc-cpu-sparse-tile: not the form of a sparse convolution; left to the scalar loops
// CHECK-LABEL: func.func @strided
// CHECK: linalg.generic
#w = affine_map<(d0, d1, d2) -> (d0, d2)>
#t = affine_map<(d0, d1, d2) -> (d0, d2 + 1)>
#o = affine_map<(d0, d1, d2) -> (0, d0, d1)>
func.func @strided(%x: memref<1x4x64xf32>, %w: memref<8x2xf32>, %t: memref<8x3xi32>, %out: memref<1x8x32xf32>) {
  linalg.generic {indexing_maps = [#w, #t, #o], iterator_types = ["parallel", "parallel", "reduction"]} ins(%w, %t : memref<8x2xf32>, memref<8x3xi32>) outs(%out : memref<1x8x32xf32>) attrs = {dlc.sparse_rows = 4 : i64} {
  ^bb0(%a: f32, %i: i32, %acc: f32):
    %p = linalg.index 1 : index
    %c2 = arith.constant 2 : index
    %q = arith.muli %p, %c2 : index
    %c = arith.index_cast %i : i32 to index
    %c0 = arith.constant 0 : index
    %v = memref.load %x[%c0, %c, %q] : memref<1x4x64xf32>
    %m = arith.mulf %a, %v : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A matrix product's form: groups of 8 columns (one 8-lane vector), the
// row loop m: 3 rows in a block. Each step reads the group's next kept
// reduction index from the table, loads the group's compressed weights at
// that step (one vector, contiguous) and broadcasts x at each row.
// With 16 lanes the group is half a vector: left to the scalar loops.
// CHECK-LABEL: func.func @columns
// CHECK: scf.for %[[G:[a-z0-9_]+]] = %c0{{.*}} to %c2{{.*}} step %c1
// CHECK:   %[[CNT:.*]] = memref.load %arg2[%[[G]], %c0{{.*}}] : memref<2x3xi32>
// CHECK:   %[[K:.*]] = arith.index_cast %[[CNT]] : i32 to index
// CHECK-COUNT-3: vector.load %arg3
// CHECK:   %[[ACC:.*]]:3 = scf.for %[[J:[a-z0-9_]+]] = %c0{{.*}} to %[[K]] step %c1{{.*}} iter_args
// CHECK:     vector.load %arg1[%[[G]], %[[J]], %c0{{.*}}] : memref<2x2x8xf32>, vector<8xf32>
// CHECK:     memref.load %arg0[%{{.*}}, %{{.*}}] : memref<3x4xf32>
// CHECK:     vector.broadcast
// CHECK:     vector.fma
// CHECK-COUNT-2: vector.fma
// CHECK:   vector.store %[[ACC]]#0, %arg3
// AVX512: remark: dlc-cpu-sparse-tile: a workgroup's columns are not whole groups of whole vectors; left to the scalar loops
// AVX512-LABEL: func.func @columns
// AVX512: linalg.generic
#w = affine_map<(d0, d1, d2, d3) -> (d1, d3, d2)>
#t = affine_map<(d0, d1, d2, d3) -> (d1, d3 + 1)>
#o = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
func.func @columns(%x: memref<3x4xf32>, %w: memref<2x2x8xf32>, %t: memref<2x3xi32>, %out: memref<3x2x8xf32>) {
  linalg.generic {indexing_maps = [#w, #t, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%w, %t : memref<2x2x8xf32>, memref<2x3xi32>) outs(%out : memref<3x2x8xf32>) attrs = {dlc.sparse_rows = 8 : i64} {
  ^bb0(%a: f32, %i: i32, %acc: f32):
    %m = linalg.index 0 : index
    %k = arith.index_cast %i : i32 to index
    %v = memref.load %x[%m, %k] : memref<3x4xf32>
    %p = arith.mulf %v, %a : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// One row (a matrix-vector product): its fused multiply-adds would chain
// on one accumulator, so steps go 4 at a time into 4 accumulators, summed
// after; the steps left over follow one by one.
// CHECK-LABEL: func.func @one_row
// CHECK: %[[ALL:.*]]:4 = scf.for %{{.*}} = %c0{{.*}} to %{{.*}} step %c4{{.*}} iter_args
// CHECK-COUNT-4: vector.fma
// CHECK: %[[S1:.*]] = arith.addf %[[ALL]]#0, %[[ALL]]#1
// CHECK: %[[S2:.*]] = arith.addf %[[S1]], %[[ALL]]#2
// CHECK: %[[S3:.*]] = arith.addf %[[S2]], %[[ALL]]#3
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c1{{.*}} iter_args(%{{.*}} = %[[S3]])
// CHECK:   vector.fma
#w = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
#t = affine_map<(d0, d1, d2) -> (d0, d2 + 1)>
#o = affine_map<(d0, d1, d2) -> (0, d0, d1)>
func.func @one_row(%x: memref<1x4xf32>, %w: memref<2x2x8xf32>, %t: memref<2x3xi32>, %out: memref<1x2x8xf32>) {
  linalg.generic {indexing_maps = [#w, #t, #o], iterator_types = ["parallel", "parallel", "reduction"]} ins(%w, %t : memref<2x2x8xf32>, memref<2x3xi32>) outs(%out : memref<1x2x8xf32>) attrs = {dlc.sparse_rows = 8 : i64} {
  ^bb0(%a: f32, %i: i32, %acc: f32):
    %c0 = arith.constant 0 : index
    %k = arith.index_cast %i : i32 to index
    %v = memref.load %x[%c0, %k] : memref<1x4xf32>
    %p = arith.mulf %v, %a : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A 3x3 convolution's form: x flattened per image, read at the table's
// offset (channel and tap) + y * 6 + x. The output's rows y are an outer
// loop; each row's 4 pixels are one masked vector.
// CHECK-LABEL: func.func @window
// CHECK: scf.for %[[N:[a-z0-9_]+]] =
// CHECK:   scf.for %[[Y:[a-z0-9_]+]] = %c0{{.*}} to %c4{{.*}} step %c1
// CHECK:     scf.for %[[F:[a-z0-9_]+]] = %c0{{.*}} to %c4{{.*}} step %c4
// CHECK:       %[[M:.*]] = vector.constant_mask [4] : vector<8xi1>
// CHECK:       scf.for %[[J:[a-z0-9_]+]] = %c0{{.*}} to %{{.*}} step %c1{{.*}} iter_args
// CHECK:         %[[E:.*]] = memref.load %arg2[%[[F]], %{{.*}}] : memref<4x2xi32>
// CHECK:         %[[K:.*]] = arith.index_cast %[[E]] : i32 to index
// CHECK:         %[[R:.*]] = arith.muli %[[Y]], %c6{{.*}} : index
// CHECK:         %[[S:.*]] = arith.addi %[[K]], %[[R]] : index
// CHECK:         %[[A:.*]] = arith.addi %[[S]], %c0{{.*}} : index
// CHECK:         vector.maskedload %arg0[%[[N]], %[[A]]], %[[M]]
// CHECK-COUNT-4: vector.fma
#w = affine_map<(d0, d1, d2, d3, d4) -> (d1, d2)>
#t = affine_map<(d0, d1, d2, d3, d4) -> (d1, d2 + 1)>
#o = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
func.func @window(%x: memref<1x144xf32>, %w: memref<4x1xf32>, %t: memref<4x2xi32>, %out: memref<1x4x4x4xf32>) {
  linalg.generic {indexing_maps = [#w, #t, #o], iterator_types = ["parallel", "parallel", "reduction", "parallel", "parallel"]} ins(%w, %t : memref<4x1xf32>, memref<4x2xi32>) outs(%out : memref<1x4x4x4xf32>) attrs = {dlc.sparse_rows = 4 : i64} {
  ^bb0(%a: f32, %i: i32, %acc: f32):
    %n = linalg.index 0 : index
    %y = linalg.index 3 : index
    %xi = linalg.index 4 : index
    %e = arith.index_cast %i : i32 to index
    %c6 = arith.constant 6 : index
    %r = arith.muli %y, %c6 : index
    %s = arith.addi %e, %r : index
    %at = arith.addi %s, %xi : index
    %v = memref.load %x[%n, %at] : memref<1x144xf32>
    %p = arith.mulf %v, %a : f32
    %sum = arith.addf %acc, %p : f32
    linalg.yield %sum : f32
  }
  return
}

// -----

// One pixel (a squeeze-and-excite layer's pooled channels): its loop of
// one trip folded to index 0 in x's and the output's indices; one vector
// masked to one lane.
// CHECK-LABEL: func.func @one_pixel
// CHECK: %[[M:.*]] = vector.constant_mask [1] : vector<8xi1>
// CHECK: scf.for
// CHECK:   vector.maskedload %arg0[%{{.*}}, %{{.*}}, %{{.*}}], %[[M]]
// CHECK-NOT: remark
#w = affine_map<(d0, d1, d2, d3) -> (d1, d2)>
#t = affine_map<(d0, d1, d2, d3) -> (d1, d2 + 1)>
#o = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
func.func @one_pixel(%x: memref<1x32x1xf32>, %w: memref<8x7xf32>, %t: memref<8x8xi32>, %out: memref<1x8x1xf32>) {
  %c0 = arith.constant 0 : index
  linalg.generic {indexing_maps = [#w, #t, #o], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%w, %t : memref<8x7xf32>, memref<8x8xi32>) outs(%out : memref<1x8x1xf32>) attrs = {dlc.sparse_rows = 4 : i64} {
  ^bb0(%in: f32, %in_1: i32, %o: f32):
    %0 = arith.index_cast %in_1 : i32 to index
    %1 = memref.load %x[%c0, %0, %c0] : memref<1x32x1xf32>
    %2 = arith.mulf %1, %in fastmath<reassoc,contract> : f32
    %3 = arith.addf %o, %2 fastmath<reassoc,contract> : f32
    linalg.yield %3 : f32
  }
  return
}

// RUN: dlc-opt %s --split-input-file --dlc-gpu-promote-shared | FileCheck %s
// RUN: dlc-opt %s --split-input-file --dlc-gpu-promote-shared=budget=128 | FileCheck %s --check-prefix=SMALL
// RUN: not dlc-opt %s --split-input-file --dlc-gpu-promote-shared=memory-space=@@ 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: error: invalid memory space '@@'

// A matmul tile: A's rows are shared by the 48 threads of a row, B's columns
// by the 2 rows; K = 128 is stepped through in 32s to stay in the budget.
// CHECK-LABEL: func.func @matmul
// CHECK: scf.forall (%[[TI:.*]], %[[TJ:.*]]) in (2, 48)
// CHECK-DAG: %[[A:.*]] = memref.alloc() : memref<2x32xf32, #gpu.address_space<workgroup>>
// CHECK-DAG: %[[B:.*]] = memref.alloc() : memref<32x48xf32, #gpu.address_space<workgroup>>
// CHECK: linalg.fill
// CHECK: scf.for %[[K:.*]] = %c0{{.*}} to %c128{{.*}} step %c32
// The 96 threads fill 2x32 elements of A, then 32x48 of B, at step K.
// CHECK: scf.for %{{.*}} = %{{.*}} to %c64{{.*}} step %c96
// CHECK: memref.load
// CHECK: memref.store %{{.*}}, %[[A]]
// CHECK: scf.for %{{.*}} = %{{.*}} to %c1536{{.*}} step %c96
// CHECK: memref.store %{{.*}}, %[[B]]
// CHECK: gpu.barrier
// CHECK: %[[AT:.*]] = memref.subview %[[A]][%[[TI]], 0] [1, 32] [1, 1]
// CHECK: %[[BT:.*]] = memref.subview %[[B]][0, %[[TJ]]] [32, 1] [1, 1]
// CHECK: linalg.matmul ins(%[[AT]], %[[BT]] :
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: linalg.matmul

// Under a 128-byte budget B (reused twice) stays in global memory and A
// (reused 48 times) is staged in steps of 16.
// SMALL-LABEL: func.func @matmul
// SMALL: memref.alloc() : memref<2x16xf32, #gpu.address_space<workgroup>>
// SMALL-NOT: memref.alloc
// SMALL: scf.for %[[K:.*]] = %c0{{.*}} to %c128{{.*}} step %c16
// SMALL: %[[BT:.*]] = memref.subview %{{.*}}[%[[K]], 0] [16, 1] [1, 1] : memref<128x1xf32
// SMALL: linalg.matmul ins(%{{.*}}, %[[BT]] :
func.func @matmul(%a: memref<64x128xf32>, %b: memref<128x96xf32>, %c: memref<64x96xf32>) attributes {dlc.kernel} {
  %zero = arith.constant 0.0 : f32
  scf.forall (%i, %j) = (0, 0) to (64, 96) step (2, 48) {
    %aw = memref.subview %a[%i, 0] [2, 128] [1, 1] : memref<64x128xf32> to memref<2x128xf32, strided<[128, 1], offset: ?>>
    %bw = memref.subview %b[0, %j] [128, 48] [1, 1] : memref<128x96xf32> to memref<128x48xf32, strided<[96, 1], offset: ?>>
    %cw = memref.subview %c[%i, %j] [2, 48] [1, 1] : memref<64x96xf32> to memref<2x48xf32, strided<[96, 1], offset: ?>>
    scf.forall (%ti, %tj) in (2, 48) {
      %at = memref.subview %aw[%ti, 0] [1, 128] [1, 1] : memref<2x128xf32, strided<[128, 1], offset: ?>> to memref<1x128xf32, strided<[128, 1], offset: ?>>
      %bt = memref.subview %bw[0, %tj] [128, 1] [1, 1] : memref<128x48xf32, strided<[96, 1], offset: ?>> to memref<128x1xf32, strided<[96, 1], offset: ?>>
      %ct = memref.subview %cw[%ti, %tj] [1, 1] [1, 1] : memref<2x48xf32, strided<[96, 1], offset: ?>> to memref<1x1xf32, strided<[96, 1], offset: ?>>
      linalg.fill ins(%zero : f32) outs(%ct : memref<1x1xf32, strided<[96, 1], offset: ?>>)
      linalg.matmul ins(%at, %bt : memref<1x128xf32, strided<[128, 1], offset: ?>>, memref<128x1xf32, strided<[96, 1], offset: ?>>) outs(%ct : memref<1x1xf32, strided<[96, 1], offset: ?>>)
    } {mapping = [#gpu.thread<y>, #gpu.thread<x>]}
  } {mapping = [#gpu.block<y>, #gpu.block<x>]}
  return
}

// -----

// A padded 3x3 convolution: each thread gathers its 4x3x3 window (with the
// padding) into private memory. The workgroup's 2x8 threads gather the
// union of their windows, 4x4x10, into shared memory instead; the filter
// slice, the same for every thread, is staged as well.
// CHECK-LABEL: func.func @padded_conv
// CHECK: scf.forall (%{{.*}}, %[[OH:.*]]) = (0, 0) to (8, 8) step (1, 2)
// CHECK: scf.forall (%[[TH:.*]], %[[TW:.*]]) in (2, 8)
// CHECK-DAG: %[[X:.*]] = memref.alloc() : memref<1x4x4x10xf32, #gpu.address_space<workgroup>>
// CHECK-DAG: %[[W:.*]] = memref.alloc() : memref<1x4x3x3xf32, #gpu.address_space<workgroup>>
// CHECK-NOT: memref.alloca
// CHECK-NOT: linalg.generic
// The gather's body, for thread 0 at each footprint element.
// CHECK: scf.for %{{.*}} = %{{.*}} to %c160{{.*}} step %c16
// CHECK: affine.apply #{{.*}}(%[[OH]], %c0{{.*}})
// CHECK: arith.select
// CHECK: memref.store %{{.*}}, %[[X]]
// CHECK: scf.for %{{.*}} = %{{.*}} to %c36{{.*}} step %c16
// CHECK: memref.store %{{.*}}, %[[W]]
// CHECK: gpu.barrier
// CHECK: %[[XT:.*]] = memref.subview %[[X]][0, 0, %[[TH]], %[[TW]]] [1, 4, 3, 3] [1, 1, 1, 1]
// CHECK: linalg.conv_2d_nchw_fchw {{.*}} ins(%[[XT]], %{{.*}} :
// CHECK-NOT: gpu.barrier
func.func @padded_conv(%x: memref<1x4x8x8xf32>, %w: memref<8x4x3x3xf32>, %y: memref<1x8x8x8xf32>) attributes {dlc.kernel} {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.forall (%f, %oh) = (0, 0) to (8, 8) step (1, 2) {
    %ww = memref.subview %w[%f, 0, 0, 0] [1, 4, 3, 3] [1, 1, 1, 1] : memref<8x4x3x3xf32> to memref<1x4x3x3xf32, strided<[36, 9, 3, 1], offset: ?>>
    %yw = memref.subview %y[0, %f, %oh, 0] [1, 1, 2, 8] [1, 1, 1, 1] : memref<1x8x8x8xf32> to memref<1x1x2x8xf32, strided<[512, 64, 8, 1], offset: ?>>
    scf.forall (%th, %tw) in (2, 8) {
      %window = memref.alloca() : memref<1x4x3x3xf32>
      linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%window : memref<1x4x3x3xf32>) {
      ^bb0(%out: f32):
        %c = linalg.index 1 : index
        %i2 = linalg.index 2 : index
        %h = affine.apply affine_map<(d0, d1)[s0] -> (d0 + d1 + s0 - 1)>(%oh, %th)[%i2]
        %i3 = linalg.index 3 : index
        %w3 = affine.apply affine_map<(d0)[s0] -> (d0 + s0 - 1)>(%tw)[%i3]
        %hge = arith.cmpi sge, %h, %c0 : index
        %hlt = arith.cmpi slt, %h, %c8 : index
        %wge = arith.cmpi sge, %w3, %c0 : index
        %wlt = arith.cmpi slt, %w3, %c8 : index
        %in1 = arith.andi %hge, %hlt : i1
        %in2 = arith.andi %wge, %wlt : i1
        %in = arith.andi %in1, %in2 : i1
        %hc = arith.select %in, %h, %c0 : index
        %wc = arith.select %in, %w3, %c0 : index
        %v = memref.load %x[%c0, %c, %hc, %wc] : memref<1x4x8x8xf32>
        %r = arith.select %in, %v, %zero : f32
        linalg.yield %r : f32
      }
      %yt = memref.subview %yw[0, 0, %th, %tw] [1, 1, 1, 1] [1, 1, 1, 1] : memref<1x1x2x8xf32, strided<[512, 64, 8, 1], offset: ?>> to memref<1x1x1x1xf32, strided<[512, 64, 8, 1], offset: ?>>
      linalg.fill ins(%zero : f32) outs(%yt : memref<1x1x1x1xf32, strided<[512, 64, 8, 1], offset: ?>>)
      linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%window, %ww : memref<1x4x3x3xf32>, memref<1x4x3x3xf32, strided<[36, 9, 3, 1], offset: ?>>) outs(%yt : memref<1x1x1x1xf32, strided<[512, 64, 8, 1], offset: ?>>)
    } {mapping = [#gpu.thread<y>, #gpu.thread<x>]}
  } {mapping = [#gpu.block<y>, #gpu.block<x>]}
  return
}

// -----

// Row sums: every thread reads a row no other thread reads (reuse 1), so
// nothing is staged.
// CHECK-LABEL: func.func @no_reuse
// CHECK-NOT: memref.alloc
// CHECK-NOT: gpu.barrier
// CHECK: linalg.generic
// CHECK-NOT: gpu.barrier
func.func @no_reuse(%a: memref<64x128xf32>, %s: memref<64xf32>) attributes {dlc.kernel} {
  scf.forall (%i) = (0) to (64) step (32) {
    %aw = memref.subview %a[%i, 0] [32, 128] [1, 1] : memref<64x128xf32> to memref<32x128xf32, strided<[128, 1], offset: ?>>
    %sw = memref.subview %s[%i] [32] [1] : memref<64xf32> to memref<32xf32, strided<[1], offset: ?>>
    scf.forall (%t) in (32) {
      %at = memref.subview %aw[%t, 0] [1, 128] [1, 1] : memref<32x128xf32, strided<[128, 1], offset: ?>> to memref<1x128xf32, strided<[128, 1], offset: ?>>
      %st = memref.subview %sw[%t] [1] [1] : memref<32xf32, strided<[1], offset: ?>> to memref<1xf32, strided<[1], offset: ?>>
      linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%at : memref<1x128xf32, strided<[128, 1], offset: ?>>) outs(%st : memref<1xf32, strided<[1], offset: ?>>) {
      ^bb0(%in: f32, %out: f32):
        %r = arith.addf %in, %out : f32
        linalg.yield %r : f32
      }
    } {mapping = [#gpu.thread<x>]}
  } {mapping = [#gpu.block<x>]}
  return
}

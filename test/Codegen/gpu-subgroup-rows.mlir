// RUN: dlc-opt %s --split-input-file --dlc-gpu-subgroup-rows | FileCheck %s
// RUN: not dlc-opt %s --split-input-file --dlc-gpu-subgroup-rows=subgroup-size=4 2>&1 | FileCheck %s --check-prefix=SIZE

#row = affine_map<(d0, d1) -> (d0, d1)>
#red = affine_map<(d0, d1) -> (d0)>

// Softmax's sum after tiling with 4 lanes per row of 16: the lane's part of
// the row (4 elements from 4 * lane) is reduced, the exp that writes the
// private row computes only that part, then two xor shuffles (offsets 2,
// 1) add the lanes' sums. The max reduction's init is no identity (1.0):
// it stays whole.
// CHECK-LABEL: func.func @rows
// CHECK: scf.forall (%[[ROW:.*]], %[[LANE:.*]]) in (2, 4)
// CHECK:   linalg.generic {{.*}} ins(%{{.*}} : memref<1x16xf32
// CHECK:     arith.maximumf
// CHECK-NOT: gpu.shuffle
// CHECK:   %[[S1:.*]] = affine.apply #{{.*}}(%[[LANE]])
// CHECK:   %[[X:.*]] = memref.subview %{{.*}}[0, %[[S1]]] [1, 4] [1, 1]
// CHECK:   %[[E:.*]] = memref.subview %[[PRIV:.*]][0, %[[S1]]] [1, 4] [1, 1]
// CHECK:   linalg.generic {{.*}} ins(%[[X]], %{{.*}} : {{.*}}) outs(%[[E]] :
// CHECK:     math.exp
// CHECK:   %[[P:.*]] = memref.subview %[[PRIV]][0, %{{.*}}] [1, 4] [1, 1]
// CHECK:   linalg.generic {{.*}} ins(%[[P]] : {{.*}}) outs(%[[SUM:.*]] :
// CHECK:     arith.addf
// CHECK:   %[[V:.*]] = memref.load %[[SUM]][%c0{{.*}}]
// CHECK:   %[[O1:.*]], %{{.*}} = gpu.shuffle  xor %[[V]], %c2_i32, %c32_i32 : f32
// CHECK:   %[[A1:.*]] = arith.addf %[[V]], %[[O1]] : f32
// CHECK:   %[[O2:.*]], %{{.*}} = gpu.shuffle  xor %[[A1]], %c1_i32, %c32_i32 : f32
// CHECK:   %[[A2:.*]] = arith.addf %[[A1]], %[[O2]] : f32
// CHECK:   memref.store %[[A2]], %[[SUM]][%c0{{.*}}]
// SIZE: subgroup lanes must be a power of two of at most the subgroup size 4, not 8
func.func @rows(%x: memref<2x16xf32>) attributes {dlc.kernel, dlc.subgroup_lanes = 4 : i64} {
  %ninf = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  scf.forall (%r, %l) in (2, 4) {
    %row = memref.subview %x[%r, 0] [1, 16] [1, 1] : memref<2x16xf32> to memref<1x16xf32, strided<[16, 1], offset: ?>>
    %max = memref.alloca() : memref<1xf32>
    linalg.fill ins(%ninf : f32) outs(%max : memref<1xf32>)
    linalg.generic {indexing_maps = [#row, #red], iterator_types = ["parallel", "reduction"]}
        ins(%row : memref<1x16xf32, strided<[16, 1], offset: ?>>) outs(%max : memref<1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %m = arith.maximumf %out, %in : f32
      linalg.yield %m : f32
    }
    %e = memref.alloca() : memref<1x16xf32>
    linalg.generic {indexing_maps = [#row, #red, #row], iterator_types = ["parallel", "parallel"]}
        ins(%row, %max : memref<1x16xf32, strided<[16, 1], offset: ?>>, memref<1xf32>) outs(%e : memref<1x16xf32>) {
    ^bb0(%in: f32, %m: f32, %out: f32):
      %d = arith.subf %in, %m : f32
      %v = math.exp %d : f32
      linalg.yield %v : f32
    }
    %sum = memref.alloca() : memref<1xf32>
    linalg.fill ins(%zero : f32) outs(%sum : memref<1xf32>)
    linalg.generic {indexing_maps = [#row, #red], iterator_types = ["parallel", "reduction"]}
        ins(%e : memref<1x16xf32>) outs(%sum : memref<1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %s = arith.addf %out, %in : f32
      linalg.yield %s : f32
    }
  } {mapping = [#gpu.thread<y>, #gpu.thread<x>]}
  return
}

// -----

#row = affine_map<(d0, d1) -> (d0, d1)>
#red = affine_map<(d0, d1) -> (d0)>

// Left whole: rows that differ between lanes (each lane reduces rows of
// its own, as when the lanes split the rows rather than the row), a body
// that is no combination of `out` with the input (out used twice), and an
// output copied from a filled buffer that another op wrote in between
// (through a view).
// CHECK-LABEL: func.func @kept
// CHECK-NOT: gpu.shuffle
func.func @kept(%x: memref<8x16xf32>) attributes {dlc.kernel, dlc.subgroup_lanes = 4 : i64} {
  %zero = arith.constant 0.0 : f32
  scf.forall (%l) in (4) {
    %r = affine.apply affine_map<(d0) -> (d0 * 2)>(%l)
    %rows = memref.subview %x[%r, 0] [2, 16] [1, 1] : memref<8x16xf32> to memref<2x16xf32, strided<[16, 1], offset: ?>>
    %sum = memref.alloca() : memref<2xf32>
    linalg.fill ins(%zero : f32) outs(%sum : memref<2xf32>)
    linalg.generic {indexing_maps = [#row, #red], iterator_types = ["parallel", "reduction"]}
        ins(%rows : memref<2x16xf32, strided<[16, 1], offset: ?>>) outs(%sum : memref<2xf32>) {
    ^bb0(%in: f32, %out: f32):
      %s = arith.addf %out, %in : f32
      linalg.yield %s : f32
    }
    %row = memref.subview %x[0, 0] [1, 16] [1, 1] : memref<8x16xf32> to memref<1x16xf32, strided<[16, 1]>>
    %acc = memref.alloca() : memref<1xf32>
    linalg.fill ins(%zero : f32) outs(%acc : memref<1xf32>)
    linalg.generic {indexing_maps = [#row, #red], iterator_types = ["parallel", "reduction"]}
        ins(%row : memref<1x16xf32, strided<[16, 1]>>) outs(%acc : memref<1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %p = arith.mulf %out, %in : f32
      %s = arith.addf %out, %p : f32
      linalg.yield %s : f32
    }
    %base = memref.alloca() : memref<1xf32>
    linalg.fill ins(%zero : f32) outs(%base : memref<1xf32>)
    %view = memref.subview %base[0] [1] [1] : memref<1xf32> to memref<1xf32, strided<[1]>>
    linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
        ins(%row : memref<1x16xf32, strided<[16, 1]>>) outs(%view : memref<1xf32, strided<[1]>>) {
    ^bb0(%in: f32, %out: f32):
      %s = arith.addf %out, %in : f32
      linalg.yield %s : f32
    }
    %copy = memref.alloca() : memref<1xf32>
    linalg.copy ins(%base : memref<1xf32>) outs(%copy : memref<1xf32>)
    linalg.generic {indexing_maps = [#row, #red], iterator_types = ["parallel", "reduction"]}
        ins(%row : memref<1x16xf32, strided<[16, 1]>>) outs(%copy : memref<1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %s = arith.addf %out, %in : f32
      linalg.yield %s : f32
    }
  } {mapping = [#gpu.thread<x>]}
  return
}

// -----

// The lanes must fit a subgroup of the declared size.
func.func @too_many_lanes() attributes {dlc.kernel, dlc.subgroup_lanes = 8 : i64} {
  return
}

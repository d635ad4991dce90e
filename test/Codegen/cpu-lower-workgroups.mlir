// RUN: dlc-opt %s --split-input-file --verify-diagnostics --dlc-cpu-lower-workgroups | FileCheck %s

// The workgroup loop becomes a loop over [begin, end), delinearized with x
// (the innermost forall dimension) fastest.
// CHECK-LABEL: func.func @grid
// CHECK-SAME: (%[[A:.*]]: memref<8x6xf32>, %[[BEGIN:.*]]: index, %[[END:.*]]: index)
// CHECK: scf.for %[[ID:.*]] = %[[BEGIN]] to %[[END]]
// CHECK:   %[[IJ:.*]]:2 = affine.delinearize_index %[[ID]] into (4, 3)
// CHECK:   arith.muli %[[IJ]]#0
// CHECK:   arith.muli %[[IJ]]#1
// CHECK-NOT: scf.forall
func.func @grid(%a: memref<8x6xf32>) attributes {dlc.kernel, dlc.grid = array<i64: 3, 4, 1>} {
  %c = arith.constant 1.0 : f32
  scf.forall (%i, %j) = (0, 0) to (8, 6) step (2, 2) {
    memref.store %c, %a[%i, %j] : memref<8x6xf32>
  }
  return
}

// -----

// expected-error @below {{a kernel must have at most one workgroup loop}}
func.func @two(%a: memref<8xf32>) attributes {dlc.kernel} {
  %c = arith.constant 1.0 : f32
  scf.forall (%i) in (8) {
    memref.store %c, %a[%i] : memref<8xf32>
  }
  scf.forall (%i) in (8) {
    memref.store %c, %a[%i] : memref<8xf32>
  }
  return
}

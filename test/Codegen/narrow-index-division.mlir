// RUN: dlc-opt %s --dlc-narrow-index-division | FileCheck %s

// Index divisions and remainders (of every kind) compute in i32 between
// casts: unsigned ones zero-extend, signed ones sign-extend. Other index
// arithmetic and divisions of other types stay as they are.
// CHECK-LABEL: func.func @narrowed
// CHECK-SAME: (%[[A:.*]]: index, %[[B:.*]]: index, %[[X:.*]]: i64)
// CHECK: %[[A1:.*]] = arith.index_cast %[[A]] : index to i32
// CHECK: %[[FD:.*]] = arith.floordivsi %[[A1]], %{{.*}} : i32
// CHECK: arith.index_cast %[[FD]] : i32 to index
// CHECK: arith.remsi %{{.*}}, %{{.*}} : i32
// CHECK: arith.ceildivsi %{{.*}}, %{{.*}} : i32
// CHECK: arith.divsi %{{.*}}, %{{.*}} : i32
// CHECK: %[[B1:.*]] = arith.index_castui %[[B]] : index to i32
// CHECK: %[[DU:.*]] = arith.divui %[[B1]], %{{.*}} : i32
// CHECK: arith.index_castui %[[DU]] : i32 to index
// CHECK: arith.remui %{{.*}}, %{{.*}} : i32
// CHECK: arith.ceildivui %{{.*}}, %{{.*}} : i32
// CHECK: arith.muli %[[A]], %[[B]] : index
// CHECK: arith.divsi %[[X]], %{{.*}} : i64
func.func @narrowed(%a: index, %b: index, %x: i64) -> (index, index, index, index, index, index, index, index, i64) {
  %c56 = arith.constant 56 : index
  %c7 = arith.constant 7 : i64
  %0 = arith.floordivsi %a, %c56 : index
  %1 = arith.remsi %a, %c56 : index
  %2 = arith.ceildivsi %a, %c56 : index
  %3 = arith.divsi %a, %c56 : index
  %4 = arith.divui %b, %c56 : index
  %5 = arith.remui %b, %c56 : index
  %6 = arith.ceildivui %b, %c56 : index
  %7 = arith.muli %a, %b : index
  %8 = arith.divsi %x, %c7 : i64
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : index, index, index, index, index, index, index, index, i64
}

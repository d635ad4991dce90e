// RUN: dlc-opt %s --split-input-file --verify-diagnostics --dlc-cpu-scratch --cse | FileCheck %s

// Temporaries in program order, each 64-byte aligned (100 bytes at 0,
// then 64 at 128); the deallocations go; the kernel takes the scratch
// last, its size rounded up to 64 bytes, marked noalias (it is the
// thread's own: LLVM vectorizes copies into it only knowing that).
// CHECK-LABEL: func.func @two
// CHECK-SAME: (%{{.*}}: memref<4xf32>, %{{.*}}: index, %{{.*}}: index, %[[S:[a-z0-9]+]]: memref<192xi8> {llvm.noalias})
// CHECK-SAME: dlc.scratch_size = 192 : i64
// CHECK: %[[A:.*]] = arith.constant 0 : index
// CHECK-NEXT: memref.view %[[S]][%[[A]]][] : memref<192xi8> to memref<25xf32>
// CHECK-NEXT: %[[B:.*]] = arith.constant 128 : index
// CHECK-NEXT: memref.view %[[S]][%[[B]]][] : memref<192xi8> to memref<16xf32>
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.dealloc
func.func @two(%out: memref<4xf32>, %b: index, %e: index) attributes {dlc.kernel} {
  %c0 = arith.constant 0 : index
  %a = memref.alloc() {alignment = 64 : i64} : memref<25xf32>
  %t = memref.alloc() {alignment = 64 : i64} : memref<16xf32>
  %x = memref.load %a[%c0] : memref<25xf32>
  memref.store %x, %t[%c0] : memref<16xf32>
  memref.dealloc %a : memref<25xf32>
  memref.dealloc %t : memref<16xf32>
  return
}

// -----

// The branches of an scf.if share their offsets (one runs); what follows
// the if starts after the larger branch. A loop body's temporary has one
// place, reused every iteration.
// CHECK-LABEL: func.func @branches
// CHECK-SAME: %[[S:[a-z0-9]+]]: memref<384xi8>
// CHECK: %[[A:.*]] = arith.constant 0 : index
// CHECK: scf.if
// CHECK-NEXT: memref.view %[[S]][%[[A]]][] : memref<384xi8> to memref<64xf32>
// CHECK: } else {
// CHECK-NEXT: memref.view %[[S]][%[[A]]][] : memref<384xi8> to memref<32xf32>
// CHECK: scf.for
// CHECK-NEXT: %[[L:.*]] = arith.constant 256 : index
// CHECK-NEXT: memref.view %[[S]][%[[L]]][] : memref<384xi8> to memref<32xf32>
func.func @branches(%out: memref<4xf32>, %cond: i1, %b: index, %e: index) attributes {dlc.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 1.0 : f32
  scf.if %cond {
    %a = memref.alloc() : memref<64xf32>
    memref.store %f, %a[%c0] : memref<64xf32>
    memref.dealloc %a : memref<64xf32>
  } else {
    %a = memref.alloc() : memref<32xf32>
    memref.store %f, %a[%c0] : memref<32xf32>
    memref.dealloc %a : memref<32xf32>
  }
  scf.for %i = %b to %e step %c1 {
    %t = memref.alloc() : memref<32xf32>
    memref.store %f, %t[%c0] : memref<32xf32>
    memref.dealloc %t : memref<32xf32>
  }
  return
}

// -----

// No heap temporaries: no scratch.
// CHECK-LABEL: func.func @none
// CHECK-SAME: (%{{.*}}: memref<4xf32>, %{{.*}}: index, %{{.*}}: index)
// CHECK-NOT: dlc.scratch_size
func.func @none(%out: memref<4xf32>, %b: index, %e: index) attributes {dlc.kernel} {
  return
}

// -----

func.func @escapes(%out: memref<4xf32>, %b: index, %e: index) attributes {dlc.kernel} {
  %c1 = arith.constant 1 : index
  %init = memref.alloca() : memref<8xf32>
  %r = scf.for %i = %b to %e step %c1 iter_args(%buf = %init) -> memref<8xf32> {
    // expected-error @below {{a kernel temporary outlives the loop iteration that allocates it}}
    %t = memref.alloc() : memref<8xf32>
    scf.yield %t : memref<8xf32>
  }
  return
}

// -----

func.func @dynamic(%out: memref<4xf32>, %n: index, %b: index, %e: index) attributes {dlc.kernel} {
  // expected-error @below {{a kernel temporary in scratch memory must have a static shape}}
  %t = memref.alloc(%n) : memref<?xf32>
  return
}

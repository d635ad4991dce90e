// RUN: dlc-opt %s --split-input-file --verify-diagnostics --dlc-cpu-kernel-entry | FileCheck %s

// CHECK: llvm.func @k(%[[BINDINGS:.*]]: !llvm.ptr, %[[BEGIN:.*]]: i32, %[[END:.*]]: i32, %{{.*}}: !llvm.ptr)
// CHECK: %[[S0:.*]] = llvm.getelementptr %[[BINDINGS]][0]
// CHECK: %[[P0:.*]] = llvm.load %[[S0]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[S1:.*]] = llvm.getelementptr %[[BINDINGS]][1]
// CHECK: %[[P1:.*]] = llvm.load %[[S1]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[B:.*]] = llvm.zext %[[BEGIN]] : i32 to i64
// CHECK: %[[E:.*]] = llvm.zext %[[END]] : i32 to i64
// CHECK: llvm.call @k.impl(%[[P0]], %[[P1]], %[[B]], %[[E]]) :
// CHECK: llvm.func internal @k.impl
llvm.func @k(%a: !llvm.ptr, %b: !llvm.ptr, %begin: i64, %end: i64) attributes {dlc.kernel} {
  llvm.return
}

// -----

// A kernel with scratch (dlc-cpu-scratch) gets the entry's last argument.
// CHECK: llvm.func @s(%[[BINDINGS:.*]]: !llvm.ptr, %[[BEGIN:.*]]: i32, %[[END:.*]]: i32, %[[SCRATCH:.*]]: !llvm.ptr)
// CHECK: %[[P0:.*]] = llvm.load
// CHECK: %[[B:.*]] = llvm.zext %[[BEGIN]] : i32 to i64
// CHECK: %[[E:.*]] = llvm.zext %[[END]] : i32 to i64
// CHECK: llvm.call @s.impl(%[[P0]], %[[B]], %[[E]], %[[SCRATCH]])
llvm.func @s(%a: !llvm.ptr, %begin: i64, %end: i64, %scratch: !llvm.ptr) attributes {dlc.kernel, dlc.scratch_size = 128 : i64} {
  llvm.return
}

// -----

// expected-error @below {{kernel parameter 0 is not a pointer}}
llvm.func @bad(%a: i64, %begin: i64, %end: i64) attributes {dlc.kernel} {
  llvm.return
}

// -----

// A kernel that runs only when its buffer 1 holds false (dlc.run_if):
// the entry reads that buffer's first byte and returns without calling.
// CHECK: llvm.func @p(%[[BINDINGS:.*]]: !llvm.ptr,
// CHECK: %[[S1:.*]] = llvm.getelementptr %[[BINDINGS]][1]
// CHECK: %[[P1:.*]] = llvm.load %[[S1]] : !llvm.ptr -> !llvm.ptr
// CHECK: %[[FLAG:.*]] = llvm.load %[[P1]] : !llvm.ptr -> i8
// CHECK: %[[ZERO:.*]] = llvm.mlir.constant(0 : i8) : i8
// CHECK: %[[GO:.*]] = llvm.icmp "eq" %[[FLAG]], %[[ZERO]] : i8
// CHECK: llvm.cond_br %[[GO]], ^[[CALL:.*]], ^[[SKIP:.*]]
// CHECK: ^[[CALL]]:
// CHECK-NEXT: llvm.call @p.impl
// CHECK-NEXT: llvm.return
// CHECK: ^[[SKIP]]:
// CHECK-NEXT: llvm.return
// CHECK: llvm.func internal @p.impl
// CHECK-NOT: dlc.run_if
llvm.func @p(%a: !llvm.ptr, %b: !llvm.ptr, %begin: i64, %end: i64) attributes {dlc.kernel, dlc.run_if = array<i64: 1, 0>} {
  llvm.return
}

// -----

// expected-error @below {{dlc.run_if names argument 2 of a kernel with 2 buffers}}
llvm.func @q(%a: !llvm.ptr, %b: !llvm.ptr, %begin: i64, %end: i64) attributes {dlc.kernel, dlc.run_if = array<i64: 2, 1>} {
  llvm.return
}

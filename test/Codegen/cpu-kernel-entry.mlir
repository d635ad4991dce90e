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

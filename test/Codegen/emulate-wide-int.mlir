// RUN: dlc-opt %s --dlc-emulate-wide-int | FileCheck %s

// i64 buffers, loads, arithmetic and stores of a kernel become pairs of
// i32 in one conversion; nothing i64 is left, even in the signature.
// CHECK-LABEL: gpu.func @add
// CHECK-SAME: memref<4xvector<2xi32>>
// CHECK-NOT: i64
// CHECK: memref.load {{.*}} : memref<4xvector<2xi32>>
// CHECK: arith.addui_extended
// CHECK: memref.store {{.*}} : memref<4xvector<2xi32>>
// CHECK-NOT: i64
// CHECK: gpu.return
gpu.module @kernels {
  gpu.func @add(%a: memref<4xi64>, %b: memref<4xi64>) kernel {
    %i = gpu.thread_id x
    %x = memref.load %a[%i] : memref<4xi64>
    %y = memref.load %b[%i] : memref<4xi64>
    %s = arith.addi %x, %y : i64
    memref.store %s, %b[%i] : memref<4xi64>
    gpu.return
  }
}

// RUN: dlc-opt %s --split-input-file --dlc-gpu-bf16-storage | FileCheck %s

// A bf16 -> f32 conversion already in integer operations (as
// dlc-legalize-math's expand-bf16-conversions leaves it): the bf16 buffer
// becomes an i16 one, the load moves i16 and its bitcast folds away; the
// store of a rounded bf16 stores the i16 it came from.
// CHECK-LABEL: gpu.func @convert
// CHECK-SAME: (%[[IN:.*]]: memref<4xi16>, %[[OUT:.*]]: memref<4xf32>, %[[BACK:.*]]: memref<4xi16>)
// CHECK: %[[BITS:.*]] = memref.load %[[IN]][%{{.*}}] : memref<4xi16>
// CHECK: arith.extui %[[BITS]] : i16 to i32
// CHECK: memref.store %{{.*}}, %[[BACK]][%{{.*}}] : memref<4xi16>
// CHECK-NOT: bf16
gpu.module @k {
  gpu.func @convert(%in: memref<4xbf16>, %out: memref<4xf32>, %back: memref<4xbf16>) kernel {
    %c0 = arith.constant 0 : index
    %c16 = arith.constant 16 : i32
    %v = memref.load %in[%c0] : memref<4xbf16>
    %i = arith.bitcast %v : bf16 to i16
    %w = arith.extui %i : i16 to i32
    %s = arith.shli %w, %c16 : i32
    %f = arith.bitcast %s : i32 to f32
    memref.store %f, %out[%c0] : memref<4xf32>
    %t = arith.shrui %s, %c16 : i32
    %h = arith.trunci %t : i32 to i16
    %b = arith.bitcast %h : i16 to bf16
    memref.store %b, %back[%c0] : memref<4xbf16>
    gpu.return
  }
}

// -----

// A bf16 value still computed with keeps a bitcast back to bf16 (the
// Vulkan target's element-type check then names the kernel).
// CHECK-LABEL: gpu.func @computed
// CHECK: %[[BITS:.*]] = memref.load %{{.*}} : memref<4xi16>
// CHECK: %[[V:.*]] = arith.bitcast %[[BITS]] : i16 to bf16
// CHECK: arith.addf %[[V]], %[[V]] : bf16
gpu.module @k2 {
  gpu.func @computed(%in: memref<4xbf16>) kernel {
    %c0 = arith.constant 0 : index
    %v = memref.load %in[%c0] : memref<4xbf16>
    %a = arith.addf %v, %v : bf16
    memref.store %a, %in[%c0] : memref<4xbf16>
    gpu.return
  }
}

// RUN: dlc-opt %s --split-input-file --verify-diagnostics --dlc-emulate-wide-int

// 64-bit division has no 32-bit pair emulation: the error names the
// kernel, the op and the feature that computes it natively.
gpu.module @kernels {
  gpu.func @div(%a: memref<4xi64>, %b: memref<4xi64>) kernel {
    %i = gpu.thread_id x
    %x = memref.load %a[%i] : memref<4xi64>
    %y = memref.load %b[%i] : memref<4xi64>
    // expected-error @below {{kernel 'div' computes arith.remui on 64-bit integers, which their emulation with 32-bit pairs lacks; it needs the target feature +int64 (64-bit integers in kernels)}}
    %s = arith.remui %x, %y : i64
    memref.store %s, %b[%i] : memref<4xi64>
    gpu.return
  }
}

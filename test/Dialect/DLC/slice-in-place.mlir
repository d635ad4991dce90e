// RUN: dlc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dlc-slice-in-place))' | FileCheck %s
// RUN: dlc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dlc-slice-in-place{alignment=256}))' | FileCheck %s --check-prefix=ALIGN

// A channel split with batch 1: each half is one contiguous range of the
// kernel result it slices, so both copy kernels become views (the second
// 4 x 8 floats = 128 bytes in).
// CHECK-LABEL: func @split
// CHECK: %[[X:.*]] = dlc.dispatch
// CHECK-NOT: tensor.extract_slice
// CHECK: %[[A:.*]] = dlc.view %[[X]][0] : tensor<1x8x8xf32> -> tensor<1x4x8xf32>
// CHECK: %[[B:.*]] = dlc.view %[[X]][32] : tensor<1x8x8xf32> -> tensor<1x4x8xf32>
// CHECK: dlc.dispatch(%[[A]], %[[B]])
// The second starts 128 bytes in, off a 256-byte boundary: it stays a kernel.
// ALIGN-LABEL: func @split
// ALIGN: dlc.view %{{.*}}[0]
// ALIGN: tensor.extract_slice
func.func @split(%x: tensor<1x8x8xf32>) -> tensor<1x4x8xf32> {
  %e = dlc.dispatch (%x) : (tensor<1x8x8xf32>) -> tensor<1x8x8xf32> {
  ^bb0(%v: tensor<1x8x8xf32>):
    %n = math.exp %v : tensor<1x8x8xf32>
    dlc.yield %n : tensor<1x8x8xf32>
  }
  %a = dlc.dispatch (%e) : (tensor<1x8x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%v: tensor<1x8x8xf32>):
    %s = tensor.extract_slice %v[0, 0, 0] [1, 4, 8] [1, 1, 1] : tensor<1x8x8xf32> to tensor<1x4x8xf32>
    dlc.yield %s : tensor<1x4x8xf32>
  }
  %b = dlc.dispatch (%e) : (tensor<1x8x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%v: tensor<1x8x8xf32>):
    %s = tensor.extract_slice %v[0, 4, 0] [1, 4, 8] [1, 1, 1] : tensor<1x8x8xf32> to tensor<1x4x8xf32>
    dlc.yield %s : tensor<1x4x8xf32>
  }
  %r = dlc.dispatch (%a, %b) : (tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%p: tensor<1x4x8xf32>, %q: tensor<1x4x8xf32>):
    %n = arith.addf %p, %q : tensor<1x4x8xf32>
    dlc.yield %n : tensor<1x4x8xf32>
  }
  return %r : tensor<1x4x8xf32>
}

// -----

// One of Q, K, V (a rank-reducing slice along the leading dim) of a graph
// input: a view 2 x 3 x 16 elements in.
// CHECK-LABEL: func @qkv
// CHECK: dlc.view %arg0[96] : tensor<3x2x3x16xf32> -> tensor<2x3x16xf32>
func.func @qkv(%x: tensor<3x2x3x16xf32>) -> tensor<2x3x16xf32> {
  %k = dlc.dispatch (%x) : (tensor<3x2x3x16xf32>) -> tensor<2x3x16xf32> {
  ^bb0(%v: tensor<3x2x3x16xf32>):
    %s = tensor.extract_slice %v[1, 0, 0, 0] [1, 2, 3, 16] [1, 1, 1, 1] : tensor<3x2x3x16xf32> to tensor<2x3x16xf32>
    dlc.yield %s : tensor<2x3x16xf32>
  }
  %r = dlc.dispatch (%k) : (tensor<2x3x16xf32>) -> tensor<2x3x16xf32> {
  ^bb0(%p: tensor<2x3x16xf32>):
    %n = math.exp %p : tensor<2x3x16xf32>
    dlc.yield %n : tensor<2x3x16xf32>
  }
  return %r : tensor<2x3x16xf32>
}

// -----

// Kept as kernels: rows of a batch of 2 (not contiguous), a strided slice,
// a slice of a constant, a slice that is a graph output and one whose
// reshape is.
// CHECK-LABEL: func @kept
// CHECK-NOT: dlc.view
// CHECK-COUNT-5: tensor.extract_slice
func.func @kept(%x: tensor<2x8x4xf32>) -> (tensor<2x4x4xf32>, tensor<1x4x4xf32>, tensor<4xf32>, tensor<1x4x4xf32>, tensor<16xf32>) {
  %a = dlc.dispatch (%x) : (tensor<2x8x4xf32>) -> tensor<2x4x4xf32> {
  ^bb0(%v: tensor<2x8x4xf32>):
    %s = tensor.extract_slice %v[0, 0, 0] [2, 4, 4] [1, 1, 1] : tensor<2x8x4xf32> to tensor<2x4x4xf32>
    dlc.yield %s : tensor<2x4x4xf32>
  }
  %b = dlc.dispatch (%x) : (tensor<2x8x4xf32>) -> tensor<1x4x4xf32> {
  ^bb0(%v: tensor<2x8x4xf32>):
    %s = tensor.extract_slice %v[0, 0, 0] [1, 4, 4] [1, 2, 1] : tensor<2x8x4xf32> to tensor<1x4x4xf32>
    dlc.yield %s : tensor<1x4x4xf32>
  }
  %c = arith.constant dense<1.0> : tensor<8xf32>
  %d = dlc.dispatch (%c) : (tensor<8xf32>) -> tensor<4xf32> {
  ^bb0(%v: tensor<8xf32>):
    %s = tensor.extract_slice %v[0] [4] [1] : tensor<8xf32> to tensor<4xf32>
    dlc.yield %s : tensor<4xf32>
  }
  %o = dlc.dispatch (%x) : (tensor<2x8x4xf32>) -> tensor<1x4x4xf32> {
  ^bb0(%v: tensor<2x8x4xf32>):
    %s = tensor.extract_slice %v[0, 0, 0] [1, 4, 4] [1, 1, 1] : tensor<2x8x4xf32> to tensor<1x4x4xf32>
    dlc.yield %s : tensor<1x4x4xf32>
  }
  %ea = dlc.dispatch (%a) : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32> {
  ^bb0(%p: tensor<2x4x4xf32>):
    %n = math.exp %p : tensor<2x4x4xf32>
    dlc.yield %n : tensor<2x4x4xf32>
  }
  %eb = dlc.dispatch (%b) : (tensor<1x4x4xf32>) -> tensor<1x4x4xf32> {
  ^bb0(%p: tensor<1x4x4xf32>):
    %n = math.exp %p : tensor<1x4x4xf32>
    dlc.yield %n : tensor<1x4x4xf32>
  }
  %ed = dlc.dispatch (%d) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%p: tensor<4xf32>):
    %n = math.exp %p : tensor<4xf32>
    dlc.yield %n : tensor<4xf32>
  }
  %p = dlc.dispatch (%x) : (tensor<2x8x4xf32>) -> tensor<1x4x4xf32> {
  ^bb0(%v: tensor<2x8x4xf32>):
    %s = tensor.extract_slice %v[1, 4, 0] [1, 4, 4] [1, 1, 1] : tensor<2x8x4xf32> to tensor<1x4x4xf32>
    dlc.yield %s : tensor<1x4x4xf32>
  }
  %f = tensor.collapse_shape %p [[0, 1, 2]] : tensor<1x4x4xf32> into tensor<16xf32>
  return %ea, %eb, %ed, %o, %f : tensor<2x4x4xf32>, tensor<1x4x4xf32>, tensor<4xf32>, tensor<1x4x4xf32>, tensor<16xf32>
}

// -----

// A slice of a reshaped constant (an LSTM's bias, B[0] of [1, 8H]) stays a
// kernel too: constants live in the weights, not in the arena.
// CHECK-LABEL: func @reshaped_constant
// CHECK-NOT: dlc.view
// CHECK: tensor.extract_slice
func.func @reshaped_constant() -> tensor<4xf32> {
  %c = arith.constant dense<1.0> : tensor<1x8xf32>
  %r = tensor.collapse_shape %c [[0, 1]] : tensor<1x8xf32> into tensor<8xf32>
  %d = dlc.dispatch (%r) : (tensor<8xf32>) -> tensor<4xf32> {
  ^bb0(%v: tensor<8xf32>):
    %s = tensor.extract_slice %v[0] [4] [1] : tensor<8xf32> to tensor<4xf32>
    dlc.yield %s : tensor<4xf32>
  }
  %e = dlc.dispatch (%d) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%p: tensor<4xf32>):
    %n = math.exp %p : tensor<4xf32>
    dlc.yield %n : tensor<4xf32>
  }
  return %e : tensor<4xf32>
}

// -----

// A slice that a dlc.concat already places in its buffer (a ShuffleNet
// unit's pass-through half) stays a kernel: a value lives in one place.
// CHECK-LABEL: func @concat_operand
// CHECK: tensor.extract_slice
// CHECK: dlc.concat
func.func @concat_operand(%x: tensor<1x8x4xf32>) -> tensor<1x8x4xf32> {
  %a = dlc.dispatch (%x) : (tensor<1x8x4xf32>) -> tensor<1x4x4xf32> {
  ^bb0(%v: tensor<1x8x4xf32>):
    %s = tensor.extract_slice %v[0, 0, 0] [1, 4, 4] [1, 1, 1] : tensor<1x8x4xf32> to tensor<1x4x4xf32>
    dlc.yield %s : tensor<1x4x4xf32>
  }
  %b = dlc.dispatch (%x) : (tensor<1x8x4xf32>) -> tensor<1x4x4xf32> {
  ^bb0(%v: tensor<1x8x4xf32>):
    %s = math.exp %v : tensor<1x8x4xf32>
    %t = tensor.extract_slice %s[0, 4, 0] [1, 4, 4] [1, 1, 1] : tensor<1x8x4xf32> to tensor<1x4x4xf32>
    dlc.yield %t : tensor<1x4x4xf32>
  }
  %r = dlc.concat dim(1) %a, %b : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x8x4xf32>
  return %r : tensor<1x8x4xf32>
}

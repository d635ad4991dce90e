// RUN: dlc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dlc-concat-in-place))' | FileCheck %s
// RUN: dlc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dlc-concat-in-place{alignment=256}))' | FileCheck %s --check-prefix=ALIGN

// Both operands are kernel results, one contiguous range each: the concat
// kernel goes, the operands are placed in the result.
// CHECK-LABEL: func @fire
// CHECK: %[[A:.*]] = dlc.dispatch
// CHECK: %[[B:.*]] = dlc.dispatch
// CHECK: %[[R:.*]] = dlc.concat dim(1) %[[A]], %[[B]] : (tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x8x8xf32>
// CHECK-NOT: tensor.concat
// CHECK: return %[[R]]
// Each operand is 128 bytes: the second starts off a 256-byte boundary.
// ALIGN-LABEL: func @fire
// ALIGN: tensor.concat
// ALIGN-NOT: dlc.concat
func.func @fire(%x: tensor<1x4x8xf32>) -> tensor<1x8x8xf32> {
  %a = dlc.dispatch (%x) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%v: tensor<1x4x8xf32>):
    %n = math.exp %v : tensor<1x4x8xf32>
    dlc.yield %n : tensor<1x4x8xf32>
  }
  %b = dlc.dispatch (%x) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  ^bb0(%v: tensor<1x4x8xf32>):
    %n = math.tanh %v : tensor<1x4x8xf32>
    dlc.yield %n : tensor<1x4x8xf32>
  }
  %r = dlc.dispatch (%b, %a) : (tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x8x8xf32> {
  ^bb0(%p: tensor<1x4x8xf32>, %q: tensor<1x4x8xf32>):
    %c = tensor.concat dim(1) %q, %p : (tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x8x8xf32>
    dlc.yield %c : tensor<1x8x8xf32>
  }
  return %r : tensor<1x8x8xf32>
}

// -----

// A concat of concats: the inner one is placed in the outer one.
// CHECK-LABEL: func @nested
// CHECK: %[[I:.*]] = dlc.concat dim(0) %{{.*}}, %{{.*}} : (tensor<16xf32>, tensor<16xf32>) -> tensor<32xf32>
// CHECK: dlc.concat dim(0) %[[I]], %{{.*}} : (tensor<32xf32>, tensor<16xf32>) -> tensor<48xf32>
func.func @nested(%x: tensor<16xf32>) -> tensor<48xf32> {
  %a = dlc.dispatch (%x) : (tensor<16xf32>) -> tensor<16xf32> {
  ^bb0(%v: tensor<16xf32>):
    %n = math.exp %v : tensor<16xf32>
    dlc.yield %n : tensor<16xf32>
  }
  %b = dlc.dispatch (%x) : (tensor<16xf32>) -> tensor<16xf32> {
  ^bb0(%v: tensor<16xf32>):
    %n = math.tanh %v : tensor<16xf32>
    dlc.yield %n : tensor<16xf32>
  }
  %c = dlc.dispatch (%x) : (tensor<16xf32>) -> tensor<16xf32> {
  ^bb0(%v: tensor<16xf32>):
    %n = math.sqrt %v : tensor<16xf32>
    dlc.yield %n : tensor<16xf32>
  }
  %i = dlc.dispatch (%a, %b) : (tensor<16xf32>, tensor<16xf32>) -> tensor<32xf32> {
  ^bb0(%p: tensor<16xf32>, %q: tensor<16xf32>):
    %k = tensor.concat dim(0) %p, %q : (tensor<16xf32>, tensor<16xf32>) -> tensor<32xf32>
    dlc.yield %k : tensor<32xf32>
  }
  %o = dlc.dispatch (%i, %c) : (tensor<32xf32>, tensor<16xf32>) -> tensor<48xf32> {
  ^bb0(%p: tensor<32xf32>, %q: tensor<16xf32>):
    %k = tensor.concat dim(0) %p, %q : (tensor<32xf32>, tensor<16xf32>) -> tensor<48xf32>
    dlc.yield %k : tensor<48xf32>
  }
  return %o : tensor<48xf32>
}

// -----

// Kept as kernels: an operand that is a graph input (it lives elsewhere),
// one that is a graph output, one concatenated twice, one already placed
// in an earlier concat, and operands that are no contiguous range of the
// result (a dim of 2 before the concatenated one).
// CHECK-LABEL: func @kept
// CHECK-NOT: dlc.concat
// CHECK-COUNT-4: tensor.concat
// CHECK: dlc.concat dim(0)
// CHECK: tensor.concat
// CHECK-NOT: dlc.concat
func.func @kept(%x: tensor<16xf32>, %m: tensor<2x16xf32>) -> (tensor<16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<2x32xf32>, tensor<32xf32>) {
  %a = dlc.dispatch (%x) : (tensor<16xf32>) -> tensor<16xf32> {
  ^bb0(%v: tensor<16xf32>):
    %n = math.exp %v : tensor<16xf32>
    dlc.yield %n : tensor<16xf32>
  }
  %b = dlc.dispatch (%x) : (tensor<16xf32>) -> tensor<16xf32> {
  ^bb0(%v: tensor<16xf32>):
    %n = math.tanh %v : tensor<16xf32>
    dlc.yield %n : tensor<16xf32>
  }
  %g = dlc.dispatch (%x) : (tensor<16xf32>) -> tensor<16xf32> {
  ^bb0(%v: tensor<16xf32>):
    %n = math.sqrt %v : tensor<16xf32>
    dlc.yield %n : tensor<16xf32>
  }
  %n2 = dlc.dispatch (%m) : (tensor<2x16xf32>) -> tensor<2x16xf32> {
  ^bb0(%v: tensor<2x16xf32>):
    %n = math.exp %v : tensor<2x16xf32>
    dlc.yield %n : tensor<2x16xf32>
  }
  %n3 = dlc.dispatch (%m) : (tensor<2x16xf32>) -> tensor<2x16xf32> {
  ^bb0(%v: tensor<2x16xf32>):
    %n = math.tanh %v : tensor<2x16xf32>
    dlc.yield %n : tensor<2x16xf32>
  }
  %input = dlc.dispatch (%x, %b) : (tensor<16xf32>, tensor<16xf32>) -> tensor<32xf32> {
  ^bb0(%p: tensor<16xf32>, %q: tensor<16xf32>):
    %k = tensor.concat dim(0) %p, %q : (tensor<16xf32>, tensor<16xf32>) -> tensor<32xf32>
    dlc.yield %k : tensor<32xf32>
  }
  %output = dlc.dispatch (%g, %b) : (tensor<16xf32>, tensor<16xf32>) -> tensor<32xf32> {
  ^bb0(%p: tensor<16xf32>, %q: tensor<16xf32>):
    %k = tensor.concat dim(0) %p, %q : (tensor<16xf32>, tensor<16xf32>) -> tensor<32xf32>
    dlc.yield %k : tensor<32xf32>
  }
  %twice = dlc.dispatch (%a) : (tensor<16xf32>) -> tensor<32xf32> {
  ^bb0(%p: tensor<16xf32>):
    %k = tensor.concat dim(0) %p, %p : (tensor<16xf32>, tensor<16xf32>) -> tensor<32xf32>
    dlc.yield %k : tensor<32xf32>
  }
  %rows = dlc.dispatch (%n2, %n3) : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<2x32xf32> {
  ^bb0(%p: tensor<2x16xf32>, %q: tensor<2x16xf32>):
    %k = tensor.concat dim(1) %p, %q : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<2x32xf32>
    dlc.yield %k : tensor<2x32xf32>
  }
  %first = dlc.dispatch (%a, %b) : (tensor<16xf32>, tensor<16xf32>) -> tensor<32xf32> {
  ^bb0(%p: tensor<16xf32>, %q: tensor<16xf32>):
    %k = tensor.concat dim(0) %p, %q : (tensor<16xf32>, tensor<16xf32>) -> tensor<32xf32>
    dlc.yield %k : tensor<32xf32>
  }
  %again = dlc.dispatch (%b, %a) : (tensor<16xf32>, tensor<16xf32>) -> tensor<32xf32> {
  ^bb0(%p: tensor<16xf32>, %q: tensor<16xf32>):
    %k = tensor.concat dim(0) %p, %q : (tensor<16xf32>, tensor<16xf32>) -> tensor<32xf32>
    dlc.yield %k : tensor<32xf32>
  }
  return %g, %input, %output, %twice, %first, %rows, %again : tensor<16xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<2x32xf32>, tensor<32xf32>
}

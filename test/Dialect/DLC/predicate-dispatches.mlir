// RUN: dlc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dlc-predicate-dispatches))' | FileCheck %s

// An If on a run-time condition: each branch's kernel takes the condition
// as an extra operand and runs only for its arm; the kernel that selects
// between them always runs. No branch marks are left.
// CHECK-LABEL: func @if_branches
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>, %[[C:.*]]: tensor<i1>)
// CHECK: %[[T:.*]] = dlc.dispatch(%[[X]], %[[C]])
// CHECK: } {dlc.run_if = array<i64: 1, 1>}
// CHECK: %[[E:.*]] = dlc.dispatch(%[[X]], %[[C]])
// CHECK: } {dlc.run_if = array<i64: 1, 0>}
// CHECK: dlc.dispatch(%[[C]], %[[T]], %[[E]])
// CHECK-NOT: dlc.run_if
// CHECK-NOT: dlc.branch
// CHECK-NOT: dlc.selects
#id = affine_map<(d0) -> (d0)>
#sc = affine_map<(d0) -> ()>
func.func @if_branches(%x: tensor<4xf32>, %c: tensor<i1>) -> tensor<4xf32> {
  %t = dlc.dispatch (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %e = tensor.empty() : tensor<4xf32>
    %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) attrs = {dlc.branch = array<i64: 0, 1>} {
    ^bb0(%p: f32, %o: f32):
      %s = math.exp %p : f32
      linalg.yield %s : f32
    } -> tensor<4xf32>
    dlc.yield %r : tensor<4xf32>
  }
  %f = dlc.dispatch (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %e = tensor.empty() : tensor<4xf32>
    %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) attrs = {dlc.branch = array<i64: 0, 0>} {
    ^bb0(%p: f32, %o: f32):
      %s = arith.negf %p : f32
      linalg.yield %s : f32
    } -> tensor<4xf32>
    dlc.yield %r : tensor<4xf32>
  }
  %y = dlc.dispatch (%c, %t, %f) : (tensor<i1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%k: tensor<i1>, %a: tensor<4xf32>, %b: tensor<4xf32>):
    %e = tensor.empty() : tensor<4xf32>
    %r = linalg.generic {indexing_maps = [#sc, #id, #id, #id], iterator_types = ["parallel"]} ins(%k, %a, %b : tensor<i1>, tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) attrs = {dlc.selects = 0 : i64} {
    ^bb0(%q: i1, %p: f32, %n: f32, %o: f32):
      %s = arith.select %q, %p, %n : f32
      linalg.yield %s : f32
    } -> tensor<4xf32>
    dlc.yield %r : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}

// -----

// Kernels of one branch in a chain: both are skipped together. A value of
// the branch that is also a graph output (not only selected) keeps its
// kernel running, and so does a value that reaches the arm of the other
// branch's input.
// CHECK-LABEL: func @chain_and_escapes
// CHECK: %[[A:.*]] = dlc.dispatch(%{{.*}}, %[[C:[^)]*]])
// CHECK: } {dlc.run_if = array<i64: 1, 1>}
// CHECK: %[[B:.*]] = dlc.dispatch(%[[A]], %[[C]])
// CHECK: } {dlc.run_if = array<i64: 1, 1>}
// CHECK: %[[O:.*]] = dlc.dispatch(%{{.*}}) :
// CHECK-NOT: dlc.run_if
// CHECK: %[[W:.*]] = dlc.dispatch(%{{.*}}) :
// CHECK-NOT: dlc.run_if
// CHECK: return
#id = affine_map<(d0) -> (d0)>
#sc = affine_map<(d0) -> ()>
func.func @chain_and_escapes(%x: tensor<4xf32>, %c: tensor<i1>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %a = dlc.dispatch (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%v: tensor<4xf32>):
    %e = tensor.empty() : tensor<4xf32>
    %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%v : tensor<4xf32>) outs(%e : tensor<4xf32>) attrs = {dlc.branch = array<i64: 3, 1>} {
    ^bb0(%p: f32, %o: f32):
      %s = math.exp %p : f32
      linalg.yield %s : f32
    } -> tensor<4xf32>
    dlc.yield %r : tensor<4xf32>
  }
  %b = dlc.dispatch (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%v: tensor<4xf32>):
    %e = tensor.empty() : tensor<4xf32>
    %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%v : tensor<4xf32>) outs(%e : tensor<4xf32>) attrs = {dlc.branch = array<i64: 3, 1>} {
    ^bb0(%p: f32, %o: f32):
      %s = math.exp %p : f32
      linalg.yield %s : f32
    } -> tensor<4xf32>
    dlc.yield %r : tensor<4xf32>
  }
  // Returned as well as selected.
  %out = dlc.dispatch (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%v: tensor<4xf32>):
    %e = tensor.empty() : tensor<4xf32>
    %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%v : tensor<4xf32>) outs(%e : tensor<4xf32>) attrs = {dlc.branch = array<i64: 3, 1>} {
    ^bb0(%p: f32, %o: f32):
      %s = arith.negf %p : f32
      linalg.yield %s : f32
    } -> tensor<4xf32>
    dlc.yield %r : tensor<4xf32>
  }
  // Marked as arm 1 but selected through the input of arm 0.
  %wrong = dlc.dispatch (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%v: tensor<4xf32>):
    %e = tensor.empty() : tensor<4xf32>
    %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%v : tensor<4xf32>) outs(%e : tensor<4xf32>) attrs = {dlc.branch = array<i64: 3, 1>} {
    ^bb0(%p: f32, %o: f32):
      %s = arith.negf %p : f32
      linalg.yield %s : f32
    } -> tensor<4xf32>
    dlc.yield %r : tensor<4xf32>
  }
  %y = dlc.dispatch (%c, %b, %wrong) : (tensor<i1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%k: tensor<i1>, %p0: tensor<4xf32>, %p1: tensor<4xf32>):
    %e = tensor.empty() : tensor<4xf32>
    %r = linalg.generic {indexing_maps = [#sc, #id, #id, #id], iterator_types = ["parallel"]} ins(%k, %p0, %p1 : tensor<i1>, tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) attrs = {dlc.selects = 3 : i64} {
    ^bb0(%q: i1, %p: f32, %n: f32, %o: f32):
      %s = arith.select %q, %p, %n : f32
      linalg.yield %s : f32
    } -> tensor<4xf32>
    dlc.yield %r : tensor<4xf32>
  }
  %z = dlc.dispatch (%c, %out, %x) : (tensor<i1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%k: tensor<i1>, %p0: tensor<4xf32>, %p1: tensor<4xf32>):
    %e = tensor.empty() : tensor<4xf32>
    %r = linalg.generic {indexing_maps = [#sc, #id, #id, #id], iterator_types = ["parallel"]} ins(%k, %p0, %p1 : tensor<i1>, tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) attrs = {dlc.selects = 3 : i64} {
    ^bb0(%q: i1, %p: f32, %n: f32, %o: f32):
      %s = arith.select %q, %p, %n : f32
      linalg.yield %s : f32
    } -> tensor<4xf32>
    dlc.yield %r : tensor<4xf32>
  }
  return %y, %z, %out : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// A Loop iteration: the condition it runs under is already an operand of
// its kernel (no second copy); the And that carries the condition on
// ignores the iteration's own condition when the loop has ended. A
// condition computed only after a kernel cannot predicate it.
// CHECK-LABEL: func @loop_iteration
// CHECK: %[[N:.*]] = dlc.dispatch(%{{.*}}, %[[C:[^)]*]]) :
// CHECK: } {dlc.run_if = array<i64: 1, 1>}
// CHECK: dlc.dispatch(%[[C]], %[[N]]) :
// CHECK-NOT: dlc.run_if
// CHECK: return
#s0 = affine_map<() -> ()>
func.func @loop_iteration(%x: tensor<f32>, %c: tensor<i1>) -> (tensor<i1>, tensor<i1>) {
  %n = dlc.dispatch (%x, %c) : (tensor<f32>, tensor<i1>) -> tensor<i1> {
  ^bb0(%v: tensor<f32>, %k: tensor<i1>):
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<i1>
    %r = linalg.generic {indexing_maps = [#s0, #s0, #s0], iterator_types = []} ins(%v, %k : tensor<f32>, tensor<i1>) outs(%e : tensor<i1>) attrs = {dlc.branch = array<i64: 5, 1>} {
    ^bb0(%p: f32, %q: i1, %o: i1):
      %lt = arith.cmpf olt, %p, %zero : f32
      %s = arith.andi %lt, %q : i1
      linalg.yield %s : i1
    } -> tensor<i1>
    dlc.yield %r : tensor<i1>
  }
  %and = dlc.dispatch (%c, %n) : (tensor<i1>, tensor<i1>) -> tensor<i1> {
  ^bb0(%k: tensor<i1>, %q: tensor<i1>):
    %e = tensor.empty() : tensor<i1>
    %r = linalg.generic {indexing_maps = [#s0, #s0, #s0], iterator_types = []} ins(%k, %q : tensor<i1>, tensor<i1>) outs(%e : tensor<i1>) attrs = {dlc.selects = 5 : i64} {
    ^bb0(%a: i1, %b: i1, %o: i1):
      %s = arith.andi %a, %b : i1
      linalg.yield %s : i1
    } -> tensor<i1>
    dlc.yield %r : tensor<i1>
  }
  // Branch 6's condition (%k6) is computed after its kernel (%late).
  %late = dlc.dispatch (%x) : (tensor<f32>) -> tensor<i1> {
  ^bb0(%v: tensor<f32>):
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<i1>
    %r = linalg.generic {indexing_maps = [#s0, #s0], iterator_types = []} ins(%v : tensor<f32>) outs(%e : tensor<i1>) attrs = {dlc.branch = array<i64: 6, 1>} {
    ^bb0(%p: f32, %o: i1):
      %lt = arith.cmpf ogt, %p, %zero : f32
      linalg.yield %lt : i1
    } -> tensor<i1>
    dlc.yield %r : tensor<i1>
  }
  %k6 = dlc.dispatch (%x) : (tensor<f32>) -> tensor<i1> {
  ^bb0(%v: tensor<f32>):
    %zero = arith.constant 1.0 : f32
    %e = tensor.empty() : tensor<i1>
    %r = linalg.generic {indexing_maps = [#s0, #s0], iterator_types = []} ins(%v : tensor<f32>) outs(%e : tensor<i1>) {
    ^bb0(%p: f32, %o: i1):
      %lt = arith.cmpf ogt, %p, %zero : f32
      linalg.yield %lt : i1
    } -> tensor<i1>
    dlc.yield %r : tensor<i1>
  }
  %and6 = dlc.dispatch (%k6, %late) : (tensor<i1>, tensor<i1>) -> tensor<i1> {
  ^bb0(%k: tensor<i1>, %q: tensor<i1>):
    %e = tensor.empty() : tensor<i1>
    %r = linalg.generic {indexing_maps = [#s0, #s0, #s0], iterator_types = []} ins(%k, %q : tensor<i1>, tensor<i1>) outs(%e : tensor<i1>) attrs = {dlc.selects = 6 : i64} {
    ^bb0(%a: i1, %b: i1, %o: i1):
      %s = arith.andi %a, %b : i1
      linalg.yield %s : i1
    } -> tensor<i1>
    dlc.yield %r : tensor<i1>
  }
  return %and, %and6 : tensor<i1>, tensor<i1>
}

// -----

// Host ops that only place values (a reshape, an in-place view), marked or
// not, pass a branch's values on to the selection: the kernel is skipped.
// CHECK-LABEL: func @through_views
// CHECK: %[[A:.*]] = dlc.dispatch(%{{.*}}, %[[C:[^)]*]])
// CHECK: } {dlc.run_if = array<i64: 1, 1>}
// CHECK: dlc.view %[[A]][4]
#id = affine_map<(d0) -> (d0)>
#sc = affine_map<(d0) -> ()>
func.func @through_views(%x: tensor<8xf32>, %c: tensor<i1>, %e: tensor<4xf32>) -> tensor<4xf32> {
  %a = dlc.dispatch (%x) : (tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%v: tensor<8xf32>):
    %o = tensor.empty() : tensor<8xf32>
    %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%v : tensor<8xf32>) outs(%o : tensor<8xf32>) attrs = {dlc.branch = array<i64: 2, 1>} {
    ^bb0(%p: f32, %q: f32):
      %s = math.exp %p : f32
      linalg.yield %s : f32
    } -> tensor<8xf32>
    dlc.yield %r : tensor<8xf32>
  }
  %half = dlc.view %a[4] : tensor<8xf32> -> tensor<4xf32>
  %two = tensor.expand_shape %half [[0, 1]] output_shape [2, 2] : tensor<4xf32> into tensor<2x2xf32>
  %flat = tensor.collapse_shape %two [[0, 1]] : tensor<2x2xf32> into tensor<4xf32>
  %y = dlc.dispatch (%c, %flat, %e) : (tensor<i1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%k: tensor<i1>, %p0: tensor<4xf32>, %p1: tensor<4xf32>):
    %o = tensor.empty() : tensor<4xf32>
    %r = linalg.generic {indexing_maps = [#sc, #id, #id, #id], iterator_types = ["parallel"]} ins(%k, %p0, %p1 : tensor<i1>, tensor<4xf32>, tensor<4xf32>) outs(%o : tensor<4xf32>) attrs = {dlc.selects = 2 : i64} {
    ^bb0(%q: i1, %p: f32, %n: f32, %w: f32):
      %s = arith.select %q, %p, %n : f32
      linalg.yield %s : f32
    } -> tensor<4xf32>
    dlc.yield %r : tensor<4xf32>
  }
  return %y : tensor<4xf32>
}

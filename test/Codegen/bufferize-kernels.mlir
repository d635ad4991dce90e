// RUN: dlc-opt %s --dlc-bufferize-kernels | FileCheck %s
// RUN: dlc-opt %s --dlc-bufferize-kernels=stack-limit=8 | FileCheck %s --check-prefix=SMALL-STACK

// Operands become read-only buffers, the result an output buffer written in
// place (no copy, no allocation).
// CHECK-LABEL: func.func @add
// CHECK-SAME: (%[[A:.*]]: memref<4xf32>, %[[B:.*]]: memref<4xf32>, %[[OUT:.*]]: memref<4xf32>)
// CHECK-NOT: memref.alloc
// CHECK: linalg.generic {{.*}} ins(%[[A]], %[[B]] : memref<4xf32>, memref<4xf32>) outs(%[[OUT]] : memref<4xf32>)
// CHECK-NOT: memref.copy
// CHECK: return
#id = affine_map<(d0) -> (d0)>
func.func @add(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> attributes {dlc.kernel} {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// Temporaries that fit are on the stack; with a smaller stack-limit
// (microcontrollers: 512 bytes) they are allocations, which
// dlc-cpu-scratch then places in the thread's scratch.
// CHECK-LABEL: func.func @temp
// CHECK: memref.alloca() {{.*}} : memref<4xf32>
// CHECK-NOT: memref.alloc(
// SMALL-STACK-LABEL: func.func @temp
// SMALL-STACK-NOT: memref.alloca
// SMALL-STACK: memref.alloc() {{.*}} : memref<4xf32>
func.func @temp(%a: tensor<4xf32>) -> tensor<4xf32> attributes {dlc.kernel} {
  %e = tensor.empty() : tensor<4xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %x, %x : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (3 - d0)>, #id], iterator_types = ["parallel"]} ins(%t : tensor<4xf32>) outs(%e2 : tensor<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// A loop's state (a recurrent layer's hidden state) is updated in place in
// the kernel's output buffer, with no copy per step, also when the body
// writes a temporary into the same (CSE-shared) tensor.empty.
// CHECK-LABEL: func.func @loop_state
// CHECK-SAME: (%[[A:.*]]: memref<4xf32>, %[[OUT:.*]]: memref<4xf32>)
// CHECK: scf.for
// CHECK-NOT: memref.copy
// CHECK: linalg.generic {{.*}} outs(%[[OUT]] : memref<4xf32>)
// CHECK-NOT: memref.copy
// CHECK: return
func.func @loop_state(%a: tensor<4xf32>) -> tensor<4xf32> attributes {dlc.kernel} {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c1 = arith.constant 1 : index
  %e = tensor.empty() : tensor<4xf32>
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%state = %e) -> (tensor<4xf32>) {
    %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%x: f32, %o: f32):
      %s = arith.addf %x, %x : f32
      linalg.yield %s : f32
    } -> tensor<4xf32>
    %n = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%t : tensor<4xf32>) outs(%state : tensor<4xf32>) {
    ^bb0(%x: f32, %o: f32):
      %s = arith.addf %x, %o : f32
      linalg.yield %s : f32
    } -> tensor<4xf32>
    scf.yield %n : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

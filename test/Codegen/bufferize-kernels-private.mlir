// RUN: dlc-opt %s --dlc-bufferize-kernels="private-memory-space=#gpu.address_space<private>" | FileCheck %s

// With a private memory space for temporaries (GPU threads), a pad is
// written as a fill and a copy into a private buffer: tensor.pad and
// tensor.generate do not bufferize into non-default memory spaces.
// CHECK-LABEL: func.func @pad
// CHECK-NOT: tensor.pad
// CHECK: memref.alloca() {{.*}} : memref<6xf32, #gpu.address_space<private>>
// CHECK: linalg.fill
// CHECK: memref.subview {{.*}} #gpu.address_space<private>>
func.func @pad(%a: tensor<4xf32>) -> tensor<6xf32> attributes {dlc.kernel} {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %a low[1] high[1] {
  ^bb0(%i: index):
    tensor.yield %zero : f32
  } : tensor<4xf32> to tensor<6xf32>
  %e = tensor.empty() : tensor<6xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%p : tensor<6xf32>) outs(%e : tensor<6xf32>) {
  ^bb0(%x: f32, %o: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  } -> tensor<6xf32>
  return %r : tensor<6xf32>
}

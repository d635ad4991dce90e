// RUN: dlc-opt %s --dlc-outline-dispatches | FileCheck %s

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<4xf32>)
// CHECK: %[[R:.*]] = dlc.launch @main_k0_generic(%[[A]], %[[B]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK: %[[S:.*]] = dlc.launch @main_k1_copy(%[[R]])
// CHECK: return %[[S]]
// CHECK: func.func private @main_k0_generic(%{{.*}}: tensor<4xf32>, %{{.*}}: tensor<4xf32>) -> tensor<4xf32> attributes {dlc.kernel}
// CHECK:   linalg.generic
// CHECK:   return
// CHECK: func.func private @main_k1_copy
#id = affine_map<(d0) -> (d0)>
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %r = dlc.dispatch (%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
    %e = tensor.empty() : tensor<4xf32>
    %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]} ins(%x, %y : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%p: f32, %q: f32, %o: f32):
      %t = arith.addf %p, %q : f32
      linalg.yield %t : f32
    } -> tensor<4xf32>
    dlc.yield %s : tensor<4xf32>
  }
  %s = dlc.dispatch (%r) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    dlc.yield %x : tensor<4xf32>
  }
  return %s : tensor<4xf32>
}

// RUN: dlc-opt %s | dlc-opt | FileCheck %s

// CHECK-LABEL: func @dispatch
func.func @dispatch(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: dlc.dispatch(%{{.*}}, %{{.*}}) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: ^bb0(%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>):
  // CHECK:   %[[S:.*]] = arith.addf %[[X]], %[[Y]]
  // CHECK:   dlc.yield %[[S]] : tensor<4xf32>
  %r = dlc.dispatch (%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
    %s = arith.addf %x, %y : tensor<4xf32>
    dlc.yield %s : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// CHECK-LABEL: func @concat
// CHECK: dlc.concat dim(1) %{{.*}}, %{{.*}} : (tensor<1x2x4xf32>, tensor<1x3x4xf32>) -> tensor<1x5x4xf32>
func.func @concat(%a: tensor<1x2x4xf32>, %b: tensor<1x3x4xf32>) -> tensor<1x5x4xf32> {
  %r = dlc.concat dim(1) %a, %b : (tensor<1x2x4xf32>, tensor<1x3x4xf32>) -> tensor<1x5x4xf32>
  return %r : tensor<1x5x4xf32>
}

// CHECK-LABEL: func @view
// CHECK: dlc.view %{{.*}}[8] : tensor<3x2x4xf32> -> tensor<2x4xf32>
func.func @view(%a: tensor<3x2x4xf32>) -> tensor<2x4xf32> {
  %r = dlc.view %a[8] : tensor<3x2x4xf32> -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}

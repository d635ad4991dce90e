// RUN: dlc-opt %s --split-input-file | dlc-opt | FileCheck %s

// CHECK-LABEL: func @round_trip
func.func @round_trip(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: %[[NONE:.*]] = onnx.none
  %none = onnx.none
  // CHECK: onnx.node "Gemm" (%{{.*}}, %{{.*}}, %[[NONE]]) {attrs = {alpha = 2.000000e+00 : f32}, name = "g", version = 13 : i64}
  %0 = onnx.node "Gemm" (%a, %b, %none) {version = 13 : i64, name = "g", attrs = {alpha = 2.0 : f32}} : (tensor<4xf32>, tensor<4xf32>, none) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func @custom_domain
func.func @custom_domain(%a: tensor<4xf32>) -> (tensor<4xf32>, none) {
  // CHECK: onnx.node "Fused" (%{{.*}}) {domain = "com.example", version = 1 : i64}
  %0:2 = onnx.node "Fused" (%a) {domain = "com.example", version = 1 : i64} : (tensor<4xf32>) -> (tensor<4xf32>, none)
  return %0#0, %0#1 : tensor<4xf32>, none
}

// -----

// Subgraph attributes are regions, named by graph_attrs.
// CHECK-LABEL: func @subgraphs
func.func @subgraphs(%c: tensor<i1>, %a: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: onnx.node "If" (%{{.*}}) {graph_attrs = ["then_branch", "else_branch"], version = 13 : i64} : (tensor<i1>) -> tensor<4xf32> {
  // CHECK-NEXT: onnx.yield %{{.*}} : tensor<4xf32>
  // CHECK-NEXT: }, {
  // CHECK-NEXT: onnx.node "Neg"
  // CHECK-NEXT: onnx.yield
  %0 = onnx.node "If" (%c) {version = 13 : i64, graph_attrs = ["then_branch", "else_branch"]} : (tensor<i1>) -> tensor<4xf32> {
    onnx.yield %a : tensor<4xf32>
  }, {
    %n = onnx.node "Neg" (%a) {version = 13 : i64} : (tensor<4xf32>) -> tensor<4xf32>
    onnx.yield %n : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

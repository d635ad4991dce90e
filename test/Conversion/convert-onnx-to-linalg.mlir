// RUN: dlc-opt %s --split-input-file --dlc-convert-onnx-to-linalg | FileCheck %s

// The pass on onnx.node ops written directly: Relu then Add become linalg
// and no onnx op is left.
// CHECK-LABEL: func.func @relu_add
// CHECK-NOT: onnx.node
// CHECK: linalg.generic
// CHECK: arith.maximumf
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK-NOT: onnx.node
// CHECK: return
func.func @relu_add(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = onnx.node "Relu" (%a) {version = 14 : i64, name = "r"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = onnx.node "Add" (%0, %b) {version = 14 : i64, name = "s"} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

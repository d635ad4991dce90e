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

// -----

// int4/uint4 graph inputs and outputs are packed two per byte, low nibble
// first (as ONNX stores them): the argument becomes its bytes and a kernel
// unpacks it; the result is packed by a kernel. dlc.packed_shape keeps the
// ONNX dims for the artifact.
// CHECK-LABEL: func.func @nibbles
// CHECK-SAME: (%[[X:.*]]: tensor<3xi8> {dlc.element_type = i4, dlc.packed_shape = array<i64: 5>}
// CHECK-SAME: -> (tensor<5xf32>, tensor<3xi8> {dlc.element_type = ui4, dlc.packed_shape = array<i64: 2, 3>})
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<5xi4>)
// CHECK:   %[[I:.*]] = linalg.index 0
// CHECK:   %[[B:.*]] = arith.shrui %[[I]], %c1
// CHECK:   %[[BYTE:.*]] = tensor.extract %[[X]][%[[B]]] : tensor<3xi8>
// CHECK:   %[[ODD:.*]] = arith.andi %[[I]], %c1
// CHECK:   arith.shrui %[[BYTE]]
// CHECK:   arith.trunci %{{.*}} : i8 to i4
// CHECK: arith.sitofp %{{.*}} : i4 to f32
// CHECK: arith.fptoui %{{.*}} : f32 to i4
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<2x3xi4> into tensor<6xi4>
// CHECK: %[[P:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<3xi8>)
// CHECK:   arith.cmpi ule
// CHECK:   arith.minui
// CHECK:   tensor.extract %[[FLAT]]
// CHECK:   arith.extui %{{.*}} : i4 to i8
// CHECK:   arith.shli
// CHECK:   arith.select
// CHECK:   arith.ori
// CHECK: return %{{.*}}, %[[P]] : tensor<5xf32>, tensor<3xi8>
func.func @nibbles(%x: tensor<5xi4>, %s: tensor<f32>, %z: tensor<i4>, %f: tensor<2x3xf32>, %zu: tensor<ui4>) -> (tensor<5xf32>, tensor<2x3xui4>) {
  %0 = onnx.node "DequantizeLinear" (%x, %s, %z) {version = 21 : i64, name = "dq"} : (tensor<5xi4>, tensor<f32>, tensor<i4>) -> tensor<5xf32>
  %1 = onnx.node "QuantizeLinear" (%f, %s, %zu) {version = 21 : i64, name = "q"} : (tensor<2x3xf32>, tensor<f32>, tensor<ui4>) -> tensor<2x3xui4>
  return %0, %1 : tensor<5xf32>, tensor<2x3xui4>
}

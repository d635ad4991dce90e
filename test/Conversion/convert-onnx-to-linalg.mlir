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

// -----

// 8- and 4-bit floats are held as their bits (i8, i4): arguments and
// results keep the ONNX type in dlc.element_type, Cast decodes and encodes
// them with integer arithmetic, reshapes move the bits.
// CHECK-LABEL: func.func @float_bits
// CHECK-SAME: (%{{.*}}: tensor<4xi8> {dlc.element_type = f8E4M3FN}
// CHECK-SAME: -> (tensor<4xf32>, tensor<2x2xi8> {dlc.element_type = f8E5M2})
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<4xf32>)
// CHECK:   arith.extui %{{.*}} : i8 to i32
// CHECK:   arith.bitcast %{{.*}} : i32 to f32
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<4xi8>)
// CHECK:   arith.bitcast %{{.*}} : f32 to i32
// CHECK:   arith.trunci %{{.*}} : i32 to i8
// CHECK: tensor.expand_shape
// CHECK-NOT: f8E
func.func @float_bits(%a: tensor<4xf8E4M3FN>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<2x2xf8E5M2>) {
  %s = arith.constant dense<[2, 2]> : tensor<2xi64>
  %0 = onnx.node "Cast" (%a) {version = 19 : i64, name = "d", attrs = {to = 1 : i64}} : (tensor<4xf8E4M3FN>) -> tensor<4xf32>
  %1 = onnx.node "Cast" (%b) {version = 19 : i64, name = "e", attrs = {to = 19 : i64, saturate = 0 : i64}} : (tensor<4xf32>) -> tensor<4xf8E5M2>
  %2 = onnx.node "Reshape" (%1, %s) {version = 19 : i64, name = "r"} : (tensor<4xf8E5M2>, tensor<2xi64>) -> tensor<2x2xf8E5M2>
  return %0, %2 : tensor<4xf32>, tensor<2x2xf8E5M2>
}

// -----

// Casts of constants fold to the format's bits: 448 is E4M3FN's largest
// value (0x7e); 500 rounds beyond it, to the largest when saturating and
// to NaN (0x7f) when not; 0.3 rounds to 0.3125 (0x2a); -2^-9, the smallest
// subnormal, keeps its sign (0x81). Decoding is exact.
// CHECK-LABEL: func.func @float_bits_fold
// CHECK-DAG: arith.constant dense<[126, 126, 42, -127]> : tensor<4xi8>
// CHECK-DAG: arith.constant dense<[126, 127, 42, -127]> : tensor<4xi8>
// CHECK-DAG: arith.constant dense<[1.000000e+00, -2.000000e+00, 4.480000e+02, 0.001953125]> : tensor<4xf32>
// CHECK-NOT: linalg.generic
func.func @float_bits_fold() -> (tensor<4xf8E4M3FN>, tensor<4xf8E4M3FN>, tensor<4xf32>) {
  %x = arith.constant dense<[448.0, 500.0, 0.3, -0.001953125]> : tensor<4xf32>
  %f = arith.constant dense<[1.0, -2.0, 448.0, 0.001953125]> : tensor<4xf8E4M3FN>
  %0 = onnx.node "Cast" (%x) {version = 19 : i64, name = "s", attrs = {to = 17 : i64}} : (tensor<4xf32>) -> tensor<4xf8E4M3FN>
  %1 = onnx.node "Cast" (%x) {version = 19 : i64, name = "n", attrs = {to = 17 : i64, saturate = 0 : i64}} : (tensor<4xf32>) -> tensor<4xf8E4M3FN>
  %2 = onnx.node "Cast" (%f) {version = 19 : i64, name = "d", attrs = {to = 1 : i64}} : (tensor<4xf8E4M3FN>) -> tensor<4xf32>
  return %0, %1, %2 : tensor<4xf8E4M3FN>, tensor<4xf8E4M3FN>, tensor<4xf32>
}

// RUN: dlc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dlc-fold-qdq))' | FileCheck %s

// A QDQ convolution as quantize_static writes it: u8 activations, s8
// weights per output channel (axis 0), int32 bias with scale sx * sw.
// It becomes one QLinearConv on the quantized tensors, with the Conv's
// attributes and name; the DequantizeLinear nodes are gone.
// CHECK-LABEL: func.func @conv
// CHECK-SAME: (%[[XQ:.*]]: tensor<1x4x8x8xui8>)
// CHECK-NOT: "DequantizeLinear"
// CHECK-NOT: "Conv"
// CHECK: %[[Y:.*]] = onnx.node "QLinearConv" (%[[XQ]], %[[SX:.*]], %[[ZX:.*]], %[[WQ:.*]], %[[SW:.*]], %[[ZW:.*]], %[[SY:.*]], %[[ZY:.*]], %[[BQ:.*]]) {attrs = {kernel_shape = [3, 3], pads = [1, 1, 1, 1]}, name = "conv0", version = 10 : i64}
// CHECK-SAME: -> tensor<1x2x8x8xui8>
// CHECK-NOT: "QuantizeLinear"
// CHECK: return %[[Y]]
func.func @conv(%xq: tensor<1x4x8x8xui8>) -> tensor<1x2x8x8xui8> {
  %sx = arith.constant dense<0.5> : tensor<f32>
  %zx = arith.constant dense<3> : tensor<ui8>
  %wq = arith.constant dense<1> : tensor<2x4x3x3xi8>
  %sw = arith.constant dense<[0.25, 0.125]> : tensor<2xf32>
  %zw = arith.constant dense<0> : tensor<2xi8>
  %bq = arith.constant dense<[10, -20]> : tensor<2xi32>
  %sb = arith.constant dense<[0.125, 0.0625]> : tensor<2xf32>
  %zb = arith.constant dense<0> : tensor<2xi32>
  %sy = arith.constant dense<2.0> : tensor<f32>
  %zy = arith.constant dense<7> : tensor<ui8>
  %x = onnx.node "DequantizeLinear" (%xq, %sx, %zx) {version = 13 : i64} : (tensor<1x4x8x8xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x4x8x8xf32>
  %w = onnx.node "DequantizeLinear" (%wq, %sw, %zw) {version = 13 : i64, attrs = {axis = 0 : i64}} : (tensor<2x4x3x3xi8>, tensor<2xf32>, tensor<2xi8>) -> tensor<2x4x3x3xf32>
  %b = onnx.node "DequantizeLinear" (%bq, %sb, %zb) {version = 13 : i64, attrs = {axis = 0 : i64}} : (tensor<2xi32>, tensor<2xf32>, tensor<2xi32>) -> tensor<2xf32>
  %c = onnx.node "Conv" (%x, %w, %b) {version = 11 : i64, name = "conv0", attrs = {kernel_shape = [3, 3], pads = [1, 1, 1, 1]}} : (tensor<1x4x8x8xf32>, tensor<2x4x3x3xf32>, tensor<2xf32>) -> tensor<1x2x8x8xf32>
  %y = onnx.node "QuantizeLinear" (%c, %sy, %zy) {version = 13 : i64} : (tensor<1x2x8x8xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2x8x8xui8>
  return %y : tensor<1x2x8x8xui8>
}

// -----

// Left alone: a bias whose scale is not sx * sw (the integer bias would
// mean something else), and a Conv whose float result is also returned.
// CHECK-LABEL: func.func @bias_scale
// CHECK: onnx.node "Conv"
// CHECK-NOT: QLinearConv
// CHECK-LABEL: func.func @two_uses
// CHECK: onnx.node "Conv"
// CHECK-NOT: QLinearConv
func.func @bias_scale(%xq: tensor<1x4x8x8xui8>) -> tensor<1x2x8x8xui8> {
  %sx = arith.constant dense<0.5> : tensor<f32>
  %zx = arith.constant dense<3> : tensor<ui8>
  %wq = arith.constant dense<1> : tensor<2x4x1x1xi8>
  %sw = arith.constant dense<0.25> : tensor<f32>
  %zw = arith.constant dense<0> : tensor<i8>
  %bq = arith.constant dense<[10, -20]> : tensor<2xi32>
  %sb = arith.constant dense<0.5> : tensor<f32>
  %zb = arith.constant dense<0> : tensor<i32>
  %sy = arith.constant dense<2.0> : tensor<f32>
  %zy = arith.constant dense<7> : tensor<ui8>
  %x = onnx.node "DequantizeLinear" (%xq, %sx, %zx) {version = 13 : i64} : (tensor<1x4x8x8xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x4x8x8xf32>
  %w = onnx.node "DequantizeLinear" (%wq, %sw, %zw) {version = 13 : i64} : (tensor<2x4x1x1xi8>, tensor<f32>, tensor<i8>) -> tensor<2x4x1x1xf32>
  %b = onnx.node "DequantizeLinear" (%bq, %sb, %zb) {version = 13 : i64} : (tensor<2xi32>, tensor<f32>, tensor<i32>) -> tensor<2xf32>
  %c = onnx.node "Conv" (%x, %w, %b) {version = 11 : i64} : (tensor<1x4x8x8xf32>, tensor<2x4x1x1xf32>, tensor<2xf32>) -> tensor<1x2x8x8xf32>
  %y = onnx.node "QuantizeLinear" (%c, %sy, %zy) {version = 13 : i64} : (tensor<1x2x8x8xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2x8x8xui8>
  return %y : tensor<1x2x8x8xui8>
}
func.func @two_uses(%xq: tensor<1x4x8x8xui8>) -> (tensor<1x2x8x8xui8>, tensor<1x2x8x8xf32>) {
  %sx = arith.constant dense<0.5> : tensor<f32>
  %zx = arith.constant dense<3> : tensor<ui8>
  %wq = arith.constant dense<1> : tensor<2x4x1x1xi8>
  %sw = arith.constant dense<0.25> : tensor<f32>
  %zw = arith.constant dense<0> : tensor<i8>
  %sy = arith.constant dense<2.0> : tensor<f32>
  %zy = arith.constant dense<7> : tensor<ui8>
  %x = onnx.node "DequantizeLinear" (%xq, %sx, %zx) {version = 13 : i64} : (tensor<1x4x8x8xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x4x8x8xf32>
  %w = onnx.node "DequantizeLinear" (%wq, %sw, %zw) {version = 13 : i64} : (tensor<2x4x1x1xi8>, tensor<f32>, tensor<i8>) -> tensor<2x4x1x1xf32>
  %c = onnx.node "Conv" (%x, %w) {version = 11 : i64} : (tensor<1x4x8x8xf32>, tensor<2x4x1x1xf32>) -> tensor<1x2x8x8xf32>
  %y = onnx.node "QuantizeLinear" (%c, %sy, %zy) {version = 13 : i64} : (tensor<1x2x8x8xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x2x8x8xui8>
  return %y, %c : tensor<1x2x8x8xui8>, tensor<1x2x8x8xf32>
}

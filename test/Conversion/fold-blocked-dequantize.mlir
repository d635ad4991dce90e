// RUN: dlc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(dlc-fold-blocked-dequantize))' | FileCheck %s

// uint4 weights [K = 40, N = 2] in blocks of 16 along K (three, the last
// padded) with uint4 zero points: MatMulNBits with B packed [N, blocks, 8],
// two values a byte, the even k in the low nibble; scales and zero points
// transposed to column-major blocks (zero points packed two a byte, the
// padding nibble of the last block's byte 0). Column 0's weights are all
// 3, column 1's all 5: bytes 0x33 and 0x55, the padding past K = 40 taking
// the block's zero point (1 in column 0, 4 in column 1: 0x11, 0x44).
// CHECK-LABEL: func.func @uint4
// CHECK-NOT: "DequantizeLinear"
// CHECK-NOT: "MatMul"
// CHECK-DAG: %[[B:.*]] = arith.constant dense<{{\[\[\[}}51, 51, 51, 51, 51, 51, 51, 51], [51, 51, 51, 51, 51, 51, 51, 51], [51, 51, 51, 51, 17, 17, 17, 17]], {{\[\[}}85, 85, 85, 85, 85, 85, 85, 85], [85, 85, 85, 85, 85, 85, 85, 85], [85, 85, 85, 85, 68, 68, 68, 68]]]> : tensor<2x3x8xui8>
// CHECK-DAG: %[[S:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 5.000000e-01, 2.500000e-01, 1.250000e-01]> : tensor<6xf32>
// CHECK-DAG: %[[Z:.*]] = arith.constant dense<[17, 1, 68, 4]> : tensor<4xui8>
// CHECK: onnx.node "MatMulNBits" (%arg0, %[[B]], %[[S]], %[[Z]]) {attrs = {K = 40 : i64, N = 2 : i64, bits = 4 : i64, block_size = 16 : i64}, domain = "com.microsoft", name = "mm", version = 1 : i64} : (tensor<1x40xf32>, tensor<2x3x8xui8>, tensor<6xf32>, tensor<4xui8>) -> tensor<1x2xf32>
func.func @uint4(%a: tensor<1x40xf32>) -> tensor<1x2xf32> {
  %w = arith.constant dense<[[3, 5], [3, 5], [3, 5], [3, 5], [3, 5], [3, 5], [3, 5], [3, 5], [3, 5], [3, 5], [3, 5], [3, 5], [3, 5], [3, 5], [3, 5], [3, 5], [3, 5], [3, 5], [3, 5], [3, 5], [3, 5], [3, 5], [3, 5], [3, 5], [3, 5], [3, 5], [3, 5], [3, 5], [3, 5], [3, 5], [3, 5], [3, 5], [3, 5], [3, 5], [3, 5], [3, 5], [3, 5], [3, 5], [3, 5], [3, 5]]> : tensor<40x2xui4>
  %s = arith.constant dense<[[1.0, 0.5], [2.0, 0.25], [3.0, 0.125]]> : tensor<3x2xf32>
  %z = arith.constant dense<[[1, 4], [1, 4], [1, 4]]> : tensor<3x2xui4>
  %dq = onnx.node "DequantizeLinear" (%w, %s, %z) {attrs = {axis = 0 : i64, block_size = 16 : i64}, version = 21 : i64} : (tensor<40x2xui4>, tensor<3x2xf32>, tensor<3x2xui4>) -> none
  %y = onnx.node "MatMul" (%a, %dq) {name = "mm", version = 21 : i64} : (tensor<1x40xf32>, none) -> tensor<1x2xf32>
  return %y : tensor<1x2xf32>
}

// -----

// Signed int4 without zero points: values and the zero point 0 move up by
// 8 (so MatMulNBits' unsigned fields hold them): -8 -> 0, 7 -> 15, bytes
// 0xF0 = 240, and the one zero point is 8.
// CHECK-LABEL: func.func @int4
// CHECK-DAG: arith.constant dense<240> : tensor<1x1x8xui8>
// CHECK-DAG: arith.constant dense<8> : tensor<1xui8>
// CHECK: onnx.node "MatMulNBits"
func.func @int4(%a: tensor<1x16xf32>) -> tensor<1x1xf32> {
  %w = arith.constant dense<[[-8], [7], [-8], [7], [-8], [7], [-8], [7], [-8], [7], [-8], [7], [-8], [7], [-8], [7]]> : tensor<16x1xi4>
  %s = arith.constant dense<[[0.5]]> : tensor<1x1xf32>
  %dq = onnx.node "DequantizeLinear" (%w, %s) {attrs = {axis = 0 : i64, block_size = 16 : i64}, version = 21 : i64} : (tensor<16x1xi4>, tensor<1x1xf32>) -> none
  %y = onnx.node "MatMul" (%a, %dq) {version = 21 : i64} : (tensor<1x16xf32>, none) -> tensor<1x1xf32>
  return %y : tensor<1x1xf32>
}

// -----

// Blocks of 24 (not a power of two) and blocks along N (axis 1) are not
// what MatMulNBits takes: left as they are.
// CHECK-LABEL: func.func @not_folded
// CHECK: onnx.node "DequantizeLinear"
// CHECK: onnx.node "MatMul"
// CHECK: onnx.node "DequantizeLinear"
// CHECK: onnx.node "MatMul"
// CHECK-NOT: MatMulNBits
func.func @not_folded(%a: tensor<1x48xf32>) -> (tensor<1x2xf32>, tensor<1x32xf32>) {
  %w = arith.constant dense<1> : tensor<48x2xui4>
  %s = arith.constant dense<1.0> : tensor<2x2xf32>
  %dq = onnx.node "DequantizeLinear" (%w, %s) {attrs = {axis = 0 : i64, block_size = 24 : i64}, version = 21 : i64} : (tensor<48x2xui4>, tensor<2x2xf32>) -> none
  %y = onnx.node "MatMul" (%a, %dq) {version = 21 : i64} : (tensor<1x48xf32>, none) -> tensor<1x2xf32>
  %w2 = arith.constant dense<1> : tensor<48x32xui4>
  %s2 = arith.constant dense<1.0> : tensor<48x2xf32>
  %dq2 = onnx.node "DequantizeLinear" (%w2, %s2) {attrs = {axis = 1 : i64, block_size = 16 : i64}, version = 21 : i64} : (tensor<48x32xui4>, tensor<48x2xf32>) -> none
  %y2 = onnx.node "MatMul" (%a, %dq2) {version = 21 : i64} : (tensor<1x48xf32>, none) -> tensor<1x32xf32>
  return %y, %y2 : tensor<1x2xf32>, tensor<1x32xf32>
}

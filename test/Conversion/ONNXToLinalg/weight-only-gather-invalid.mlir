// RUN: dlc-opt %s --split-input-file --verify-diagnostics --dlc-convert-onnx-to-linalg

// com.microsoft.GatherBlockQuantized: every diagnostic.
func.func @not_int4(%i: tensor<2xi64>, %d: tensor<4x32xi8>, %s: tensor<4x2xf32>) -> tensor<2x32xf32> {
  // expected-error @+1 {{node '<unnamed>' (com.microsoft.GatherBlockQuantized, opset 1): not supported: data other than a 2-D int4/uint4 table, or uint8 with bits 4 or 8 (tensor<4x32xi8>, bits=4)}}
  %y = onnx.node "GatherBlockQuantized" (%d, %i, %s) {attrs = {block_size = 16 : i64}, domain = "com.microsoft", version = 1 : i64} : (tensor<4x32xi8>, tensor<2xi64>, tensor<4x2xf32>) -> tensor<2x32xf32>
  return %y : tensor<2x32xf32>
}

// -----

func.func @axes(%i: tensor<2xi64>, %s: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %d = arith.constant dense<1> : tensor<4x32xui4>
  // expected-error @+1 {{not supported: gather_axis 1 and quantize_axis 1 (0 and 1 are)}}
  %y = onnx.node "GatherBlockQuantized" (%d, %i, %s) {attrs = {block_size = 16 : i64, gather_axis = 1 : i64}, domain = "com.microsoft", version = 1 : i64} : (tensor<4x32xui4>, tensor<2xi64>, tensor<4x2xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

func.func @indices(%i: tensor<2xf32>, %s: tensor<4x2xf32>) -> tensor<2x32xf32> {
  %d = arith.constant dense<1> : tensor<4x32xui4>
  // expected-error @+1 {{indices must be int32 or int64, not tensor<2xf32>}}
  %y = onnx.node "GatherBlockQuantized" (%d, %i, %s) {attrs = {block_size = 16 : i64}, domain = "com.microsoft", version = 1 : i64} : (tensor<4x32xui4>, tensor<2xf32>, tensor<4x2xf32>) -> tensor<2x32xf32>
  return %y : tensor<2x32xf32>
}

// -----

func.func @block(%i: tensor<2xi64>, %s: tensor<4x4xf32>) -> tensor<2x32xf32> {
  %d = arith.constant dense<1> : tensor<4x32xui4>
  // expected-error @+1 {{block_size must be a power of 2 and at least 16, not 8}}
  %y = onnx.node "GatherBlockQuantized" (%d, %i, %s) {attrs = {block_size = 8 : i64}, domain = "com.microsoft", version = 1 : i64} : (tensor<4x32xui4>, tensor<2xi64>, tensor<4x4xf32>) -> tensor<2x32xf32>
  return %y : tensor<2x32xf32>
}

// -----

func.func @scales(%i: tensor<2xi64>, %s: tensor<4x3xf32>) -> tensor<2x32xf32> {
  %d = arith.constant dense<1> : tensor<4x32xui4>
  // expected-error @+1 {{scales must be float32 [4, 2], not tensor<4x3xf32>}}
  %y = onnx.node "GatherBlockQuantized" (%d, %i, %s) {attrs = {block_size = 16 : i64}, domain = "com.microsoft", version = 1 : i64} : (tensor<4x32xui4>, tensor<2xi64>, tensor<4x3xf32>) -> tensor<2x32xf32>
  return %y : tensor<2x32xf32>
}

// -----

func.func @not_constant(%i: tensor<2xi64>, %d: tensor<4x32xui4>, %s: tensor<4x2xf32>) -> tensor<2x32xf32> {
  // expected-error @+1 {{not supported: data that is not a constant}}
  %y = onnx.node "GatherBlockQuantized" (%d, %i, %s) {attrs = {block_size = 16 : i64}, domain = "com.microsoft", version = 1 : i64} : (tensor<4x32xui4>, tensor<2xi64>, tensor<4x2xf32>) -> tensor<2x32xf32>
  return %y : tensor<2x32xf32>
}

// -----

func.func @zero_points(%i: tensor<2xi64>, %s: tensor<4x2xf32>) -> tensor<2x32xf32> {
  %d = arith.constant dense<1> : tensor<4x32xui4>
  %z = arith.constant dense<1> : tensor<4x2xi4>
  // expected-error @+1 {{zero_points must be a constant of data's type [4, 2] (packed like data for uint8), not tensor<4x2xi4>}}
  %y = onnx.node "GatherBlockQuantized" (%d, %i, %s, %z) {attrs = {block_size = 16 : i64}, domain = "com.microsoft", version = 1 : i64} : (tensor<4x32xui4>, tensor<2xi64>, tensor<4x2xf32>, tensor<4x2xi4>) -> tensor<2x32xf32>
  return %y : tensor<2x32xf32>
}

// RUN: dlc-opt %s --split-input-file --verify-diagnostics --dlc-convert-onnx-to-linalg

// A node from an unknown domain names itself, its domain and its opset.
func.func @unknown(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{node 'f' (Fused, opset 1): unsupported operator in domain 'com.example'}}
  %0 = onnx.node "Fused" (%a) {domain = "com.example", version = 1 : i64, name = "f"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Every unsupported node is reported, not just the first: a newer opset
// than dlc knows, and an unknown standard operator.
func.func @several(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{node 'r' (Relu, opset 99): the model uses ai.onnx opset 99, newer than the newest dlc knows}}
  %0 = onnx.node "Relu" (%a) {version = 99 : i64, name = "r"} : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @below {{node 'w' (NoSuchOp, opset 17): unsupported operator}}
  %1 = onnx.node "NoSuchOp" (%0) {version = 17 : i64, name = "w"} : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

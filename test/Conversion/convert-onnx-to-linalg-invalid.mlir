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

// -----

// Control-flow nodes whose subgraphs do not fit them (the importer's
// ONNX checks catch these in models; hand-written IR reaches the handlers).
func.func @if_missing_branch(%a: tensor<4xf32>) -> tensor<4xf32> {
  %c = arith.constant dense<false> : tensor<i1>
  // expected-error @below {{node 'i' (If, opset 13): missing subgraph attribute 'else_branch'}}
  %0 = onnx.node "If" (%c) {version = 13 : i64, name = "i", graph_attrs = ["then_branch"]} : (tensor<i1>) -> tensor<4xf32> {
    onnx.yield %a : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @if_branch_outputs(%a: tensor<4xf32>) -> tensor<4xf32> {
  %c = arith.constant dense<true> : tensor<i1>
  // expected-error @below {{node 'i' (If, opset 13): the then_branch has 2 outputs but the node has 1}}
  %0 = onnx.node "If" (%c) {version = 13 : i64, name = "i", graph_attrs = ["then_branch", "else_branch"]} : (tensor<i1>) -> tensor<4xf32> {
    onnx.yield %a, %a : tensor<4xf32>, tensor<4xf32>
  }, {
    onnx.yield %a : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @if_branch_inputs(%a: tensor<4xf32>) -> tensor<4xf32> {
  %c = arith.constant dense<true> : tensor<i1>
  // expected-error @below {{node 'i' (If, opset 13): the then_branch declares inputs; If branches take none}}
  %0 = onnx.node "If" (%c) {version = 13 : i64, name = "i", graph_attrs = ["then_branch", "else_branch"]} : (tensor<i1>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    onnx.yield %x : tensor<4xf32>
  }, {
    onnx.yield %a : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @loop_body_arity(%a: tensor<4xf32>) -> tensor<4xf32> {
  %m = arith.constant dense<2> : tensor<i64>
  %none = onnx.none
  // expected-error @below {{node 'l' (Loop, opset 13): the body takes 1 inputs and returns 1 outputs; a Loop body takes the iteration number, the condition and the loop-carried values, and returns the condition, the loop-carried values and scan outputs}}
  %0 = onnx.node "Loop" (%m, %none, %a) {version = 13 : i64, name = "l", graph_attrs = ["body"]} : (tensor<i64>, none, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%i: tensor<i64>):
    onnx.yield %a : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @loop_node_arity(%a: tensor<4xf32>) -> tensor<4xf32> {
  %m = arith.constant dense<2> : tensor<i64>
  %none = onnx.none
  // expected-error @below {{node 'l' (Loop, opset 13): the node has 1 outputs and 3 inputs, but its body carries 2 values and returns 0 scan outputs}}
  %0 = onnx.node "Loop" (%m, %none, %a) {version = 13 : i64, name = "l", graph_attrs = ["body"]} : (tensor<i64>, none, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %x: tensor<4xf32>, %y: tensor<4xf32>):
    onnx.yield %c, %x, %y : tensor<i1>, tensor<4xf32>, tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

// -----

func.func @scan_inputs(%a: tensor<3x4xf32>) -> tensor<3x4xf32> {
  // expected-error @below {{node 's' (Scan, opset 16): num_scan_inputs is 0 for a node with 1 inputs}}
  %0 = onnx.node "Scan" (%a) {version = 16 : i64, name = "s", attrs = {num_scan_inputs = 0 : i64}, graph_attrs = ["body"]} : (tensor<3x4xf32>) -> tensor<3x4xf32> {
  ^bb0(%x: tensor<4xf32>):
    onnx.yield %x : tensor<4xf32>
  }
  return %0 : tensor<3x4xf32>
}

// -----

func.func @scan_body_arity(%a: tensor<3x4xf32>) -> tensor<3x4xf32> {
  // expected-error @below {{node 's' (Scan, opset 16): the body takes 2 inputs and returns 1 outputs; the node has 1 inputs and 1 outputs}}
  %0 = onnx.node "Scan" (%a) {version = 16 : i64, name = "s", attrs = {num_scan_inputs = 1 : i64}, graph_attrs = ["body"]} : (tensor<3x4xf32>) -> tensor<3x4xf32> {
  ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
    onnx.yield %x : tensor<4xf32>
  }
  return %0 : tensor<3x4xf32>
}

// -----

// Kernels hold 8- and 4-bit floats as their bits: arithmetic on them is
// refused, not computed on the bits as integers.
func.func @float_bits_arith(%a: tensor<4xf8E4M3FN>) -> tensor<4xf8E4M3FN> {
  // expected-error @below {{node 'a' (Add, opset 14): not supported: input 0 of type FLOAT8E4M3FN; 8- and 4-bit floats are read by Cast, CastLike, QuantizeLinear, DequantizeLinear and the reshapes (Identity, Reshape, Flatten, Squeeze, Unsqueeze, Transpose) only}}
  %0 = onnx.node "Add" (%a, %a) {version = 14 : i64, name = "a"} : (tensor<4xf8E4M3FN>, tensor<4xf8E4M3FN>) -> tensor<4xf8E4M3FN>
  return %0 : tensor<4xf8E4M3FN>
}

// -----

// 8-bit float quantization came with opset 19.
func.func @float8_quantize_opset(%x: tensor<4xf32>, %s: tensor<f32>, %z: tensor<f8E4M3FN>) -> tensor<4xf8E4M3FN> {
  // expected-error @below {{node 'q' (QuantizeLinear, opset 13): not supported: the output of type f8E4M3FN before opset 19}}
  %0 = onnx.node "QuantizeLinear" (%x, %s, %z) {version = 13 : i64, name = "q"} : (tensor<4xf32>, tensor<f32>, tensor<f8E4M3FN>) -> tensor<4xf8E4M3FN>
  return %0 : tensor<4xf8E4M3FN>
}

// -----

// Only ONNX's small floats are held as bits; other formats (here MLIR's
// E3M4, which no ONNX type is) are refused by name.
func.func @float_bits_other_format(%a: tensor<4xf8E3M4>) -> tensor<4xf32> {
  // expected-error @below {{node 'c' (Cast, opset 24): not supported: input 0 of type f8E3M4, a float format dlc does not support}}
  %0 = onnx.node "Cast" (%a) {version = 24 : i64, name = "c", attrs = {to = 1 : i64}} : (tensor<4xf8E3M4>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// ScatterElements' checks that ONNX's shape inference makes before the
// handler when a model is imported.
func.func @scatter_elements_scalar(%d: tensor<f32>, %i: tensor<i64>) -> tensor<f32> {
  // expected-error @below {{node 's' (ScatterElements, opset 18): data must have rank 1 or more}}
  %0 = onnx.node "ScatterElements" (%d, %i, %d) {version = 18 : i64, name = "s"} : (tensor<f32>, tensor<i64>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @scatter_elements_types(%d: tensor<4xf32>, %i: tensor<2xi64>, %u: tensor<2xf16>) -> tensor<4xf32> {
  // expected-error @below {{node 's' (ScatterElements, opset 18): updates and data have different element types}}
  %0 = onnx.node "ScatterElements" (%d, %i, %u) {version = 18 : i64, name = "s"} : (tensor<4xf32>, tensor<2xi64>, tensor<2xf16>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

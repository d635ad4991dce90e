// RUN: dlc-opt %s --split-input-file --verify-diagnostics

func.func @empty_op_type(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{'onnx.node' op has an empty op_type}}
  %0 = onnx.node "" (%a) {version = 13 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @bad_version(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{attribute 'version' failed to satisfy constraint}}
  %0 = onnx.node "Relu" (%a) {version = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @unnamed_region(%c: tensor<i1>, %a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{'onnx.node' op has 2 subgraph regions but names 1 in graph_attrs}}
  %0 = onnx.node "If" (%c) {version = 13 : i64, graph_attrs = ["then_branch"]} : (tensor<i1>) -> tensor<4xf32> {
    onnx.yield %a : tensor<4xf32>
  }, {
    onnx.yield %a : tensor<4xf32>
  }
  return %0 : tensor<4xf32>
}

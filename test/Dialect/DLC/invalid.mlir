// RUN: dlc-opt %s --split-input-file --verify-diagnostics

func.func @arg_count(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{'dlc.dispatch' op body has 0 arguments but the dispatch has 1 operands}}
  %r = dlc.dispatch (%a) : (tensor<4xf32>) -> tensor<4xf32> {
    %c = arith.constant dense<1.0> : tensor<4xf32>
    dlc.yield %c : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @arg_type(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{'dlc.dispatch' op body argument #0 has type 'tensor<4xi32>' but operand #0 has type 'tensor<4xf32>'}}
  %r = dlc.dispatch (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xi32>):
    %c = arith.constant dense<1.0> : tensor<4xf32>
    dlc.yield %c : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @yield_type(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{'dlc.dispatch' op yields 'tensor<8xf32>' but its results are 'tensor<4xf32>'}}
  %r = dlc.dispatch (%a) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    %c = arith.constant dense<1.0> : tensor<8xf32>
    dlc.yield %c : tensor<8xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @captures(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-note @below {{required by region isolation constraints}}
  %r = dlc.dispatch () : () -> tensor<4xf32> {
    // expected-error @below {{'dlc.yield' op using value defined outside the region}}
    dlc.yield %a : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @launch_missing(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{'dlc.launch' op refers to 'nope', which is not a function}}
  %r = dlc.launch @nope(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func private @not_a_kernel(tensor<4xf32>) -> tensor<4xf32>
func.func @launch_not_kernel(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{'dlc.launch' op refers to 'not_a_kernel', which is not marked dlc.kernel}}
  %r = dlc.launch @not_a_kernel(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func private @k(tensor<8xf32>) -> tensor<4xf32> attributes {dlc.kernel}
func.func @launch_types(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{'dlc.launch' op operand or result types do not match the type '(tensor<8xf32>) -> tensor<4xf32>' of kernel 'k'}}
  %r = dlc.launch @k(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @concat_rows(%a: tensor<2x4xf32>) -> tensor<2x8xf32> {
  // expected-error @below {{'dlc.concat' op dim 0 before the concatenated dim 1 has size 2, so an operand is not one contiguous range of the result}}
  %r = dlc.concat dim(1) %a, %a : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x8xf32>
  return %r : tensor<2x8xf32>
}

// -----

func.func @concat_sum(%a: tensor<1x4xf32>) -> tensor<1x9xf32> {
  // expected-error @below {{'dlc.concat' op operands add up to 8 in dim 1 but the result has 9}}
  %r = dlc.concat dim(1) %a, %a : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x9xf32>
  return %r : tensor<1x9xf32>
}

// -----

func.func @concat_other_dim(%a: tensor<1x4x2xf32>, %b: tensor<1x4x3xf32>) -> tensor<1x8x2xf32> {
  // expected-error @below {{'dlc.concat' op operand #1 has size 3 in dim 2 but the result has 2}}
  %r = dlc.concat dim(1) %a, %b : (tensor<1x4x2xf32>, tensor<1x4x3xf32>) -> tensor<1x8x2xf32>
  return %r : tensor<1x8x2xf32>
}

// -----

func.func @concat_type(%a: tensor<4xf32>, %b: tensor<4xi32>) -> tensor<8xf32> {
  // expected-error @below {{'dlc.concat' op operand #1 has type 'tensor<4xi32>', incompatible with the result 'tensor<8xf32>'}}
  %r = dlc.concat dim(0) %a, %b : (tensor<4xf32>, tensor<4xi32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

func.func @concat_dim(%a: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error @below {{'dlc.concat' op dim 1 is out of range for rank 1}}
  %r = dlc.concat dim(1) %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

func.func @concat_dynamic(%a: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @below {{'dlc.concat' op needs static shapes: it places buffers}}
  %r = dlc.concat dim(0) %a, %a : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// -----

func.func @concat_empty() -> tensor<8xf32> {
  // expected-error @below {{'dlc.concat' op needs at least one operand}}
  %r = dlc.concat dim(0) : () -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

func.func @view_range(%a: tensor<2x4xf32>) -> tensor<1x4xf32> {
  // expected-error @below {{'dlc.view' op elements 5 to 8 are not all inside the operand's 8}}
  %r = dlc.view %a[5] : tensor<2x4xf32> -> tensor<1x4xf32>
  return %r : tensor<1x4xf32>
}

// -----

func.func @view_type(%a: tensor<8xf32>) -> tensor<4xi32> {
  // expected-error @below {{'dlc.view' op result element type 'i32' differs from the operand's 'f32'}}
  %r = dlc.view %a[0] : tensor<8xf32> -> tensor<4xi32>
  return %r : tensor<4xi32>
}

// -----

func.func @view_dynamic(%a: tensor<?xf32>) -> tensor<4xf32> {
  // expected-error @below {{'dlc.view' op needs static shapes: it places buffers}}
  %r = dlc.view %a[0] : tensor<?xf32> -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// The dlc.* attributes the stages pass to each other are declared and
// checked: type, value range and place.

// expected-error @below {{'dlc.kernel' must be a unit attribute}}
func.func private @kernel_value() attributes {dlc.kernel = 3}

// -----

func.func @kernel_on_op() {
  // expected-error @below {{'dlc.kernel' must be on a function}}
  %c = arith.constant {dlc.kernel} 0 : i32
  return
}

// -----

// expected-error @below {{'dlc.grid' must be three positive integers (x, y, z)}}
func.func private @grid_zero() attributes {dlc.kernel, dlc.grid = array<i64: 1, 0, 1>}

// -----

// expected-error @below {{'dlc.workgroup_size' must be three positive integers (x, y, z)}}
func.func private @workgroup_two() attributes {dlc.kernel, dlc.workgroup_size = array<i64: 64, 1>}

// -----

// expected-error @below {{'dlc.scratch_size' must be a non-negative integer}}
func.func private @scratch() attributes {dlc.kernel, dlc.scratch_size = -64 : i64}

// -----

// expected-error @below {{'dlc.subgroup_lanes' must be a positive integer}}
func.func private @lanes() attributes {dlc.kernel, dlc.subgroup_lanes = 0 : i64}

// -----

// expected-error @below {{'dlc.graph_name' must be a string}}
func.func private @graph_name() attributes {dlc.graph_name = 1 : i64}

// -----

// expected-error @below {{'dlc.onnx.node_count' must be on a module}}
func.func private @node_count() attributes {dlc.onnx.node_count = 1 : i64}

// -----

// expected-error @below {{'dlc.onnx.node_count' must be a non-negative integer}}
module attributes {dlc.onnx.node_count = -1 : i64} {
}

// -----

// expected-error @below {{'dlc.onnx.opsets' must be a dictionary of domains to integer versions}}
module attributes {dlc.onnx.opsets = {ai.onnx = "17"}} {
}

// -----

// expected-error @below {{'dlc.onnx.producer' must be a string}}
module attributes {dlc.onnx.producer = 2 : i64} {
}

// -----

func.func @fused(%a: f32) -> f32 {
  // expected-error @below {{'dlc.fused' must be a unit attribute}}
  %r = math.fma %a, %a, %a {dlc.fused = 1 : i64} : f32
  return %r : f32
}

// -----

func.func @iteration() {
  // expected-error @below {{'dlc.loop_iteration' must be a non-negative integer}}
  %c = arith.constant {dlc.loop_iteration = -1 : i64} 0 : i32
  return
}

// -----

func.func @sparse_rows_zero(%w: tensor<4xf32>, %o: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{'dlc.sparse_rows' must be a positive integer}}
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%w : tensor<4xf32>) outs(%o : tensor<4xf32>) attrs = {dlc.sparse_rows = 0 : i64} {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @sparse_rows_not_generic() {
  // expected-error @below {{'dlc.sparse_rows' must be on a linalg.generic}}
  %c = arith.constant {dlc.sparse_rows = 4 : i64} 0 : i32
  return
}

// -----

func.func @sparse_pairs(%w: tensor<4xf32>, %o: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{'dlc.sparse_pairs' must be two non-negative integers (kept, all)}}
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%w : tensor<4xf32>) outs(%o : tensor<4xf32>) attrs = {dlc.sparse_pairs = array<i64: 3>} {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @sparse_pairs_not_generic() {
  // expected-error @below {{'dlc.sparse_pairs' must be on a linalg.generic}}
  %c = arith.constant {dlc.sparse_pairs = array<i64: 1, 2>} 0 : i32
  return
}

// -----

func.func @branch_arm() {
  // expected-error @below {{'dlc.branch' must be two integers (branch id >= 0, arm 0 or 1)}}
  %c = arith.constant {dlc.branch = array<i64: 0, 2>} 0 : i32
  return
}

// -----

func.func @selects_negative() {
  // expected-error @below {{'dlc.selects' must be a non-negative integer}}
  %c = arith.constant {dlc.selects = -1 : i64} 0 : i32
  return
}

// -----

// expected-error @below {{'dlc.run_if' must be two integers (operand index >= 0, value 0 or 1)}}
func.func private @run_if_one() attributes {dlc.kernel, dlc.run_if = array<i64: 1>}

// -----

func.func @run_if_on_op() {
  // expected-error @below {{'dlc.run_if' must be on a dispatch or a function}}
  %c = arith.constant {dlc.run_if = array<i64: 0, 1>} 0 : i32
  return
}

// -----

// expected-error @below {{unknown attribute 'dlc.kernal' of the dlc dialect}}
func.func private @typo() attributes {dlc.kernal}

// -----

// expected-error @below {{'dlc.name' on argument 0 must be a string}}
func.func private @arg_name(tensor<4xf32> {dlc.name = 1 : i64})

// -----

// expected-error @below {{'dlc.element_type' on argument 0 must be an integer or float type}}
func.func private @arg_type(tensor<4xi8> {dlc.element_type = "ui8"})

// -----

// expected-error @below {{'dlc.packed_shape' on result 0 must be an array of non-negative i64 dims}}
func.func private @result_shape() -> (tensor<2xi8> {dlc.packed_shape = array<i64: -1>})

// -----

// expected-error @below {{unknown attribute 'dlc.grid' on argument 0 (the dlc dialect declares dlc.name, dlc.element_type and dlc.packed_shape there)}}
func.func private @arg_grid(tensor<4xf32> {dlc.grid = array<i64: 1, 1, 1>})

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

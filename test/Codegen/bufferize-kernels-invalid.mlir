// RUN: dlc-opt %s --dlc-bufferize-kernels --verify-diagnostics

// expected-error @below {{kernel operands and results must be statically shaped tensors}}
func.func @dynamic(%a: tensor<?xf32>) -> tensor<?xf32> attributes {dlc.kernel} {
  return %a : tensor<?xf32>
}

//===- ONNXDialect.td - the generic ONNX node dialect ------*- tablegen -*-===//
//
// The importer is syntactic: every ONNX node becomes one `onnx.node` op that
// carries the node's op type, domain, opset version, name and attributes.
// Meaning is given to these ops only by the conversion handlers.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DIALECT_ONNX_IR_ONNXDIALECT_TD
#define DLC_DIALECT_ONNX_IR_ONNXDIALECT_TD

include "mlir/IR/OpBase.td"

def ONNX_Dialect : Dialect {
  let name = "onnx";
  let cppNamespace = "::dlc::onnx";
  let summary = "Generic, syntactic form of ONNX graphs";
  let description = [{
    A one-to-one image of an ONNX graph. Each node is an `onnx.node` whose
    `op_type`, `domain` and `version` (the opset version in force for the
    node's domain) select the conversion handler that gives it meaning.
    Missing optional inputs are values of type `none` from `onnx.none`.
  }];
}

class ONNX_Op<string mnemonic, list<Trait> traits = []>
    : Op<ONNX_Dialect, mnemonic, traits>;

#endif // DLC_DIALECT_ONNX_IR_ONNXDIALECT_TD

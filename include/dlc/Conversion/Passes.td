//===- Passes.td - dlc conversion passes -------------------*- tablegen -*-===//

#ifndef DLC_CONVERSION_PASSES_TD
#define DLC_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertONNXToLinalg : Pass<"dlc-convert-onnx-to-linalg", "mlir::ModuleOp"> {
  let summary = "Give ONNX nodes meaning: onnx.node to linalg/tensor/arith/math";
  let description = [{
    Converts every `onnx.node` of every function with the handler registered
    for its (domain, op type) and opset version, in program order, so that
    each handler sees converted, statically shaped inputs. Shape subgraphs
    (Shape -> Gather -> Concat -> Reshape and friends) fold to constants on
    the way, so the result is fully static.

    Unsigned ONNX element types become signless; the original type of
    function arguments and results is kept in a `dlc.element_type`
    attribute. int4/uint4 arguments and results are packed two per byte
    (low nibble first, as ONNX stores them): the argument becomes its bytes,
    unpacked by a linalg.generic, and the result is packed by one;
    `dlc.packed_shape` keeps their ONNX dims.

    Fails, after reporting every node it cannot convert, when an op has no
    handler, the opset is outside what dlc knows, or a handler rejects the
    node; each diagnostic names the node, op type, opset and reason.
  }];
  let dependentDialects = [
    "mlir::arith::ArithDialect",
    "mlir::linalg::LinalgDialect",
    "mlir::math::MathDialect",
    "mlir::tensor::TensorDialect",
  ];
}

#endif // DLC_CONVERSION_PASSES_TD

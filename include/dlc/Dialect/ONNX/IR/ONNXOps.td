//===- ONNXOps.td - generic ONNX node ops ------------------*- tablegen -*-===//

#ifndef DLC_DIALECT_ONNX_IR_ONNXOPS_TD
#define DLC_DIALECT_ONNX_IR_ONNXOPS_TD

include "dlc/Dialect/ONNX/IR/ONNXDialect.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/BuiltinAttributes.td"

def ONNX_NodeOp : ONNX_Op<"node"> {
  let summary = "One ONNX node, kept exactly as the model states it";
  let description = [{
    `op_type`, `domain` (empty for the default `ai.onnx` domain) and `version`
    (the opset imported for that domain) identify the operator. The node's
    ONNX attributes live in `attrs`, keyed by their ONNX names; `name` is the
    node name from the model and is used in every diagnostic about the node.

    A node with subgraph attributes (`If`, `Loop`, `Scan`) holds each
    subgraph as a region: `graph_attrs` names the attribute of each region,
    in region order. A region's block arguments are the subgraph's inputs,
    its `onnx.yield` returns the subgraph's outputs, and its ops may read
    values of the enclosing graphs, as ONNX subgraphs do.

    Example:

    ```mlir
    %y = onnx.node "Relu" (%x) {version = 14 : i64, name = "relu_1"}
        : (tensor<1x8xf32>) -> tensor<1x8xf32>
    %c = onnx.node "Conv" (%x, %w, %none)
        {version = 11 : i64, attrs = {pads = [1, 1, 1, 1]}}
        : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none)
        -> tensor<1x4x8x8xf32>
    %r = onnx.node "If" (%cond) {version = 13 : i64,
        graph_attrs = ["then_branch", "else_branch"]}
        : (tensor<i1>) -> tensor<1x8xf32> {
      onnx.yield %x : tensor<1x8xf32>
    }, {
      onnx.yield %y : tensor<1x8xf32>
    }
    ```
  }];
  let arguments = (ins
    StrAttr:$op_type,
    DefaultValuedStrAttr<StrAttr, "">:$domain,
    ConfinedAttr<I64Attr, [IntPositive]>:$version,
    OptionalAttr<StrAttr>:$name,
    DefaultValuedAttr<DictionaryAttr, "{}">:$attrs,
    OptionalAttr<StrArrayAttr>:$graph_attrs,
    Variadic<AnyType>:$inputs);
  let results = (outs Variadic<AnyType>:$outputs);
  let regions = (region VariadicRegion<SizedRegion<1>>:$graphs);
  let assemblyFormat = [{
    $op_type ` ` `(` $inputs `)` attr-dict `:` functional-type($inputs, $outputs)
    ($graphs^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The node name when the model gives one, else the importer's
    /// "OpType#index" location name, else "<unnamed>".
    ::llvm::StringRef getDisplayName();
    /// Looks up an ONNX attribute by its ONNX name.
    ::mlir::Attribute getOnnxAttr(::llvm::StringRef attrName) {
      return getAttrs().get(attrName);
    }
    /// True when input `i` exists and is not a `none` placeholder.
    bool hasInput(unsigned i);
    /// The region holding subgraph attribute `attrName`, or null.
    ::mlir::Region *getGraph(::llvm::StringRef attrName);
  }];
}

def ONNX_YieldOp : ONNX_Op<"yield", [Pure, Terminator,
                                      HasParent<"NodeOp">]> {
  let summary = "The outputs of an ONNX subgraph";
  let description = [{
    Ends the region of a subgraph attribute; its operands are the
    subgraph's outputs in the order the subgraph lists them.
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
}

def ONNX_NoneOp : ONNX_Op<"none", [Pure]> {
  let summary = "Placeholder for an omitted optional ONNX input";
  let description = [{
    ONNX marks a missing optional input with an empty name. The importer
    passes the result of `onnx.none` in its place.

    ```mlir
    %none = onnx.none
    ```
  }];
  let results = (outs NoneType:$result);
  let assemblyFormat = "attr-dict";
}

#endif // DLC_DIALECT_ONNX_IR_ONNXOPS_TD

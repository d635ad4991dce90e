//===- DLCOps.td - dlc host and dispatch ops ---------------*- tablegen -*-===//

#ifndef DLC_DIALECT_DLC_IR_DLCOPS_TD
#define DLC_DIALECT_DLC_IR_DLCOPS_TD

include "dlc/Dialect/DLC/IR/DLCDialect.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/CallInterfaces.td"

def DLC_DispatchOp : DLC_Op<"dispatch", [
    IsolatedFromAbove,
    SingleBlockImplicitTerminator<"::dlc::YieldOp">,
    RecursiveMemoryEffects]> {
  let summary = "A fused region that becomes exactly one kernel";
  let description = [{
    The body computes the results from the operands on tensors and is
    isolated from above: everything the kernel reads is an operand (or a
    splat constant cloned into the body). The entry block has one argument
    per operand, with the operand's type.

    ```mlir
    %r = dlc.dispatch (%a, %b) : (tensor<4xf32>, tensor<4xf32>)
        -> tensor<4xf32> {
    ^bb0(%x: tensor<4xf32>, %y: tensor<4xf32>):
      %s = arith.addf %x, %y : tensor<4xf32>
      dlc.yield %s : tensor<4xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `(` $inputs `)` `:` functional-type($inputs, $results) $body attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
    ::dlc::YieldOp getYield();
  }];
}

def DLC_YieldOp : DLC_Op<"yield", [
    Pure, ReturnLike, Terminator, HasParent<"::dlc::DispatchOp">]> {
  let summary = "Returns the results of a dispatch region";
  let arguments = (ins Variadic<AnyRankedTensor>:$values);
  let builders = [OpBuilder<(ins), [{ /* nothing */ }]>];
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

def DLC_LaunchOp : DLC_Op<"launch", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Runs one kernel on tensors (the host side of a dispatch)";
  let description = [{
    After outlining, each dispatch region is a kernel function marked
    `dlc.kernel`, and the host program launches it with `dlc.launch`. The
    operands and results are whole tensors; the memory planner assigns
    each a buffer in the arena or in the constant section.

    ```mlir
    %r = dlc.launch @k0_generic(%a, %b)
        : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$kernel,
                       Variadic<AnyRankedTensor>:$inputs);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $kernel `(` $inputs `)` attr-dict `:` functional-type($inputs, $results)
  }];
}

#endif // DLC_DIALECT_DLC_IR_DLCOPS_TD

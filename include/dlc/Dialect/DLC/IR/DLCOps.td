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

def DLC_ConcatOp : DLC_Op<"concat", [Pure]> {
  let summary = "Operands laid side by side in the result's buffer, no kernel";
  let description = [{
    The concatenation of the operands along `dim`, where every dim before
    `dim` has size 1, so that each operand is one contiguous range of the
    result's bytes. The memory planner gives the result one buffer and
    places each operand's buffer inside it, so the kernels that compute the
    operands write the result in place and nothing runs for the op itself
    (`dlc-concat-in-place` creates it). Operands must be results of kernels
    (or of other `dlc.concat` ops), each the operand of one `dlc.concat`
    only: a value lives in one place.

    ```mlir
    %r = dlc.concat dim(1) %a, %b
        : (tensor<1x64x55x55xf32>, tensor<1x64x55x55xf32>)
        -> tensor<1x128x55x55xf32>
    ```
  }];
  let arguments = (ins I64Attr:$dim, Variadic<AnyRankedTensor>:$inputs);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    `dim` `(` $dim `)` $inputs attr-dict `:` functional-type($inputs, $result)
  }];
  let hasVerifier = 1;
}

def DLC_ViewOp : DLC_Op<"view", [Pure]> {
  let summary = "A contiguous range of the operand's elements, no kernel";
  let description = [{
    The elements `offset` to `offset + n - 1` of the operand (row-major,
    `n` the result's element count) as a tensor of the result's shape:
    what an `extract_slice` that takes whole trailing dims and one range of
    the dim before them (a channel split with batch 1, one head of a fused
    QKV tensor) reads. The memory planner places the result inside the
    operand's buffer, `offset` elements in, so nothing runs for the op
    (`dlc-slice-in-place` creates it); the operand's buffer lives as long as
    the view is used.

    ```mlir
    %q = dlc.view %qkv[151296] : tensor<3x1x3x197x64xf32> -> tensor<1x3x197x64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$source, I64Attr:$offset);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $source `[` $offset `]` attr-dict `:` type($source) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // DLC_DIALECT_DLC_IR_DLCOPS_TD

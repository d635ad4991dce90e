//===- DLCDialect.td - dlc host and dispatch dialect -------*- tablegen -*-===//

#ifndef DLC_DIALECT_DLC_IR_DLCDIALECT_TD
#define DLC_DIALECT_DLC_IR_DLCDIALECT_TD

include "mlir/IR/OpBase.td"

def DLC_Dialect : Dialect {
  let name = "dlc";
  let cppNamespace = "::dlc";
  let summary = "Dispatch regions and the host program of a compiled model";
  let description = [{
    After fusion, a model is a host function whose body is a sequence of
    `dlc.dispatch` regions. Each region becomes exactly one kernel on the
    target; everything between regions is host-side bookkeeping (buffer
    aliasing) that costs no launch.

    The `dlc.*` attributes that carry facts between stages (kernel marks,
    launch shapes, the graph's names and ONNX element types) are declared
    in DLC.h and verified here.
  }];
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
}

class DLC_Op<string mnemonic, list<Trait> traits = []>
    : Op<DLC_Dialect, mnemonic, traits>;

#endif // DLC_DIALECT_DLC_IR_DLCDIALECT_TD

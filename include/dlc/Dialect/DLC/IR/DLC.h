//===- DLC.h - dlc host and dispatch dialect --------------------*- C++ -*-===//

#ifndef DLC_DIALECT_DLC_IR_DLC_H
#define DLC_DIALECT_DLC_IR_DLC_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dlc/Dialect/DLC/IR/DLCDialect.h.inc"

#define GET_OP_CLASSES
#include "dlc/Dialect/DLC/IR/DLCOps.h.inc"

namespace dlc {

//===--- Attributes the stages pass to each other ------------------------===//
//
// Declared here and verified by the dialect (verifyOperationAttribute and
// the region argument/result verifiers): a `dlc.*` attribute of another
// name, type or place is an error.

/// Functions: marks a kernel (unit).
constexpr llvm::StringLiteral kKernelAttr = "dlc.kernel";
/// Kernels: the workgroup grid (x, y, z), positive.
constexpr llvm::StringLiteral kGridAttr = "dlc.grid";
/// Kernels: threads per workgroup (x, y, z), positive.
constexpr llvm::StringLiteral kWorkgroupSizeAttr = "dlc.workgroup_size";
/// CPU kernels: the bytes of scratch the kernel takes as its last argument
/// (dlc-cpu-scratch); absent: the kernel takes none.
constexpr llvm::StringLiteral kScratchSizeAttr = "dlc.scratch_size";
/// GPU kernels whose x threads are lanes that share row reductions
/// (dlc-gpu-subgroup-rows): their number.
constexpr llvm::StringLiteral kSubgroupLanesAttr = "dlc.subgroup_lanes";
/// The main function: the ONNX graph's name (string).
constexpr llvm::StringLiteral kGraphNameAttr = "dlc.graph_name";
/// The module: ONNX nodes imported (integer), the model's opset imports
/// (dictionary of domain to integer version) and its producer (string).
constexpr llvm::StringLiteral kOnnxNodeCountAttr = "dlc.onnx.node_count";
constexpr llvm::StringLiteral kOnnxOpsetsAttr = "dlc.onnx.opsets";
constexpr llvm::StringLiteral kOnnxProducerAttr = "dlc.onnx.producer";
/// math.fma: kept fused where the target has FMA (unit).
constexpr llvm::StringLiteral kFusedAttr = "dlc.fused";
/// linalg ops whose result kernels read from memory in its own layout
/// (dlc-int8-dot-conv's input repack): dispatch formation does not fold it
/// into its users as a prologue (unit).
constexpr llvm::StringLiteral kMaterializeAttr = "dlc.materialize";
/// ONNX nodes of an unrolled Loop body: the iteration (integer).
constexpr llvm::StringLiteral kLoopIterationAttr = "dlc.loop_iteration";
/// On the Where that keeps a loop-carried value when a Loop's run-time
/// condition is false: its two value inputs must have the same type (a
/// value whose shape changes across iterations cannot be selected).
constexpr llvm::StringLiteral kLoopCarriedSelectAttr =
    "dlc.loop_carried_select";
/// Ops that compute values of one branch of a run-time condition (an If's
/// then or else branch, an iteration of a Loop whose condition is computed):
/// the branch's id and arm (1: runs when the condition is true, 0: when it
/// is false) as two non-negative integers. Set by the ONNX conversion,
/// read by dlc-predicate-dispatches; passes that rebuild an op drop it,
/// which only keeps its kernel from being skipped.
constexpr llvm::StringLiteral kBranchAttr = "dlc.branch";
/// The op that selects a branch's values by its condition (the Where of an
/// If's outputs and of a Loop's carried values, the And of a Loop's
/// condition): the branch's id (non-negative integer). Its first input is
/// the condition; values of arm 1 reach it only through its second input
/// and values of arm 0 only through its third, which it ignores when the
/// condition does not pick that arm.
constexpr llvm::StringLiteral kSelectsAttr = "dlc.selects";
/// Dispatches and kernels that run only when a condition holds: the index
/// of the operand (kernel argument) that holds the one-element boolean and
/// the value it must have (0 or 1). Otherwise the kernel writes nothing
/// (dlc-predicate-dispatches).
constexpr llvm::StringLiteral kRunIfAttr = "dlc.run_if";
/// A linalg.generic of dlc-sparse-contractions: the output channels that
/// share one row of its index table (positive integer), for
/// dlc-cpu-sparse-tile.
constexpr llvm::StringLiteral kSparseRowsAttr = "dlc.sparse_rows";
/// Beside it: the (group, input channel) pairs kept and all of them, for
/// --stats (two non-negative integers).
constexpr llvm::StringLiteral kSparsePairsAttr = "dlc.sparse_pairs";
/// Arguments and results of main (the graph's inputs and outputs): the
/// ONNX name (string); the ONNX element type where the signless tensor
/// type loses it, such as ui8 (type); the logical shape of a 4-bit tensor
/// that travels packed two per byte (i64 array).
constexpr llvm::StringLiteral kNameAttr = "dlc.name";
constexpr llvm::StringLiteral kElementTypeAttr = "dlc.element_type";
constexpr llvm::StringLiteral kPackedShapeAttr = "dlc.packed_shape";

/// Which side of a function an input/output attribute is on.
enum class IOSide { Argument, Result };

/// Typed accessors of main's per-input/output attributes: null when absent.
mlir::StringAttr getIOName(mlir::FunctionOpInterface f, IOSide side,
                           unsigned i);
mlir::Type getIOElementType(mlir::FunctionOpInterface f, IOSide side,
                            unsigned i);
mlir::DenseI64ArrayAttr getIOPackedShape(mlir::FunctionOpInterface f,
                                         IOSide side, unsigned i);
void setIOName(mlir::FunctionOpInterface f, IOSide side, unsigned i,
               llvm::StringRef name);
void setIOElementType(mlir::FunctionOpInterface f, IOSide side, unsigned i,
                      mlir::Type type);
void setIOPackedShape(mlir::FunctionOpInterface f, IOSide side, unsigned i,
                      llvm::ArrayRef<int64_t> shape);

/// Bytes one element of integer or float type `t` takes in the artifact's
/// arena and constants: booleans and other sub-byte types one byte each.
/// The memory planner lays tensors out with it, and the passes that place
/// tensors relative to each other (dlc-concat-in-place) must agree.
int64_t storedElementBytes(mlir::Type t);

} // namespace dlc

#endif // DLC_DIALECT_DLC_IR_DLC_H

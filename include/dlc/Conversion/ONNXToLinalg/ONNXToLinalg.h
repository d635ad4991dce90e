//===- ONNXToLinalg.h - ONNX nodes to linalg/tensor/arith/math -*- C++ -*-===//
//
// Each ONNX operator gets one small handler, registered under its op type and
// the opset versions at which ONNX changed it (its "since versions"). A node
// is converted by the handler registered for the greatest since version that
// does not exceed the node's opset version; handlers that cover several
// since versions branch on `NodeRewriter::version()`.
//
// Handlers run in program order on nodes whose inputs are already converted;
// they see converted inputs (signless-integer or float tensors) and the ONNX
// element type of each input (which keeps signedness, e.g. ui8).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_CONVERSION_ONNXTOLINALG_ONNXTOLINALG_H
#define DLC_CONVERSION_ONNXTOLINALG_ONNXTOLINALG_H

#include "dlc/Dialect/ONNX/IR/ONNX.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringMap.h"

#include <optional>

namespace dlc {

class NodeRewriter;

/// The result of NodeRewriter::fail: converts to a failed LogicalResult or
/// to a failed FailureOr<T>, so that `return rw.fail(...)` works in both.
struct [[nodiscard]] NodeFailure {
  operator mlir::LogicalResult() const { return mlir::failure(); }
  template <typename T> operator mlir::FailureOr<T>() const {
    return mlir::failure();
  }
};

using NodeHandler = llvm::function_ref<mlir::LogicalResult(NodeRewriter &)>;
using NodeHandlerFn = mlir::LogicalResult (*)(NodeRewriter &);

/// Handlers by (domain, op type); see the file comment for version lookup.
class HandlerRegistry {
public:
  struct Entry {
    llvm::SmallVector<int64_t, 4> sinceVersions; ///< ascending
    NodeHandlerFn handler = nullptr;
  };

  /// Registers `handler` for `opType` in the default domain, covering the
  /// listed since versions (the versions at which ONNX changed the op).
  void add(llvm::StringRef opType, std::initializer_list<int64_t> versions,
           NodeHandlerFn handler, llvm::StringRef domain = "");

  /// The entry for a node, or null when no handler exists for the op.
  const Entry *lookup(llvm::StringRef domain, llvm::StringRef opType) const;

  /// Every registered (domain, op type).
  llvm::SmallVector<std::pair<std::string, std::string>> listOps() const;

private:
  llvm::StringMap<Entry> entries; ///< key: domain + "::" + opType
};

/// One registry with every handler dlc has.
const HandlerRegistry &getHandlerRegistry();

// Handler families, one file each.
void populateElementwiseHandlers(HandlerRegistry &registry);
void populateConvolutionHandlers(HandlerRegistry &registry);
void populateNormalizationHandlers(HandlerRegistry &registry);
void populateMatrixHandlers(HandlerRegistry &registry);
void populateReductionHandlers(HandlerRegistry &registry);
void populateShapeHandlers(HandlerRegistry &registry);
void populateResizeHandlers(HandlerRegistry &registry);
void populateSignalHandlers(HandlerRegistry &registry);
void populateTextHandlers(HandlerRegistry &registry);
void populateQuantizationHandlers(HandlerRegistry &registry);
void populateRecurrentHandlers(HandlerRegistry &registry);
void populateControlFlowHandlers(HandlerRegistry &registry);
void populateSequenceHandlers(HandlerRegistry &registry);
/// The SequenceConstruct node that holds the elements of the sequence `v`
/// (Sequence.cpp), or null when `v` is no sequence (or null).
onnx::NodeOp sequenceConstructOf(mlir::Value v);
/// Whether `node` may read sequences: the sequence handlers' nodes and
/// Loop.
bool takesSequences(onnx::NodeOp node);
void populateAttentionHandlers(HandlerRegistry &registry);
void populateMicrosoftHandlers(HandlerRegistry &registry);
void populateWeightOnlyHandlers(HandlerRegistry &registry);

/// What a handler sees of one node: converted inputs, attributes with
/// defaults, a builder positioned at the node, and diagnostics that name the
/// node, its op type and its opset.
class NodeRewriter {
public:
  NodeRewriter(onnx::NodeOp op, mlir::OpBuilder &builder,
               llvm::ArrayRef<mlir::Value> inputs,
               llvm::ArrayRef<mlir::Type> inputOnnxTypes)
      : op(op), builder(builder), inputs(inputs),
        inputOnnxTypes(inputOnnxTypes) {}

  onnx::NodeOp getOp() { return op; }
  mlir::OpBuilder &b() { return builder; }
  mlir::Location loc() { return op.getLoc(); }
  int64_t version() { return op.getVersion(); }
  mlir::MLIRContext *ctx() { return op.getContext(); }

  //===--- inputs ---------------------------------------------------------===//
  unsigned numInputs() { return inputs.size(); }
  /// True when input `i` is given (not omitted, not beyond the list).
  bool hasInput(unsigned i) { return i < inputs.size() && inputs[i]; }
  mlir::Value input(unsigned i) { return inputs[i]; }
  mlir::RankedTensorType inputType(unsigned i) {
    return mlir::cast<mlir::RankedTensorType>(inputs[i].getType());
  }
  /// The ONNX element type of input `i` (keeps signedness: ui8, si8 are
  /// distinguished; converted values use signless types).
  mlir::Type onnxElementType(unsigned i) { return inputOnnxTypes[i]; }
  bool isUnsigned(unsigned i) { return onnxElementType(i).isUnsignedInteger(); }
  /// The declared ONNX element type of result `i`, or null when unknown.
  mlir::Type declaredResultElementType(unsigned i);

  /// Checks that input `i` exists; otherwise fails with a message.
  mlir::LogicalResult requireInput(unsigned i, llvm::StringRef what);
  /// Reads input `i` as a compile-time constant of integers (shape, axes,
  /// pads, ...). Fails with a message naming `what` if it is not constant.
  mlir::FailureOr<llvm::SmallVector<int64_t>>
  constantInts(unsigned i, llvm::StringRef what);
  /// Reads input `i` as a constant of floats.
  mlir::FailureOr<llvm::SmallVector<double>>
  constantFloats(unsigned i, llvm::StringRef what);
  /// The constant value of input `i`, if it is one.
  mlir::ElementsAttr constantInput(unsigned i);

  //===--- attributes -----------------------------------------------------===//
  bool hasAttr(llvm::StringRef name) { return bool(op.getOnnxAttr(name)); }
  int64_t getInt(llvm::StringRef name, int64_t defaultValue);
  std::optional<int64_t> getOptionalInt(llvm::StringRef name);
  float getFloat(llvm::StringRef name, float defaultValue);
  std::string getString(llvm::StringRef name, llvm::StringRef defaultValue);
  llvm::SmallVector<int64_t> getInts(llvm::StringRef name,
                                     llvm::ArrayRef<int64_t> defaultValue = {});
  llvm::SmallVector<float> getFloats(llvm::StringRef name);
  mlir::ElementsAttr getTensor(llvm::StringRef name);

  //===--- results and errors ---------------------------------------------===//
  /// Replaces the node's results. `onnxTypes` gives the ONNX element type of
  /// results whose signedness differs from their signless type (unsigned
  /// integers); empty entries are inferred.
  mlir::LogicalResult replace(mlir::ValueRange values,
                              llvm::ArrayRef<mlir::Type> onnxTypes = {});
  llvm::ArrayRef<mlir::Value> getResults() { return results; }
  llvm::ArrayRef<mlir::Type> getResultOnnxTypes() { return resultOnnxTypes; }

  /// For control flow: replaces the node's results with values of the ONNX
  /// graph that are not converted yet. The handler places the nodes that
  /// compute them after the node; the driver converts those next, and the
  /// node's results become what `onnxValues` convert to.
  void forward(mlir::ValueRange onnxValues) {
    forwarded.assign(onnxValues.begin(), onnxValues.end());
  }
  llvm::ArrayRef<mlir::Value> getForwarded() { return forwarded; }

  /// For sequences: the node's outputs are sequences, each held in the ONNX
  /// graph by a SequenceConstruct node that lists its elements
  /// (Sequence.cpp); the driver maps them to no converted value.
  void keepSequences() { sequences = true; }
  bool keepsSequences() { return sequences; }

  /// For control flow on a run-time condition: a branch id (kBranchAttr)
  /// no other node of the function has.
  int64_t newBranchId() { return (*branchIds)++; }
  void setBranchIdCounter(int64_t *counter) { branchIds = counter; }

  /// Emits "node 'NAME' (OP, opset V): MESSAGE" and returns failure.
  NodeFailure fail(const llvm::Twine &message);
  /// Same, for unsupported-but-valid cases.
  NodeFailure unsupported(const llvm::Twine &what);

  /// Normalizes a possibly negative axis against `rank`; fails if out of range.
  mlir::FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank,
                                         llvm::StringRef what = "axis");

private:
  onnx::NodeOp op;
  mlir::OpBuilder &builder;
  llvm::ArrayRef<mlir::Value> inputs;
  llvm::ArrayRef<mlir::Type> inputOnnxTypes;
  llvm::SmallVector<mlir::Value> results;
  llvm::SmallVector<mlir::Type> resultOnnxTypes;
  llvm::SmallVector<mlir::Value> forwarded;
  int64_t *branchIds = nullptr;
  bool sequences = false;
};

/// Converts every `onnx.node` in `func` (and the function signature) to
/// linalg/tensor/arith/math. Reports every unconvertible node before failing.
mlir::LogicalResult convertONNXFunction(mlir::func::FuncOp func);

} // namespace dlc

#endif // DLC_CONVERSION_ONNXTOLINALG_ONNXTOLINALG_H

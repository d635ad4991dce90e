//===- Utils.h - building blocks shared by the ONNX handlers ----*- C++ -*-===//

#ifndef DLC_LIB_CONVERSION_ONNXTOLINALG_UTILS_H
#define DLC_LIB_CONVERSION_ONNXTOLINALG_UTILS_H

#include "dlc/Conversion/ONNXToLinalg/ONNXToLinalg.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/Support/FormatVariadic.h"

#include <array>

namespace dlc {

/// Builds the scalar body of an elementwise op from scalar arguments.
using ScalarBodyFn = llvm::function_ref<mlir::Value(
    mlir::OpBuilder &, mlir::Location, mlir::ValueRange)>;

/// Numpy-style broadcast of static shapes; fails (with a message in `error`)
/// when two dims differ and neither is 1.
mlir::FailureOr<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<llvm::SmallVector<int64_t>> shapes,
                std::string &error);

/// `tensor.empty` of the given static shape.
mlir::Value createEmpty(mlir::OpBuilder &b, mlir::Location loc,
                        llvm::ArrayRef<int64_t> shape, mlir::Type elementType);

/// A tensor filled with `value` (a float or integer attribute of the type).
mlir::Value createFilled(mlir::OpBuilder &b, mlir::Location loc,
                         llvm::ArrayRef<int64_t> shape, mlir::Type elementType,
                         mlir::TypedAttr value);

/// A scalar arith.constant of `type` holding `value` (rounded for ints).
mlir::Value scalarConstant(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Type type, double value);
mlir::TypedAttr scalarAttr(mlir::Type type, double value);

/// The lowest / highest value of a type (-inf/+inf for floats), as used for
/// max/min reductions and pooling.
mlir::TypedAttr lowestValueAttr(mlir::Type type, bool isUnsigned);
mlir::TypedAttr highestValueAttr(mlir::Type type, bool isUnsigned);

/// How a conversion to FLOAT8E8M0 (a power of two) rounds: Cast's
/// `round_mode` (opset 24; "up", away from zero, by default).
enum class E8M0Rounding { Up, Down, Nearest };

/// Converts a scalar between element types with ONNX Cast semantics.
/// `from`/`to` are ONNX element types (their signedness selects the
/// integer conversions); the value and result use signless types.
/// `saturate` is Cast's attribute: 8-bit float results beyond the largest
/// finite value become it rather than infinity or NaN. `rounding` applies
/// to FLOAT8E8M0 results only (the others round to nearest even).
mlir::Value castScalar(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                       mlir::Type from, mlir::Type to, bool saturate = true,
                       E8M0Rounding rounding = E8M0Rounding::Up);

/// The type kernels hold values of an ONNX element type in: signless
/// integers (ui8 -> i8), and the bits of 8- and 4-bit floats (f8E4M3FN ->
/// i8, f4E2M1FN -> i4), which no target computes with.
mlir::Type signlessType(mlir::Type type);

/// One of ONNX's 8- and 4-bit floats (FLOAT8E4M3FN, E4M3FNUZ, E5M2,
/// E5M2FNUZ, FLOAT4E2M1, and the exponent-only FLOAT8E8M0): held as its
/// bits.
bool isFloatHeldAsBits(mlir::Type type);

/// The f32 value of the bits `bits` (i8 or i4) of an 8- or 4-bit float of
/// type `from`: exact.
mlir::Value decodeFloatBits(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value bits, mlir::FloatType from);

/// The bits of f32 `v` rounded to 8- or 4-bit float type `to`, to nearest
/// with ties to even; beyond the largest finite value the largest when
/// `saturate`, else infinity or NaN as the format has them.
mlir::Value encodeFloatBits(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value v, mlir::FloatType to, bool saturate);

/// A linalg.generic computing `body` elementwise over `operands`, broadcast
/// numpy-style to a common shape, with result element type `resultType`.
/// When every operand is a small constant the result is folded to a
/// constant (this is how exporters' shape subgraphs disappear).
mlir::FailureOr<mlir::Value> buildElementwise(NodeRewriter &rw,
                                              mlir::ValueRange operands,
                                              mlir::Type resultType,
                                              ScalarBodyFn body);

/// Same, for an explicit output shape that operands broadcast to.
mlir::Value buildBroadcastGeneric(mlir::OpBuilder &b, mlir::Location loc,
                                  mlir::ValueRange operands,
                                  llvm::ArrayRef<int64_t> outShape,
                                  mlir::Type resultType, ScalarBodyFn body);

/// Reshapes `v` to `shape` (same element count): collapse/expand where the
/// reshape is a regrouping of dims, else through a flat intermediate.
/// Constants are reshaped at compile time.
mlir::Value reshapeTo(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                      llvm::ArrayRef<int64_t> shape);

/// linalg.transpose with `perm` (result dim i = input dim perm[i]);
/// constants are transposed at compile time.
mlir::Value transposeTo(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                        llvm::ArrayRef<int64_t> perm);

/// Pads `v` with `value` by `low`/`high` elements per dim; no-op if zero.
mlir::Value padWithValue(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                         llvm::ArrayRef<int64_t> low,
                         llvm::ArrayRef<int64_t> high, mlir::TypedAttr value);

/// Broadcasts `v` to `shape` (numpy rules) with a linalg.generic.
mlir::Value broadcastTo(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                        llvm::ArrayRef<int64_t> shape);

/// The constant elements behind `v`, if `v` is an inline dense constant.
/// Checks that input `i` (`name`) exists and has a float element type.
mlir::LogicalResult requireFloatInput(NodeRewriter &rw, unsigned i,
                                      llvm::StringRef name);

mlir::DenseElementsAttr getDenseConstant(mlir::Value v);

/// getDenseConstant, or else a constant the importer kept as a resource
/// (initializers above its inline size: per-channel scales and zero
/// points) of at most 1 MiB, copied into a dense attribute. For
/// parameters a handler reads at compile time; weights stay resources.
mlir::DenseElementsAttr getParameterConstant(mlir::Value v);

/// Materializes a dense constant.
mlir::Value createConstant(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::DenseElementsAttr value);

/// Constant tables a handler expands element by element at compile time
/// (indices, shapes, lengths) hold at most this many elements. A larger
/// constant, a splat that a few bytes of a model can declare, is read at
/// run time where the handler can, and refused where it cannot.
constexpr int64_t kMaxConstantTable = int64_t(1) << 24;

/// getDenseConstant for a table of at most kMaxConstantTable elements.
mlir::DenseElementsAttr getConstantTable(mlir::Value v);

/// Reads an integer/float tensor constant as int64 / double values.
llvm::SmallVector<int64_t> toInt64Vector(mlir::DenseElementsAttr attr);
llvm::SmallVector<double> toDoubleVector(mlir::DenseElementsAttr attr);
/// The first element of a non-empty integer/float tensor constant.
int64_t firstInt64(mlir::DenseElementsAttr attr);
double firstDouble(mlir::DenseElementsAttr attr);

/// Element count of a static shape.
int64_t numElements(llvm::ArrayRef<int64_t> shape);

/// ONNX auto_pad / pads / strides / dilations resolved for a sliding-window
/// op over `spatial` input dims with `kernel` extents.
struct WindowParams {
  llvm::SmallVector<int64_t> strides, dilations, padLow, padHigh, outSize;
};
mlir::FailureOr<WindowParams> resolveWindow(NodeRewriter &rw,
                                            llvm::ArrayRef<int64_t> spatial,
                                            llvm::ArrayRef<int64_t> kernel,
                                            bool ceilMode = false);

/// A type as text, for diagnostics.
std::string typeName(mlir::Type t);

/// The ONNX element type an attribute names (EyeLike's dtype, the windows'
/// and MelWeightMatrix's output_datatype), or `fallback` when the attribute
/// is absent; an error naming the type when dlc has none for it.
mlir::FailureOr<mlir::Type> dtypeAttr(NodeRewriter &rw, llvm::StringRef name,
                                      mlir::Type fallback);

/// The bytes of constant `v` (inline or a resource; a splat expanded),
/// `count` elements of `width` bytes in row-major order, or nothing when
/// `v` is no constant of that size.
std::optional<std::vector<char>> constantBytes(mlir::Value v, int64_t count,
                                               int64_t width);

/// The values of integer constant `v`, zero- or sign-extended as
/// `isUnsigned` says (inline of any width; resources of bytes), if it is
/// one.
std::optional<llvm::SmallVector<int64_t>> integerValues(mlir::Value v,
                                                        bool isUnsigned);

/// Converts a gathered index to `index` and counts negative values from the
/// end of a dim of size `dim` (scatters: an index still outside matches no
/// element).
mlir::Value wrapNegative(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value idx, int64_t dim);

/// wrapNegative, then clamps the result into [0, dim - 1] (gathers: every
/// read stays inside).
mlir::Value wrapAndClamp(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value idx, int64_t dim);

/// An operand of a linalg.generic and the map from the loops to its indices.
struct GenericOperand {
  mlir::Value value;
  mlir::AffineMap map;
};

using GenericBody = llvm::function_ref<llvm::SmallVector<mlir::Value>(
    mlir::OpBuilder &, mlir::Location, mlir::ValueRange ins,
    mlir::ValueRange outs)>;

/// A linalg.generic over `iterators.size()` loops; `body` returns one value
/// per output.
llvm::SmallVector<mlir::Value> buildGeneric(
    mlir::OpBuilder &b, mlir::Location loc, llvm::ArrayRef<GenericOperand> ins,
    llvm::ArrayRef<GenericOperand> outs,
    llvm::ArrayRef<mlir::utils::IteratorType> iterators, GenericBody body);

/// Builds ONNX nodes right after a node, for handlers that express their
/// node as other operators (control flow, Attention, RotaryEmbedding) and
/// forward its results (NodeRewriter::forward): the driver converts the new
/// nodes next, with every handler's checks and folding. Nodes are named
/// after the node they stand for ("attn/MatMul#3").
/// Clones the ops of a subgraph `body` (all but its onnx.yield) at `b`'s
/// insertion point with its arguments bound to `args` (ONNX values), calling
/// `onClone` on each top-level clone; returns what the yield yields.
llvm::SmallVector<mlir::Value>
cloneSubgraph(mlir::OpBuilder &b, mlir::Block &body, mlir::ValueRange args,
              llvm::function_ref<void(mlir::Operation *)> onClone = {});

class OnnxEmitter {
public:
  explicit OnnxEmitter(NodeRewriter &rw);

  /// One node of the default domain at `version` with one result.
  mlir::Value node(llvm::StringRef opType, int64_t version,
                   mlir::ValueRange inputs,
                   llvm::ArrayRef<mlir::NamedAttribute> attrs = {});
  /// Same, with `numResults` results.
  onnx::NodeOp nodeOp(llvm::StringRef opType, int64_t version,
                      mlir::ValueRange inputs,
                      llvm::ArrayRef<mlir::NamedAttribute> attrs,
                      unsigned numResults);
  /// Constants: a 1-D int64 tensor, a rank-0 int64 and a rank-0 tensor of
  /// `elementType` (signless) holding `value`.
  mlir::Value ints(llvm::ArrayRef<int64_t> values);
  mlir::Value scalarInt(int64_t value);
  mlir::Value scalar(mlir::Type elementType, double value);
  /// An integer attribute, a list-of-integers attribute, a float one.
  mlir::NamedAttribute attr(llvm::StringRef name, int64_t value);
  mlir::NamedAttribute attr(llvm::StringRef name,
                            llvm::ArrayRef<int64_t> values);
  mlir::NamedAttribute floatAttr(llvm::StringRef name, double value);
  mlir::OpBuilder &b() { return builder; }

private:
  mlir::OpBuilder &builder;
  std::string prefix;
  mlir::Location fileLoc;
  unsigned count = 0;
};

/// One side of an integer contraction: its data, signedness, and an
/// optional zero point indexed by `zpMap` (null when absent or known 0).
struct IntegerOperand {
  mlir::Value data;
  mlir::AffineMap map;
  bool isUnsigned;
  mlir::Value zp;
  mlir::AffineMap zpMap;
};

/// acc[out] = sum over the reduction loops of (a - a_zp) * (b - b_zp),
/// widened to i32.
mlir::Value
integerContraction(mlir::OpBuilder &b, mlir::Location loc,
                   const IntegerOperand &lhs, const IntegerOperand &rhs,
                   llvm::ArrayRef<int64_t> outShape, mlir::AffineMap outMap,
                   llvm::ArrayRef<mlir::utils::IteratorType> iterators);

/// DynamicQuantizeLinear of an f32 tensor the way ONNX Runtime computes
/// it (asymmetric uint8 over a range that includes 0): the data (signless
/// i8 holding uint8), its scale (f32) and zero point (i8 holding uint8).
/// One scale and zero point for the whole tensor, or with `keptDims` > 0
/// one per index of its leading `keptDims` dims (shaped like them).
std::array<mlir::Value, 3> buildDynamicQuantize(mlir::OpBuilder &b,
                                                mlir::Location loc,
                                                mlir::Value x,
                                                int64_t keptDims = 0);

} // namespace dlc

#endif // DLC_LIB_CONVERSION_ONNXTOLINALG_UTILS_H

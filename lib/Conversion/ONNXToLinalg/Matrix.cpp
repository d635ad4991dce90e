//===- Matrix.cpp - MatMul, Gemm, Einsum ----------------------------------===//
//
// Matrix products become linalg.matmul (transposes live in its indexing
// maps), linalg.batch_matmul (equal batch dims), or one contraction
// linalg.generic (broadcast batch dims, Einsum). f16/bf16 products
// accumulate in f32. Everything after the product (alpha, beta * C, the
// rounding back to f16/bf16) is a separate elementwise generic that the
// fusion pass folds into the product's kernel.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"

#include "mlir/IR/AffineMap.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;
using namespace dlc;

namespace {

/// The type products accumulate in: f32 for 16-bit floats, else the type.
Type accumulatorType(Type t) {
  if (t.isF16() || t.isBF16())
    return Float32Type::get(t.getContext());
  return t;
}

Value zeroFilled(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                 Type type) {
  return createFilled(b, loc, shape, type, scalarAttr(type, 0));
}

/// Rounds an accumulator tensor back to the element type `t`.
Value castTo(OpBuilder &b, Location loc, Value v, Type t) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getElementType() == t)
    return v;
  Type from = type.getElementType();
  return buildBroadcastGeneric(b, loc, v, type.getShape(), t,
                               [&](OpBuilder &nb, Location nloc, ValueRange a) {
                                 return castScalar(nb, nloc, a[0], from, t);
                               });
}

std::string str(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? ", " : "") + std::to_string(d);
  return s + "]";
}

/// Checks that inputs 0..n-1 are present and share a numeric element type.
LogicalResult requireSameNumericTypes(NodeRewriter &rw, unsigned n,
                                      ArrayRef<StringRef> names) {
  for (unsigned i = 0; i < n; ++i)
    if (failed(rw.requireInput(i, names[i])))
      return failure();
  for (unsigned i = 1; i < n; ++i)
    if (rw.onnxElementType(i) != rw.onnxElementType(0))
      return rw.fail(
          names[0] + " and " + names[i] + " have different element types (" +
          llvm::formatv("{0}", rw.onnxElementType(0)).str() + " and " +
          llvm::formatv("{0}", rw.onnxElementType(i)).str() + ")");
  if (rw.inputType(0).getElementType().isInteger(1))
    return rw.unsupported("boolean operands");
  return success();
}

/// acc + prod(operands), all widened to the accumulator type.
Value multiplyAccumulate(OpBuilder &b, Location loc, ValueRange operands,
                         Value acc) {
  Type accType = acc.getType();
  Value prod;
  for (Value v : operands) {
    if (v.getType() != accType)
      v = arith::ExtFOp::create(b, loc, accType, v);
    if (!prod)
      prod = v;
    else if (isa<FloatType>(accType))
      prod = arith::MulFOp::create(b, loc, prod, v);
    else
      prod = arith::MulIOp::create(b, loc, prod, v);
  }
  if (isa<FloatType>(accType))
    return arith::AddFOp::create(b, loc, acc, prod);
  return arith::AddIOp::create(b, loc, acc, prod);
}

/// One linalg.generic computing out[d0..dk] += prod(operands) over loops of
/// `loopSizes`; the first `outShape.size()` loops are the output dims, the
/// rest are reductions.
Value buildContraction(OpBuilder &b, Location loc, ValueRange operands,
                       ArrayRef<AffineMap> maps, ArrayRef<int64_t> loopSizes,
                       ArrayRef<int64_t> outShape, Type accType) {
  int64_t numLoops = loopSizes.size(), outRank = outShape.size();
  SmallVector<AffineMap> allMaps(maps);
  SmallVector<AffineExpr> outExprs;
  for (int64_t i = 0; i < outRank; ++i)
    outExprs.push_back(b.getAffineDimExpr(i));
  allMaps.push_back(AffineMap::get(numLoops, 0, outExprs, b.getContext()));
  SmallVector<utils::IteratorType> iterators(numLoops,
                                             utils::IteratorType::reduction);
  for (int64_t i = 0; i < outRank; ++i)
    iterators[i] = utils::IteratorType::parallel;
  Value init = zeroFilled(b, loc, outShape, accType);
  return linalg::GenericOp::create(
             b, loc, init.getType(), operands, init, allMaps, iterators,
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               linalg::YieldOp::create(
                   nb, nloc,
                   multiplyAccumulate(nb, nloc, args.drop_back(), args.back()));
             })
      .getResult(0);
}

//===--- MatMul -----------------------------------------------------------===//

LogicalResult convertMatMul(NodeRewriter &rw) {
  if (failed(requireSameNumericTypes(rw, 2, {"A", "B"})))
    return failure();
  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  Value lhs = rw.input(0), rhs = rw.input(1);
  auto lhsType = rw.inputType(0), rhsType = rw.inputType(1);
  if (lhsType.getRank() == 0 || rhsType.getRank() == 0)
    return rw.fail("operands must have rank 1 or more (numpy matmul)");
  Type t = lhsType.getElementType();
  Type acc = accumulatorType(t);

  // numpy promotes 1-D operands to matrices and drops the added dim after.
  bool lhsVector = lhsType.getRank() == 1, rhsVector = rhsType.getRank() == 1;
  SmallVector<int64_t> lhsShape(lhsType.getShape()),
      rhsShape(rhsType.getShape());
  if (lhsVector)
    lhsShape.insert(lhsShape.begin(), 1);
  if (rhsVector)
    rhsShape.push_back(1);
  lhs = reshapeTo(b, loc, lhs, lhsShape);
  rhs = reshapeTo(b, loc, rhs, rhsShape);

  int64_t m = lhsShape[lhsShape.size() - 2], k = lhsShape.back();
  int64_t k2 = rhsShape[rhsShape.size() - 2], n = rhsShape.back();
  if (k != k2)
    return rw.fail("the contracted dims differ: A is " +
                   str(lhsType.getShape()) + ", B is " +
                   str(rhsType.getShape()));
  SmallVector<int64_t> lhsBatch(lhsShape.begin(), lhsShape.end() - 2);
  SmallVector<int64_t> rhsBatch(rhsShape.begin(), rhsShape.end() - 2);
  std::string error;
  FailureOr<SmallVector<int64_t>> batch =
      broadcastShapes({lhsBatch, rhsBatch}, error);
  if (failed(batch))
    return rw.fail("batch dims: " + error);
  int64_t batchSize = numElements(*batch);
  SmallVector<int64_t> outShape(*batch);
  outShape.append({m, n});

  Value product;
  if (rhsBatch.empty()) {
    // Activations times weights: fold A's batch dims into its rows.
    Value lhs2d = reshapeTo(b, loc, lhs, {batchSize * m, k});
    Value init = zeroFilled(b, loc, {batchSize * m, n}, acc);
    product = linalg::MatmulOp::create(b, loc, TypeRange{init.getType()},
                                       ValueRange{lhs2d, rhs}, ValueRange{init})
                  .getResult(0);
  } else if (lhsBatch == *batch && rhsBatch == *batch) {
    Value lhs3d = reshapeTo(b, loc, lhs, {batchSize, m, k});
    Value rhs3d = reshapeTo(b, loc, rhs, {batchSize, k, n});
    Value init = zeroFilled(b, loc, {batchSize, m, n}, acc);
    product = linalg::BatchMatmulOp::create(b, loc, TypeRange{init.getType()},
                                            ValueRange{lhs3d, rhs3d},
                                            ValueRange{init})
                  .getResult(0);
  } else {
    // Broadcast batch dims: one contraction over (batch..., m, n, k) whose
    // operand maps pin broadcast dims to 0.
    int64_t rank = batch->size();
    auto operandMap = [&](ArrayRef<int64_t> opBatch, bool isLhs) {
      SmallVector<AffineExpr> exprs;
      int64_t offset = rank - opBatch.size();
      for (auto [i, d] : llvm::enumerate(opBatch))
        exprs.push_back(d == 1 && (*batch)[offset + i] != 1
                            ? b.getAffineConstantExpr(0)
                            : b.getAffineDimExpr(offset + i));
      AffineExpr mi = b.getAffineDimExpr(rank),
                 ni = b.getAffineDimExpr(rank + 1),
                 ki = b.getAffineDimExpr(rank + 2);
      exprs.push_back(isLhs ? mi : ki);
      exprs.push_back(isLhs ? ki : ni);
      return AffineMap::get(rank + 3, 0, exprs, b.getContext());
    };
    SmallVector<int64_t> loops(outShape);
    loops.push_back(k);
    product = buildContraction(
        b, loc, {lhs, rhs},
        {operandMap(lhsBatch, true), operandMap(rhsBatch, false)}, loops,
        outShape, acc);
  }
  product = reshapeTo(b, loc, product, outShape);
  product = castTo(b, loc, product, t);

  SmallVector<int64_t> finalShape(*batch);
  if (!lhsVector)
    finalShape.push_back(m);
  if (!rhsVector)
    finalShape.push_back(n);
  return rw.replace(reshapeTo(b, loc, product, finalShape),
                    rw.onnxElementType(0));
}

//===--- Gemm -------------------------------------------------------------===//

LogicalResult convertGemm(NodeRewriter &rw) {
  bool hasC = rw.hasInput(2);
  if (rw.version() < 11 && failed(rw.requireInput(2, "C")))
    return failure();
  if (failed(requireSameNumericTypes(rw, hasC ? 3 : 2, {"A", "B", "C"})))
    return failure();
  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  auto aType = rw.inputType(0), bType = rw.inputType(1);
  if (aType.getRank() != 2 || bType.getRank() != 2)
    return rw.fail("A and B must be matrices; they are " +
                   str(aType.getShape()) + " and " + str(bType.getShape()));
  bool transA = rw.getInt("transA", 0) != 0;
  bool transB = rw.getInt("transB", 0) != 0;
  int64_t m = aType.getDimSize(transA ? 1 : 0),
          k = aType.getDimSize(transA ? 0 : 1);
  int64_t k2 = bType.getDimSize(transB ? 1 : 0),
          n = bType.getDimSize(transB ? 0 : 1);
  if (k != k2)
    return rw.fail("the contracted dims differ: A is " + str(aType.getShape()) +
                   (transA ? " (transposed)" : "") + ", B is " +
                   str(bType.getShape()) + (transB ? " (transposed)" : ""));
  double alpha = rw.getFloat("alpha", 1.0f), beta = rw.getFloat("beta", 1.0f);
  Type t = aType.getElementType();
  Type acc = accumulatorType(t);
  bool isInt = isa<IntegerType>(t);
  if (isInt && (alpha != std::round(alpha) || beta != std::round(beta)))
    return rw.unsupported("non-integral alpha or beta with integer operands");

  bool useC = hasC && beta != 0.0;
  if (useC) {
    ArrayRef<int64_t> cShape = rw.inputType(2).getShape();
    SmallVector<int64_t> mn = {m, n};
    std::string error;
    FailureOr<SmallVector<int64_t>> shape =
        broadcastShapes({SmallVector<int64_t>(cShape), mn}, error);
    bool exact = cShape == ArrayRef<int64_t>(mn);
    if (rw.version() < 7 && rw.getInt("broadcast", 0) == 0 && !exact)
      return rw.fail("C is " + str(cShape) + " but must be " + str(mn) +
                     " when broadcast is 0");
    if (failed(shape) || *shape != mn)
      return rw.fail("C " + str(cShape) + " does not broadcast to the output " +
                     str(mn));
  }

  MLIRContext *ctx = rw.ctx();
  AffineExpr mi = getAffineDimExpr(0, ctx), ni = getAffineDimExpr(1, ctx),
             ki = getAffineDimExpr(2, ctx);
  SmallVector<AffineMap> maps = {
      AffineMap::get(3, 0,
                     transA ? ArrayRef<AffineExpr>{ki, mi}
                            : ArrayRef<AffineExpr>{mi, ki},
                     ctx),
      AffineMap::get(3, 0,
                     transB ? ArrayRef<AffineExpr>{ni, ki}
                            : ArrayRef<AffineExpr>{ki, ni},
                     ctx),
      AffineMap::get(3, 0, {mi, ni}, ctx)};
  Value init = zeroFilled(b, loc, {m, n}, acc);
  auto matmul = linalg::MatmulOp::create(b, loc, TypeRange{init.getType()},
                                         ValueRange{rw.input(0), rw.input(1)},
                                         ValueRange{init});
  matmul.setIndexingMapsAttr(b.getAffineMapArrayAttr(maps));
  Value product = matmul.getResult(0);

  if (alpha == 1.0 && !useC)
    return rw.replace(castTo(b, loc, product, t), rw.onnxElementType(0));

  SmallVector<Value> operands = {product};
  if (useC)
    operands.push_back(rw.input(2));
  Value y = buildBroadcastGeneric(
      b, loc, operands, {m, n}, t,
      [&](OpBuilder &nb, Location nloc, ValueRange a) -> Value {
        auto mul = [&](Value v, double s) -> Value {
          if (s == 1.0)
            return v;
          Value c = scalarConstant(nb, nloc, acc, s);
          return isInt ? arith::MulIOp::create(nb, nloc, v, c).getResult()
                       : arith::MulFOp::create(nb, nloc, v, c).getResult();
        };
        Value r = mul(a[0], alpha);
        if (useC) {
          Value c = a[1];
          if (c.getType() != acc)
            c = arith::ExtFOp::create(nb, nloc, acc, c);
          c = mul(c, beta);
          r = isInt ? arith::AddIOp::create(nb, nloc, r, c).getResult()
                    : arith::AddFOp::create(nb, nloc, r, c).getResult();
        }
        return castScalar(nb, nloc, r, acc, t);
      });
  return rw.replace(y, rw.onnxElementType(0));
}

//===--- Einsum -----------------------------------------------------------===//

/// One subscript term: its labels in order, kEllipsis where "..." stands.
constexpr int kEllipsis = -1;
using Term = SmallVector<int>;

char labelChar(int label) {
  return label < 26 ? 'A' + label : 'a' + (label - 26);
}

/// Parses "ab...c" (spaces ignored) into labels 0..51; empty on error.
std::optional<Term> parseTerm(StringRef s) {
  Term term;
  bool sawEllipsis = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == ' ')
      continue;
    if (c == '.') {
      if (sawEllipsis || !s.substr(i).starts_with("..."))
        return std::nullopt;
      sawEllipsis = true;
      term.push_back(kEllipsis);
      i += 2;
      continue;
    }
    if (c >= 'A' && c <= 'Z')
      term.push_back(c - 'A');
    else if (c >= 'a' && c <= 'z')
      term.push_back(26 + c - 'a');
    else
      return std::nullopt;
  }
  return term;
}

LogicalResult convertEinsum(NodeRewriter &rw) {
  std::string equation = rw.getString("equation", "");
  auto bad = [&](const Twine &why) {
    return rw.fail("equation '" + equation + "': " + why);
  };
  if (rw.numInputs() == 0)
    return rw.fail("needs at least one input");
  for (unsigned i = 0; i < rw.numInputs(); ++i)
    if (failed(rw.requireInput(i, "Inputs")))
      return failure();
  SmallVector<StringRef> names(rw.numInputs(), "Inputs");
  if (failed(requireSameNumericTypes(rw, rw.numInputs(), names)))
    return failure();

  auto [lhsText, rhsText] = StringRef(equation).split("->");
  bool explicitOutput = StringRef(equation).contains("->");
  SmallVector<StringRef> termTexts;
  lhsText.split(termTexts, ',');
  if (termTexts.size() != rw.numInputs())
    return bad("it has " + Twine(termTexts.size()) + " input terms for " +
               Twine(rw.numInputs()) + " inputs");
  SmallVector<Term> terms;
  for (StringRef text : termTexts) {
    std::optional<Term> term = parseTerm(text);
    if (!term)
      return bad("cannot parse the term '" + text + "'");
    terms.push_back(*term);
  }

  // Label sizes, and the broadcast shape of the ellipsis dims.
  std::array<int64_t, 52> labelSize;
  labelSize.fill(-1);
  std::array<int, 52> labelCount{};
  SmallVector<SmallVector<int64_t>> ellipsisShapes;
  for (auto [i, term] : llvm::enumerate(terms)) {
    ArrayRef<int64_t> shape = rw.inputType(i).getShape();
    int64_t numLabels = llvm::count_if(term, [](int l) { return l >= 0; });
    bool hasEllipsis = llvm::is_contained(term, kEllipsis);
    int64_t ellipsisRank = static_cast<int64_t>(shape.size()) - numLabels;
    if (ellipsisRank < 0 || (!hasEllipsis && ellipsisRank != 0))
      return bad("term " + Twine(i) + " has " + Twine(numLabels) +
                 " labels but input " + Twine(i) + " has rank " +
                 Twine(shape.size()));
    int64_t dim = 0;
    for (int l : term) {
      if (l == kEllipsis) {
        ellipsisShapes.emplace_back(shape.begin() + dim,
                                    shape.begin() + dim + ellipsisRank);
        dim += ellipsisRank;
        continue;
      }
      if (labelSize[l] >= 0 && labelSize[l] != shape[dim])
        return bad("label '" + Twine(labelChar(l)) + "' has sizes " +
                   Twine(labelSize[l]) + " and " + Twine(shape[dim]));
      labelSize[l] = shape[dim++];
      ++labelCount[l];
    }
  }
  std::string error;
  FailureOr<SmallVector<int64_t>> ellipsisShape =
      broadcastShapes(ellipsisShapes, error);
  if (failed(ellipsisShape))
    return bad("the '...' dims do not broadcast: " + error);
  int64_t ellipsisRank = ellipsisShape->size();

  Term output;
  if (explicitOutput) {
    std::optional<Term> term = parseTerm(rhsText);
    if (!term)
      return bad("cannot parse the output term '" + rhsText + "'");
    output = *term;
    std::array<bool, 52> seen{};
    for (int l : output) {
      if (l == kEllipsis)
        continue;
      if (labelSize[l] < 0)
        return bad("output label '" + Twine(labelChar(l)) +
                   "' does not appear in any input");
      if (seen[l])
        return bad("output label '" + Twine(labelChar(l)) + "' is repeated");
      seen[l] = true;
    }
    if (ellipsisRank > 0 && !llvm::is_contained(output, kEllipsis))
      return bad("the inputs have '...' dims but the output has no '...'");
  } else {
    // numpy's implicit output: the broadcast dims, then the labels that
    // occur once, in alphabetical (ASCII) order.
    if (ellipsisRank > 0)
      output.push_back(kEllipsis);
    for (int l = 0; l < 52; ++l)
      if (labelCount[l] == 1)
        output.push_back(l);
  }

  // Loops: output dims in output order, then the summed labels.
  std::array<int64_t, 52> labelLoop;
  labelLoop.fill(-1);
  SmallVector<int64_t> loopSizes;
  int64_t ellipsisLoop = -1;
  for (int l : output) {
    if (l == kEllipsis) {
      ellipsisLoop = loopSizes.size();
      loopSizes.append(*ellipsisShape);
      continue;
    }
    labelLoop[l] = loopSizes.size();
    loopSizes.push_back(labelSize[l]);
  }
  SmallVector<int64_t> outShape(loopSizes);
  for (const Term &term : terms)
    for (int l : term)
      if (l >= 0 && labelLoop[l] < 0) {
        labelLoop[l] = loopSizes.size();
        loopSizes.push_back(labelSize[l]);
      }

  MLIRContext *ctx = rw.ctx();
  SmallVector<AffineMap> maps;
  for (auto [i, term] : llvm::enumerate(terms)) {
    ArrayRef<int64_t> shape = rw.inputType(i).getShape();
    int64_t numLabels = llvm::count_if(term, [](int l) { return l >= 0; });
    int64_t rank = static_cast<int64_t>(shape.size()) - numLabels;
    SmallVector<AffineExpr> exprs;
    for (int l : term) {
      if (l != kEllipsis) {
        exprs.push_back(getAffineDimExpr(labelLoop[l], ctx));
        continue;
      }
      // Right-aligned against the broadcast '...' dims.
      for (int64_t d = 0; d < rank; ++d) {
        int64_t e = ellipsisRank - rank + d;
        if (shape[exprs.size()] == 1 && (*ellipsisShape)[e] != 1)
          exprs.push_back(getAffineConstantExpr(0, ctx));
        else
          exprs.push_back(getAffineDimExpr(ellipsisLoop + e, ctx));
      }
    }
    maps.push_back(AffineMap::get(loopSizes.size(), 0, exprs, ctx));
  }

  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  Type t = rw.inputType(0).getElementType();
  SmallVector<Value> operands;
  for (unsigned i = 0; i < rw.numInputs(); ++i)
    operands.push_back(rw.input(i));
  Value y = buildContraction(b, loc, operands, maps, loopSizes, outShape,
                             accumulatorType(t));
  return rw.replace(castTo(b, loc, y, t), rw.onnxElementType(0));
}

/// Det of matrices up to this size; beyond, the unrolled elimination's
/// code (O(n^3) operations per kernel body) would grow too large.
constexpr int64_t kMaxDetSize = 8;

/// Det: the determinant of each [M, M] matrix of X's last two dims. One
/// elementwise kernel over the batch dims whose body reads the matrix and
/// runs Gaussian elimination with partial pivoting (as LAPACK's getrf, which
/// ONNX Runtime's Eigen LU follows), unrolled: at step k the rows below
/// swap in the largest |a[r][k]|, the determinant takes the pivot (and a
/// sign per swap), and the rows below subtract their multiple of row k. A
/// zero pivot (a singular matrix) makes the determinant 0.
LogicalResult convertDet(NodeRewriter &rw) {
  if (failed(requireFloatInput(rw, 0, "X")))
    return failure();
  auto type = rw.inputType(0);
  int64_t rank = type.getRank();
  if (rank < 2 || type.getDimSize(rank - 1) != type.getDimSize(rank - 2))
    return rw.fail("X must be [*, M, M], not " + typeName(type));
  int64_t n = type.getDimSize(rank - 1);
  if (n > kMaxDetSize)
    return rw.unsupported("Det of " + Twine(n) + "x" + Twine(n) +
                          " matrices (at most " + Twine(kMaxDetSize) + "x" +
                          Twine(kMaxDetSize) + ")");
  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  Type t = type.getElementType();
  Type ct = t.isF64() ? b.getF64Type() : b.getF32Type();
  ArrayRef<int64_t> batch = type.getShape().drop_back(2);
  int64_t loops = batch.size();
  if (numElements(batch) == 0)
    return rw.replace(createEmpty(b, loc, batch, t));
  Value x = rw.input(0);
  Type onnxType = rw.onnxElementType(0);
  Value result = buildGeneric(
      b, loc, {},
      {{createEmpty(b, loc, batch, t), b.getMultiDimIdentityMap(loops)}},
      SmallVector<utils::IteratorType>(loops, utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location l, ValueRange,
          ValueRange) -> SmallVector<Value> {
        auto c = [&](double v) { return scalarConstant(nb, l, ct, v); };
        auto abs = [&](Value v) { return math::AbsFOp::create(nb, l, v); };
        SmallVector<Value> prefix;
        for (int64_t d = 0; d < loops; ++d)
          prefix.push_back(linalg::IndexOp::create(nb, l, d));
        SmallVector<SmallVector<Value>> a(n, SmallVector<Value>(n));
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < n; ++j) {
            SmallVector<Value> idx(prefix);
            idx.push_back(arith::ConstantIndexOp::create(nb, l, i));
            idx.push_back(arith::ConstantIndexOp::create(nb, l, j));
            a[i][j] = castScalar(
                nb, l, tensor::ExtractOp::create(nb, l, x, idx), onnxType, ct);
          }
        Value det = c(1);
        for (int64_t k = 0; k < n; ++k) {
          for (int64_t r = k + 1; r < n; ++r) {
            Value larger = arith::CmpFOp::create(
                nb, l, arith::CmpFPredicate::OGT, abs(a[r][k]), abs(a[k][k]));
            for (int64_t j = k; j < n; ++j) {
              Value top = a[k][j];
              a[k][j] = arith::SelectOp::create(nb, l, larger, a[r][j], top);
              a[r][j] = arith::SelectOp::create(nb, l, larger, top, a[r][j]);
            }
            det = arith::SelectOp::create(
                nb, l, larger, arith::NegFOp::create(nb, l, det), det);
          }
          det = arith::MulFOp::create(nb, l, det, a[k][k]);
          Value singular = arith::CmpFOp::create(
              nb, l, arith::CmpFPredicate::OEQ, a[k][k], c(0));
          Value pivot = arith::SelectOp::create(nb, l, singular, c(1), a[k][k]);
          for (int64_t r = k + 1; r < n; ++r) {
            Value f = arith::DivFOp::create(nb, l, a[r][k], pivot);
            for (int64_t j = k + 1; j < n; ++j)
              a[r][j] = arith::SubFOp::create(
                  nb, l, a[r][j], arith::MulFOp::create(nb, l, f, a[k][j]));
          }
        }
        return {castScalar(nb, l, det, ct, onnxType)};
      })[0];
  return rw.replace(result);
}

} // namespace

void dlc::populateMatrixHandlers(HandlerRegistry &r) {
  r.add("MatMul", {1, 9, 13}, convertMatMul);
  r.add("Gemm", {1, 6, 7, 9, 11, 13}, convertGemm);
  r.add("Einsum", {12}, convertEinsum);
  r.add("Det", {11, 22}, convertDet);
}

//===- Text.cpp - TfIdfVectorizer -----------------------------------------===//
//
// TfIdfVectorizer counts, in each row of token ids, the occurrences of a
// fixed vocabulary of n-grams (with up to max_skip_count tokens skipped
// between the items of an n-gram of two or more), and weights the counts.
// The vocabulary is an attribute, so the handler lays it out at compile
// time as tables indexed by output column: the tokens of the n-grams that
// column counts and their lengths. The kernel is one linalg.generic over
// [rows, columns] whose reduction loops run over those n-grams, the skip
// distances and the start positions; the body compares the tokens at
// start, start + d, start + 2d, ... with the table. Weighting is an
// elementwise epilogue.
//
//===----------------------------------------------------------------------===//

#include "Utils.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/AffineMap.h"

using namespace mlir;
using namespace dlc;

namespace {

/// Vocabulary tables above this many elements are refused.
constexpr int64_t kMaxVocabularyTable = int64_t(1) << 22;

LogicalResult convertTfIdfVectorizer(NodeRewriter &rw) {
  if (failed(rw.requireInput(0, "X")))
    return failure();
  auto type = rw.inputType(0);
  auto elem = dyn_cast<IntegerType>(type.getElementType());
  if (!elem || (elem.getWidth() != 32 && elem.getWidth() != 64))
    return rw.unsupported("X of element type " +
                          typeName(type.getElementType()) +
                          " (int32 and int64 token ids are; strings are not)");
  if (type.getRank() != 1 && type.getRank() != 2)
    return rw.fail("X must be [C] or [B, C], not " + typeName(type));
  if (rw.hasAttr("pool_strings"))
    return rw.unsupported("pool_strings (string n-grams)");
  int64_t minLen = rw.getInt("min_gram_length", 0),
          maxLen = rw.getInt("max_gram_length", 0),
          maxSkip = rw.getInt("max_skip_count", 0);
  std::string mode = rw.getString("mode", "");
  SmallVector<int64_t> counts = rw.getInts("ngram_counts");
  SmallVector<int64_t> indexes = rw.getInts("ngram_indexes");
  SmallVector<int64_t> pool = rw.getInts("pool_int64s");
  SmallVector<float> weights = rw.getFloats("weights");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF")
    return rw.fail("mode must be TF, IDF or TFIDF, not '" + mode + "'");
  if (minLen < 1 || maxLen < minLen || maxSkip < 0)
    return rw.fail("need 1 <= min_gram_length <= max_gram_length and "
                   "max_skip_count >= 0");
  if (indexes.empty() || counts.empty())
    return rw.fail("ngram_counts and ngram_indexes must not be empty");

  // The n-grams in pool order: pool segment i (from ngram_counts[i] to the
  // next) holds n-grams of i + 1 tokens; each takes the next id, and id k
  // counts into column ngram_indexes[k]. Lengths outside [min, max] take
  // ids but are not counted.
  struct Gram {
    SmallVector<int64_t> tokens;
    int64_t column;
  };
  SmallVector<Gram> grams;
  int64_t id = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    int64_t begin = counts[i];
    int64_t end = i + 1 < counts.size() ? counts[i + 1] : pool.size();
    int64_t size = i + 1;
    if (begin < 0 || end < begin || end > int64_t(pool.size()) ||
        (end - begin) % size)
      return rw.fail("ngram_counts " + Twine(i) + " does not delimit whole " +
                     Twine(size) + "-grams of pool_int64s");
    for (int64_t at = begin; at < end; at += size, ++id) {
      if (id >= int64_t(indexes.size()))
        return rw.fail("ngram_indexes has " + Twine(indexes.size()) +
                       " entries, fewer than the pool's n-grams");
      if (size < minLen || size > maxLen)
        continue;
      grams.push_back(
          {SmallVector<int64_t>(pool.begin() + at, pool.begin() + at + size),
           indexes[id]});
    }
  }
  int64_t columns = 0;
  for (int64_t c : indexes) {
    if (c < 0)
      return rw.fail("ngram_indexes must not be negative");
    columns = std::max(columns, c + 1);
  }
  if (!weights.empty() && int64_t(weights.size()) < columns)
    return rw.fail("weights has " + Twine(weights.size()) + " entries for " +
                   Twine(columns) + " output columns");
  // Per column: its n-grams (k < slots), their lengths (0: none) and
  // tokens, padded to the longest.
  SmallVector<SmallVector<const Gram *>> perColumn(columns);
  for (const Gram &g : grams)
    perColumn[g.column].push_back(&g);
  int64_t slots = 1, longest = 1;
  for (auto &c : perColumn)
    slots = std::max<int64_t>(slots, c.size());
  for (const Gram &g : grams)
    longest = std::max<int64_t>(longest, g.tokens.size());
  if (columns * slots * longest > kMaxVocabularyTable)
    return rw.unsupported("a vocabulary table of " +
                          Twine(columns * slots * longest) +
                          " entries (at most 2^22)");
  SmallVector<int64_t> lengths(columns * slots, 0),
      tokens(columns * slots * longest, 0);
  for (int64_t c = 0; c < columns; ++c)
    for (auto [k, g] : llvm::enumerate(perColumn[c])) {
      lengths[c * slots + k] = g->tokens.size();
      for (auto [i, t] : llvm::enumerate(g->tokens))
        tokens[(c * slots + k) * longest + i] = t;
    }

  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  MLIRContext *ctx = rw.ctx();
  Type i64 = b.getI64Type(), f32 = b.getF32Type();
  bool batched = type.getRank() == 2;
  int64_t rows = batched ? type.getDimSize(0) : 1;
  int64_t length = type.getShape().back();
  SmallVector<int64_t> outShape = {rows, columns};
  Value x = rw.input(0);
  if (!batched)
    x = reshapeTo(b, loc, x, {1, length});
  Value lengthTable = createConstant(
      b, loc,
      DenseElementsAttr::get(RankedTensorType::get({columns, slots}, i64),
                             ArrayRef<int64_t>(lengths)));
  Value tokenTable =
      createConstant(b, loc,
                     DenseElementsAttr::get(
                         RankedTensorType::get({columns, slots, longest}, i64),
                         ArrayRef<int64_t>(tokens)));
  // Loops (row, column, slot, skip distance - 1, start).
  auto d = [&](unsigned i) { return b.getAffineDimExpr(i); };
  int64_t distances = maxSkip + 1;
  SmallVector<GenericOperand> ins = {
      {lengthTable, AffineMap::get(5, 0, {d(1), d(2)}, ctx)},
      {createEmpty(b, loc, {distances, length}, i64),
       AffineMap::get(5, 0, {d(3), d(4)}, ctx)}};
  SmallVector<utils::IteratorType> iterators(2, utils::IteratorType::parallel);
  iterators.append(3, utils::IteratorType::reduction);
  Value init = createFilled(b, loc, outShape, f32, b.getZeroAttr(f32));
  Value freq =
      length == 0
          ? init
          : buildGeneric(
                b, loc, ins, {{init, AffineMap::get(5, 0, {d(0), d(1)}, ctx)}},
                iterators,
                [&](OpBuilder &nb, Location l, ValueRange in,
                    ValueRange out) -> SmallVector<Value> {
                  Type index = nb.getIndexType();
                  auto idx = [&](unsigned i) {
                    return linalg::IndexOp::create(nb, l, index, i).getResult();
                  };
                  auto cst = [&](int64_t v) {
                    return arith::ConstantIndexOp::create(nb, l, v).getResult();
                  };
                  auto cmp = [&](arith::CmpIPredicate p, Value a, Value c) {
                    return arith::CmpIOp::create(nb, l, p, a, c).getResult();
                  };
                  auto andI = [&](Value a, Value c) {
                    return arith::AndIOp::create(nb, l, a, c).getResult();
                  };
                  Value len = arith::IndexCastOp::create(nb, l, index, in[0]);
                  Value dist = arith::AddIOp::create(nb, l, idx(3), cst(1));
                  Value start = idx(4);
                  // A length-L n-gram at start s with distance d ends at
                  // s + (L - 1) d, inside the row; unigrams count at distance 1
                  // only.
                  Value last = arith::AddIOp::create(
                      nb, l, start,
                      arith::MulIOp::create(
                          nb, l, arith::SubIOp::create(nb, l, len, cst(1)),
                          dist));
                  Value match =
                      andI(cmp(arith::CmpIPredicate::sgt, len, cst(0)),
                           cmp(arith::CmpIPredicate::slt, last, cst(length)));
                  match = andI(
                      match,
                      arith::OrIOp::create(
                          nb, l, cmp(arith::CmpIPredicate::sgt, len, cst(1)),
                          cmp(arith::CmpIPredicate::eq, dist, cst(1))));
                  for (int64_t i = 0; i < longest; ++i) {
                    Value pos = arith::AddIOp::create(
                        nb, l, start,
                        arith::MulIOp::create(nb, l, cst(i), dist));
                    pos = arith::MinSIOp::create(nb, l, pos, cst(length - 1));
                    Value token = tensor::ExtractOp::create(
                        nb, l, x, ValueRange{idx(0), pos});
                    if (token.getType() != i64)
                      token = arith::ExtSIOp::create(nb, l, i64, token);
                    Value want = tensor::ExtractOp::create(
                        nb, l, tokenTable, ValueRange{idx(1), idx(2), cst(i)});
                    Value same = cmp(arith::CmpIPredicate::eq, token, want);
                    Value beyond = cmp(arith::CmpIPredicate::sle, len, cst(i));
                    match =
                        andI(match, arith::OrIOp::create(nb, l, same, beyond));
                  }
                  Value one = arith::UIToFPOp::create(nb, l, f32, match);
                  return {arith::AddFOp::create(nb, l, out[0], one)};
                })[0];

  // Weighting: TF the counts; IDF the column's weight (1 without weights)
  // where the count is positive; TFIDF the count times the weight.
  Value y = freq;
  if (mode != "TF") {
    SmallVector<Attribute> w;
    for (int64_t c = 0; c < columns; ++c)
      w.push_back(FloatAttr::get(f32, weights.empty() ? 1.0 : weights[c]));
    Value wTable = createConstant(
        b, loc,
        DenseElementsAttr::get(RankedTensorType::get({1, columns}, f32), w));
    bool idf = mode == "IDF";
    y = buildBroadcastGeneric(
        b, loc, {freq, wTable}, outShape, f32,
        [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
          if (!idf)
            return arith::MulFOp::create(nb, l, a[0], a[1]);
          Value zero = arith::ConstantFloatOp::create(
              nb, l, cast<FloatType>(f32), APFloat(0.0f));
          Value seen = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGT,
                                             a[0], zero);
          return arith::SelectOp::create(nb, l, seen, a[1], zero);
        });
  }
  if (!batched)
    y = reshapeTo(b, loc, y, {columns});
  return rw.replace(y);
}

} // namespace

void dlc::populateTextHandlers(HandlerRegistry &r) {
  r.add("TfIdfVectorizer", {9}, convertTfIdfVectorizer);
}

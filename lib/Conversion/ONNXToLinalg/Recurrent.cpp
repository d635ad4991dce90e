//===- Recurrent.cpp - RNN, GRU and LSTM ----------------------------------===//
//
// A recurrent layer becomes, per direction:
// - one contraction over every time step at once: the input projection
//   X * W^T plus the biases that add outside the recurrence, [S, B, G*H]
//   for G gates (a parallel kernel, most of the layer's multiply-adds);
// - one scf.for over the time steps that carries the hidden (and cell)
//   state and writes one output row per step: the recurrent product
//   H * R^T and every gate of the step in one elementwise generic. The
//   loop is one kernel of its own (dispatch formation keeps non-linalg ops
//   whole), so the state never leaves it between steps;
// - for the reverse direction, a gather that puts the rows back in time
//   order.
// Sequence lengths must be known at compile time: a batch entry stops
// updating its state at its length, its later outputs are zero, and the
// reverse direction starts from its last valid step, as ONNX Runtime does.
// f16 inputs compute in f32, f64 in f64.
//
// com.microsoft.DynamicQuantizeLSTM (what ONNX Runtime's quantize_dynamic
// writes for an LSTM) is the same layer with 8-bit W and R stored as
// [D, I, 4H] and [D, H, 4H]. Its products follow ONNX Runtime's: the whole
// input sequence, and the hidden state at each step, are quantized
// dynamically to uint8 (as DynamicQuantizeLinear does), multiplied in
// int32 with the weights minus their zero point, and scaled by the input's
// scale times the weight's (per tensor or per column).
//
//===----------------------------------------------------------------------===//

#include "Utils.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/AffineMap.h"
#include "llvm/ADT/StringExtras.h"

#include <limits>

using namespace mlir;
using namespace dlc;

namespace {

enum class Cell { RNN, GRU, LSTM };

/// Gates per cell (the rows of W and R are the gates' blocks of H rows).
int64_t gateCount(Cell cell) {
  return cell == Cell::RNN ? 1 : cell == Cell::GRU ? 3 : 4;
}

/// Activation functions per direction (f, g, h in ONNX's terms).
int64_t activationCount(Cell cell) {
  return cell == Cell::RNN ? 1 : cell == Cell::GRU ? 2 : 3;
}

std::string str(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? ", " : "") + std::to_string(d);
  return s + "]";
}

/// One activation function with its parameters.
struct Activation {
  std::string name; ///< lower case
  float alpha = 0, beta = 0;
};

/// The `activations` attribute with its alpha/beta lists (consumed in order
/// by the functions that take them), or the cell's defaults.
FailureOr<SmallVector<Activation>> readActivations(NodeRewriter &rw, Cell cell,
                                                   int64_t directions) {
  static const char *const defaults[3][3] = {
      {"tanh"}, {"sigmoid", "tanh"}, {"sigmoid", "tanh", "tanh"}};
  int64_t per = activationCount(cell);
  SmallVector<std::string> names;
  if (auto attr = rw.getOp().getOnnxAttr("activations")) {
    auto list = dyn_cast<ArrayAttr>(attr);
    if (!list)
      return rw.fail("activations must be a list of strings");
    for (Attribute a : list) {
      auto s = dyn_cast<StringAttr>(a);
      if (!s)
        return rw.fail("activations must be a list of strings");
      names.push_back(s.getValue().lower());
    }
    if (static_cast<int64_t>(names.size()) != per * directions)
      return rw.fail("activations lists " + Twine(names.size()) +
                     " functions; this cell takes " + Twine(per) +
                     " per direction, " + Twine(per * directions) + " in all");
  } else {
    for (int64_t d = 0; d < directions; ++d)
      for (int64_t i = 0; i < per; ++i)
        names.push_back(defaults[static_cast<int>(cell)][i]);
  }
  SmallVector<float> alphas = rw.getFloats("activation_alpha");
  SmallVector<float> betas = rw.getFloats("activation_beta");
  size_t nextAlpha = 0, nextBeta = 0;
  SmallVector<Activation> result;
  for (const std::string &name : names) {
    Activation a;
    a.name = name;
    // ONNX Runtime's defaults where the lists run out.
    float alpha = 0, beta = 0;
    bool takesAlpha = true, takesBeta = false;
    if (name == "affine") {
      alpha = 1, beta = 0, takesBeta = true;
    } else if (name == "leakyrelu") {
      alpha = 0.01f;
    } else if (name == "thresholdedrelu") {
      alpha = 1;
    } else if (name == "scaledtanh") {
      alpha = 1, beta = 1, takesBeta = true;
    } else if (name == "hardsigmoid") {
      alpha = 0.2f, beta = 0.5f, takesBeta = true;
    } else if (name == "elu") {
      alpha = 1;
    } else if (name == "relu" || name == "tanh" || name == "sigmoid" ||
               name == "softsign" || name == "softplus") {
      takesAlpha = false;
    } else {
      return rw.unsupported("activation '" + name + "'");
    }
    if (takesAlpha && nextAlpha < alphas.size())
      alpha = alphas[nextAlpha++];
    if (takesBeta && nextBeta < betas.size())
      beta = betas[nextBeta++];
    a.alpha = alpha;
    a.beta = beta;
    result.push_back(a);
  }
  return result;
}

Value applyActivation(OpBuilder &b, Location loc, Value x,
                      const Activation &a) {
  Type t = x.getType();
  auto c = [&](double v) { return scalarConstant(b, loc, t, v); };
  Value zero = c(0), one = c(1);
  const std::string &n = a.name;
  if (n == "relu")
    return arith::MaximumFOp::create(b, loc, x, zero);
  if (n == "tanh")
    return math::TanhOp::create(b, loc, x);
  if (n == "sigmoid")
    return arith::DivFOp::create(
        b, loc, one,
        arith::AddFOp::create(
            b, loc, one,
            math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x))));
  if (n == "affine")
    return arith::AddFOp::create(
        b, loc, arith::MulFOp::create(b, loc, c(a.alpha), x), c(a.beta));
  if (n == "leakyrelu") {
    Value neg =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, zero);
    return arith::SelectOp::create(
        b, loc, neg, arith::MulFOp::create(b, loc, c(a.alpha), x), x);
  }
  if (n == "thresholdedrelu") {
    Value above =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, c(a.alpha));
    return arith::SelectOp::create(b, loc, above, x, zero);
  }
  if (n == "scaledtanh")
    return arith::MulFOp::create(
        b, loc, c(a.alpha),
        math::TanhOp::create(b, loc,
                             arith::MulFOp::create(b, loc, c(a.beta), x)));
  if (n == "hardsigmoid") {
    Value y = arith::AddFOp::create(
        b, loc, arith::MulFOp::create(b, loc, c(a.alpha), x), c(a.beta));
    return arith::MaximumFOp::create(b, loc, zero,
                                     arith::MinimumFOp::create(b, loc, one, y));
  }
  if (n == "elu") {
    Value neg =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, zero);
    Value e = arith::MulFOp::create(
        b, loc, c(a.alpha),
        arith::SubFOp::create(b, loc, math::ExpOp::create(b, loc, x), one));
    return arith::SelectOp::create(b, loc, neg, e, x);
  }
  if (n == "softsign")
    return arith::DivFOp::create(
        b, loc, x,
        arith::AddFOp::create(b, loc, one, math::AbsFOp::create(b, loc, x)));
  // softplus
  return math::LogOp::create(
      b, loc,
      arith::AddFOp::create(b, loc, one, math::ExpOp::create(b, loc, x)));
}

/// `tensor` (of any float type) converted to `ct`.
Value toComputeType(OpBuilder &b, Location loc, Value v, Type onnxType,
                    Type ct) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getElementType() == ct)
    return v;
  return buildBroadcastGeneric(b, loc, v, type.getShape(), ct,
                               [&](OpBuilder &nb, Location l, ValueRange a) {
                                 return castScalar(nb, l, a[0], onnxType, ct);
                               });
}

/// Rows [offset, offset + size) of dim 0 of `v`, that dim dropped when
/// `size` is 1 and `drop` is set.
Value sliceDim0(OpBuilder &b, Location loc, Value v, int64_t offset,
                int64_t size) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes, strides(type.getRank(), b.getIndexAttr(1));
  offsets[0] = b.getIndexAttr(offset);
  for (int64_t d : type.getShape())
    sizes.push_back(b.getIndexAttr(d));
  sizes[0] = b.getIndexAttr(size);
  return tensor::ExtractSliceOp::create(b, loc, v, offsets, sizes, strides);
}

/// The element of a rank-1 tensor as a dropped-dim slice: v[d] of [N, ...]
/// as [...].
Value pick(OpBuilder &b, Location loc, Value v, int64_t index) {
  auto type = cast<RankedTensorType>(v.getType());
  Value row = sliceDim0(b, loc, v, index, 1);
  return reshapeTo(b, loc, row, type.getShape().drop_front());
}

/// out[m, n] = sum_k a[m, k] * w[n, k] (a product with the transposed
/// weight rows, as ONNX stores W and R), accumulated from zeros: what adds
/// to it comes in the elementwise generic that reads it.
Value contractTransposed(OpBuilder &b, Location loc, Value a, Value w) {
  MLIRContext *ctx = b.getContext();
  auto aType = cast<RankedTensorType>(a.getType());
  auto wType = cast<RankedTensorType>(w.getType());
  Type t = aType.getElementType();
  Value init = createFilled(b, loc, {aType.getDimSize(0), wType.getDimSize(0)},
                            t, scalarAttr(t, 0));
  AffineExpr m = getAffineDimExpr(0, ctx), n = getAffineDimExpr(1, ctx),
             k = getAffineDimExpr(2, ctx);
  auto map = [&](ArrayRef<AffineExpr> e) {
    return AffineMap::get(3, 0, e, ctx);
  };
  return buildGeneric(
      b, loc, {{a, map({m, k})}, {w, map({n, k})}}, {{init, map({m, n})}},
      {utils::IteratorType::parallel, utils::IteratorType::parallel,
       utils::IteratorType::reduction},
      [](OpBuilder &nb, Location l, ValueRange in, ValueRange out) {
        return SmallVector<Value>{arith::AddFOp::create(
            nb, l, out[0], arith::MulFOp::create(nb, l, in[0], in[1]))};
      })[0];
}

/// Gate `g` of a [batch, G*H] tensor: its columns [g*H, (g+1)*H).
Value gate(OpBuilder &b, Location loc, Value v, int64_t g, int64_t hidden) {
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<OpFoldResult> offsets = {b.getIndexAttr(0),
                                       b.getIndexAttr(g * hidden)};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(type.getDimSize(0)),
                                     b.getIndexAttr(hidden)};
  SmallVector<OpFoldResult> strides(2, b.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(b, loc, v, offsets, sizes, strides);
}

/// An 8-bit weight of DynamicQuantizeLSTM for one direction.
struct QuantizedWeight {
  Value w;         ///< [K, N], signless i8
  bool isUnsigned; ///< uint8 rather than int8
  Value scale;     ///< [N] f32
  int32_t zeroPoint = 0;
};

/// out[m, n] = a[m, k] * w[k, n] as ONNX Runtime's quantized LSTM computes
/// it: `a` (f32) quantized dynamically, as a whole or (`perRow`) each row
/// with its own range, the int32 sum of (qa - za) * (w - zw), times
/// scale(a) * scale(w)[n].
Value quantizedProduct(OpBuilder &b, Location loc, Value a,
                       const QuantizedWeight &q, bool perRow) {
  MLIRContext *ctx = b.getContext();
  auto [qa, sa, za] = buildDynamicQuantize(b, loc, a, perRow ? 1 : 0);
  auto aType = cast<RankedTensorType>(a.getType());
  auto wType = cast<RankedTensorType>(q.w.getType());
  int64_t m = aType.getDimSize(0), n = wType.getDimSize(1);
  Type f32 = b.getF32Type();
  AffineExpr dm = getAffineDimExpr(0, ctx), dn = getAffineDimExpr(1, ctx),
             dk = getAffineDimExpr(2, ctx);
  auto map3 = [&](ArrayRef<AffineExpr> e) {
    return AffineMap::get(3, 0, e, ctx);
  };
  IntegerOperand lhs{qa, map3({dm, dk}), /*isUnsigned=*/true, za,
                     perRow ? map3({dm}) : map3({})};
  IntegerOperand rhs{q.w, map3({dk, dn}), q.isUnsigned, Value(), AffineMap()};
  if (q.zeroPoint != 0) {
    rhs.zp = createConstant(
        b, loc,
        DenseElementsAttr::get(
            RankedTensorType::get({}, b.getI8Type()),
            IntegerAttr::get(b.getI8Type(), APInt(8, q.zeroPoint & 0xff))));
    rhs.zpMap = map3({});
  }
  Value acc = integerContraction(b, loc, lhs, rhs, {m, n}, map3({dm, dn}),
                                 {utils::IteratorType::parallel,
                                  utils::IteratorType::parallel,
                                  utils::IteratorType::reduction});
  AffineMap id2 = b.getMultiDimIdentityMap(2);
  return buildGeneric(
      b, loc,
      {{acc, id2},
       {sa, perRow ? AffineMap::get(2, 0, {dm}, ctx)
                   : AffineMap::get(2, 0, {}, ctx)},
       {q.scale, AffineMap::get(2, 0, {dn}, ctx)}},
      {{createEmpty(b, loc, {m, n}, f32), id2}},
      {utils::IteratorType::parallel, utils::IteratorType::parallel},
      [&](OpBuilder &nb, Location l, ValueRange in, ValueRange) {
        Value multiplier = arith::MulFOp::create(nb, l, in[1], in[2]);
        return SmallVector<Value>{arith::MulFOp::create(
            nb, l, arith::SIToFPOp::create(nb, l, f32, in[0]), multiplier)};
      })[0];
}

/// Everything one direction needs, in the compute type.
struct Direction {
  bool reverse = false;
  Value w, r;          ///< [G*H, I], [G*H, H]
  Value inputBias;     ///< [G*H], added to the input projection
  Value recurrentBias; ///< GRU with linear_before_reset: Rb of gate h, [H]
  Value peephole;      ///< LSTM: [3*H] or null
  Value h0, c0;        ///< [batch, H]
  /// DynamicQuantizeLSTM: W and R as 8-bit [I, G*H] and [H, G*H] (w and r
  /// are then unset).
  std::optional<QuantizedWeight> wq, rq;
  ArrayRef<Activation> activations;
};

struct Layer {
  Cell cell;
  int64_t steps, batch, input, hidden;
  Type ct;
  std::optional<float> clip;
  bool linearBeforeReset = false, inputForget = false;
  Value lengths; ///< tensor<batch x i32> constant: each entry's length
};

/// The step index a batch entry reads at loop step `s` (as index values in
/// a generic body): s, or for the reverse direction length - 1 - s,
/// clamped to a valid row (masked steps read row 0), and whether the step
/// is within the entry's length.
std::pair<Value, Value> stepOf(OpBuilder &b, Location loc, const Layer &layer,
                               bool reverse, Value s, Value batchIndex) {
  Value length = arith::IndexCastOp::create(
      b, loc, b.getIndexType(),
      tensor::ExtractOp::create(b, loc, layer.lengths, batchIndex));
  Value valid =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, s, length);
  Value t = s;
  if (reverse) {
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    t = arith::SubIOp::create(b, loc,
                              arith::SubIOp::create(b, loc, length, one), s);
  }
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  t = arith::SelectOp::create(b, loc, valid, t, zero);
  return {t, valid};
}

/// Runs one direction over the projected inputs `xp` [S, batch, G*H];
/// returns Y [S, batch, H] in time order, the last H and (LSTM) the last C.
SmallVector<Value> runDirection(OpBuilder &b, Location loc, const Layer &layer,
                                const Direction &dir, Value xp) {
  MLIRContext *ctx = b.getContext();
  Type ct = layer.ct;
  int64_t hidden = layer.hidden, batch = layer.batch, steps = layer.steps;
  int64_t gates = gateCount(layer.cell) * hidden;
  bool lstm = layer.cell == Cell::LSTM, gru = layer.cell == Cell::GRU;
  auto par = utils::IteratorType::parallel;
  AffineMap id2 = b.getMultiDimIdentityMap(2);
  auto clipped = [&](OpBuilder &nb, Location l, Value v) -> Value {
    if (!layer.clip)
      return v;
    Value c = scalarConstant(nb, l, ct, *layer.clip);
    return arith::MaximumFOp::create(nb, l, arith::NegFOp::create(nb, l, c),
                                     arith::MinimumFOp::create(nb, l, c, v));
  };
  auto act = [&](OpBuilder &nb, Location l, Value v, int i) {
    return applyActivation(nb, l, clipped(nb, l, v), dir.activations[i]);
  };

  Value lb = arith::ConstantIndexOp::create(b, loc, 0);
  Value ub = arith::ConstantIndexOp::create(b, loc, steps);
  Value step = arith::ConstantIndexOp::create(b, loc, 1);
  // The loop carries buffers of its own, updated in place each step; step
  // 0 reads the initial state instead (the initial values are kernel
  // inputs or constants, which the kernel must not write).
  SmallVector<Value> inits = {createEmpty(b, loc, {batch, hidden}, ct)};
  if (lstm)
    inits.push_back(createEmpty(b, loc, {batch, hidden}, ct));
  inits.push_back(createEmpty(b, loc, {steps, batch, hidden}, ct));
  auto loop = scf::ForOp::create(
      b, loc, lb, ub, step, inits,
      [&](OpBuilder &lb2, Location l, Value s, ValueRange state) {
        OpBuilder &nb = lb2;
        Value first =
            arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq, s, lb);
        auto current = [&](Value initial, Value carried) {
          return buildGeneric(
              nb, l, {{initial, id2}, {carried, id2}},
              {{createEmpty(nb, l, {batch, hidden}, ct), id2}}, {par, par},
              [&](OpBuilder &gb, Location gl, ValueRange in, ValueRange) {
                return SmallVector<Value>{
                    arith::SelectOp::create(gb, gl, first, in[0], in[1])};
              })[0];
        };
        Value hState = state[0], cState = lstm ? state[1] : Value();
        Value h = current(dir.h0, hState);
        Value ys = state.back();
        // This step's projected inputs, per batch entry.
        Value rows = buildGeneric(
            nb, l, {}, {{createEmpty(nb, l, {batch, gates}, ct), id2}},
            {par, par},
            [&](OpBuilder &gb, Location gl, ValueRange, ValueRange) {
              Value bi = linalg::IndexOp::create(gb, gl, 0);
              Value j = linalg::IndexOp::create(gb, gl, 1);
              Value t = stepOf(gb, gl, layer, dir.reverse, s, bi).first;
              return SmallVector<Value>{
                  tensor::ExtractOp::create(gb, gl, xp, ValueRange{t, bi, j})};
            })[0];
        Value hNew, cNew, y;
        Value hInit = createEmpty(nb, l, {batch, hidden}, ct);
        Value zero = scalarConstant(nb, l, ct, 0);
        if (layer.cell == Cell::RNN) {
          // The pre-activation: this step's projected input + H * R^T.
          Value hr = contractTransposed(nb, l, h, dir.r);
          SmallVector<Value> out = buildGeneric(
              nb, l, {{rows, id2}, {hr, id2}, {dir.h0, id2}},
              {{hState, id2}, {hInit, id2}}, {par, par},
              [&](OpBuilder &gb, Location gl, ValueRange in, ValueRange outs) {
                Value bi = linalg::IndexOp::create(gb, gl, 0);
                Value valid = stepOf(gb, gl, layer, dir.reverse, s, bi).second;
                Value v =
                    act(gb, gl, arith::AddFOp::create(gb, gl, in[0], in[1]), 0);
                Value hPrev =
                    arith::SelectOp::create(gb, gl, first, in[2], outs[0]);
                return SmallVector<Value>{
                    arith::SelectOp::create(gb, gl, valid, v, hPrev),
                    arith::SelectOp::create(gb, gl, valid, v, zero)};
              });
          hNew = out[0];
          y = out[1];
        } else if (gru) {
          // Gates z, r, h: the step's inputs plus H * R^T for z and r (and
          // h with linear_before_reset, where r multiplies H Rh^T + Rbh);
          // otherwise the h gate adds (r * H) * Rh^T.
          int64_t recurrentGates = layer.linearBeforeReset ? 3 : 2;
          Value hr = contractTransposed(
              nb, l, h, sliceDim0(nb, l, dir.r, 0, recurrentGates * hidden));
          SmallVector<GenericOperand> ins = {
              {gate(nb, l, rows, 0, hidden), id2},
              {gate(nb, l, hr, 0, hidden), id2},
              {gate(nb, l, rows, 1, hidden), id2},
              {gate(nb, l, hr, 1, hidden), id2},
              {gate(nb, l, rows, 2, hidden), id2}};
          if (layer.linearBeforeReset) {
            ins.push_back({gate(nb, l, hr, 2, hidden), id2});
            ins.push_back(
                {dir.recurrentBias,
                 AffineMap::get(2, 0, {getAffineDimExpr(1, ctx)}, ctx)});
          } else {
            Value rh = buildGeneric(
                nb, l,
                {{gate(nb, l, rows, 1, hidden), id2},
                 {gate(nb, l, hr, 1, hidden), id2},
                 {h, id2}},
                {{hInit, id2}}, {par, par},
                [&](OpBuilder &gb, Location gl, ValueRange in, ValueRange) {
                  Value rg = act(
                      gb, gl, arith::AddFOp::create(gb, gl, in[0], in[1]), 0);
                  return SmallVector<Value>{
                      arith::MulFOp::create(gb, gl, rg, in[2])};
                })[0];
            ins.push_back(
                {contractTransposed(
                     nb, l, rh, sliceDim0(nb, l, dir.r, 2 * hidden, hidden)),
                 id2});
          }
          ins.push_back({dir.h0, id2});
          SmallVector<Value> out = buildGeneric(
              nb, l, ins, {{hState, id2}, {hInit, id2}}, {par, par},
              [&](OpBuilder &gb, Location gl, ValueRange in, ValueRange outs) {
                Value bi = linalg::IndexOp::create(gb, gl, 0);
                Value valid = stepOf(gb, gl, layer, dir.reverse, s, bi).second;
                Value z =
                    act(gb, gl, arith::AddFOp::create(gb, gl, in[0], in[1]), 0);
                Value hPrev =
                    arith::SelectOp::create(gb, gl, first, in.back(), outs[0]);
                Value pre;
                if (layer.linearBeforeReset) {
                  Value rg = act(
                      gb, gl, arith::AddFOp::create(gb, gl, in[2], in[3]), 0);
                  Value recurrent = arith::AddFOp::create(gb, gl, in[5], in[6]);
                  pre = arith::AddFOp::create(
                      gb, gl, in[4],
                      arith::MulFOp::create(gb, gl, rg, recurrent));
                } else {
                  pre = arith::AddFOp::create(gb, gl, in[4], in[5]);
                }
                Value cand = act(gb, gl, pre, 1);
                Value one = scalarConstant(gb, gl, ct, 1);
                Value v = arith::AddFOp::create(
                    gb, gl,
                    arith::MulFOp::create(
                        gb, gl, arith::SubFOp::create(gb, gl, one, z), cand),
                    arith::MulFOp::create(gb, gl, z, hPrev));
                return SmallVector<Value>{
                    arith::SelectOp::create(gb, gl, valid, v, hPrev),
                    arith::SelectOp::create(gb, gl, valid, v, zero)};
              });
          hNew = out[0];
          y = out[1];
        } else {
          // LSTM, gates i, o, f, c (each the step's inputs plus H * R^T);
          // peepholes i, o, f.
          // Each batch entry's state is quantized with its own range (as
          // ONNX Runtime does when it has a thread per entry; with fewer
          // threads it shares ranges between entries).
          Value hr = dir.rq ? quantizedProduct(nb, l, h, *dir.rq, true)
                            : contractTransposed(nb, l, h, dir.r);
          SmallVector<GenericOperand> ins;
          for (int64_t gi = 0; gi < 4; ++gi) {
            ins.push_back({gate(nb, l, rows, gi, hidden), id2});
            ins.push_back({gate(nb, l, hr, gi, hidden), id2});
          }
          if (dir.peephole)
            for (int64_t p = 0; p < 3; ++p)
              ins.push_back(
                  {sliceDim0(nb, l, dir.peephole, p * hidden, hidden),
                   AffineMap::get(2, 0, {getAffineDimExpr(1, ctx)}, ctx)});
          ins.push_back({dir.h0, id2});
          ins.push_back({dir.c0, id2});
          SmallVector<Value> out = buildGeneric(
              nb, l, ins, {{hState, id2}, {cState, id2}, {hInit, id2}},
              {par, par},
              [&](OpBuilder &gb, Location gl, ValueRange in, ValueRange outs) {
                Value bi = linalg::IndexOp::create(gb, gl, 0);
                Value valid = stepOf(gb, gl, layer, dir.reverse, s, bi).second;
                // The previous state: the initial one at step 0, else the
                // carried buffers this generic updates in place.
                Value hPrev = arith::SelectOp::create(
                    gb, gl, first, in[in.size() - 2], outs[0]);
                Value cPrev =
                    arith::SelectOp::create(gb, gl, first, in.back(), outs[1]);
                auto sum = [&](unsigned k) -> Value {
                  return arith::AddFOp::create(gb, gl, in[2 * k],
                                               in[2 * k + 1]);
                };
                Value gi = sum(0), go = sum(1), gf = sum(2), gc = sum(3);
                if (dir.peephole) {
                  gi = arith::AddFOp::create(
                      gb, gl, gi, arith::MulFOp::create(gb, gl, in[8], cPrev));
                  gf = arith::AddFOp::create(
                      gb, gl, gf, arith::MulFOp::create(gb, gl, in[10], cPrev));
                }
                Value one = scalarConstant(gb, gl, ct, 1);
                Value i = act(gb, gl, gi, 0);
                Value f = layer.inputForget
                              ? arith::SubFOp::create(gb, gl, one, i)
                              : act(gb, gl, gf, 0);
                Value cand = act(gb, gl, gc, 1);
                Value cv = arith::AddFOp::create(
                    gb, gl, arith::MulFOp::create(gb, gl, f, cPrev),
                    arith::MulFOp::create(gb, gl, i, cand));
                if (dir.peephole)
                  go = arith::AddFOp::create(
                      gb, gl, go, arith::MulFOp::create(gb, gl, in[9], cv));
                Value o = act(gb, gl, go, 0);
                Value hv = arith::MulFOp::create(gb, gl, o, act(gb, gl, cv, 2));
                // clip applies to the activations' inputs, not to C.
                return SmallVector<Value>{
                    arith::SelectOp::create(gb, gl, valid, hv, hPrev),
                    arith::SelectOp::create(gb, gl, valid, cv, cPrev),
                    arith::SelectOp::create(gb, gl, valid, hv, zero)};
              });
          hNew = out[0];
          cNew = out[1];
          y = out[2];
        }
        // Row s of the step-ordered outputs.
        SmallVector<OpFoldResult> offs = {s, nb.getIndexAttr(0),
                                          nb.getIndexAttr(0)};
        SmallVector<OpFoldResult> sz = {nb.getIndexAttr(1),
                                        nb.getIndexAttr(batch),
                                        nb.getIndexAttr(hidden)};
        SmallVector<OpFoldResult> st(3, nb.getIndexAttr(1));
        Value row = reshapeTo(nb, l, y, {1, batch, hidden});
        Value ysNew =
            tensor::InsertSliceOp::create(nb, l, row, ys, offs, sz, st);
        SmallVector<Value> yields = {hNew};
        if (lstm)
          yields.push_back(cNew);
        yields.push_back(ysNew);
        scf::YieldOp::create(nb, l, yields);
      });
  Value ys = loop.getResults().back();
  // Time order: step s of the reverse direction produced time
  // length - 1 - s; times past an entry's length are zero.
  if (dir.reverse) {
    AffineMap id3 = b.getMultiDimIdentityMap(3);
    ys = buildGeneric(
        b, loc, {}, {{createEmpty(b, loc, {steps, batch, hidden}, ct), id3}},
        {par, par, par},
        [&](OpBuilder &gb, Location gl, ValueRange, ValueRange) {
          Value t = linalg::IndexOp::create(gb, gl, 0);
          Value bi = linalg::IndexOp::create(gb, gl, 1);
          Value j = linalg::IndexOp::create(gb, gl, 2);
          auto [src, valid] = stepOf(gb, gl, layer, true, t, bi);
          Value v =
              tensor::ExtractOp::create(gb, gl, ys, ValueRange{src, bi, j});
          return SmallVector<Value>{arith::SelectOp::create(
              gb, gl, valid, v, scalarConstant(gb, gl, ct, 0))};
        })[0];
  }
  SmallVector<Value> results = {ys, loop.getResult(0)};
  if (lstm)
    results.push_back(loop.getResult(1));
  return results;
}

/// DynamicQuantizeLSTM's 8-bit weight `wIdx` with its scale and zero point
/// (per direction, or per direction and column), one QuantizedWeight per
/// direction. ONNX Runtime applies one zero point per direction, so
/// per-column zero points must agree.
LogicalResult readQuantizedWeights(NodeRewriter &rw, unsigned wIdx,
                                   unsigned scaleIdx, unsigned zpIdx,
                                   StringRef name, int64_t dirs, int64_t cols,
                                   SmallVector<QuantizedWeight> &out) {
  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  if (!rw.inputType(wIdx).getElementType().isInteger(8))
    return rw.fail(name + " must be int8 or uint8, not " +
                   typeName(rw.onnxElementType(wIdx)));
  std::string scaleName = (name + "_scale").str();
  if (failed(rw.requireInput(scaleIdx, scaleName)))
    return failure();
  RankedTensorType scaleType = rw.inputType(scaleIdx);
  bool perColumn = scaleType.getShape() == ArrayRef<int64_t>{dirs, cols};
  if (!scaleType.getElementType().isF32() ||
      (!perColumn && scaleType.getShape() != ArrayRef<int64_t>{dirs}))
    return rw.fail(scaleName + " must be f32 of shape [" + Twine(dirs) +
                   "] or [" + Twine(dirs) + ", " + Twine(cols) + "]; it is " +
                   str(scaleType.getShape()));
  SmallVector<int64_t> zeroPoints(dirs, 0);
  if (rw.hasInput(zpIdx)) {
    std::string zpName = (name + "_zero_point").str();
    DenseElementsAttr zp = getParameterConstant(rw.input(zpIdx));
    if (!zp)
      return rw.unsupported(zpName + " must be a compile-time constant");
    if (rw.onnxElementType(zpIdx) != rw.onnxElementType(wIdx) ||
        zp.getType().getShape() != scaleType.getShape())
      return rw.fail(zpName + " must have " + name + "'s type and " +
                     scaleName + "'s shape");
    if (!isa<IntegerType>(zp.getElementType()))
      return rw.fail(zpName + " must be an integer, not " +
                     llvm::formatv("{0}", zp.getElementType()).str());
    SmallVector<APInt> values(zp.getValues<APInt>());
    int64_t per = perColumn ? cols : 1;
    for (int64_t d = 0; d < dirs; ++d) {
      for (int64_t c = 0; c < per; ++c) {
        const APInt &v = values[d * per + c];
        int64_t z = rw.isUnsigned(wIdx) ? v.getZExtValue() : v.getSExtValue();
        if (c == 0)
          zeroPoints[d] = z;
        else if (z != zeroPoints[d])
          return rw.unsupported(zpName +
                                " differing between columns (ONNX Runtime "
                                "applies one zero point per direction)");
      }
    }
  }
  for (int64_t d = 0; d < dirs; ++d) {
    QuantizedWeight q;
    q.w = pick(b, loc, rw.input(wIdx), d);
    q.isUnsigned = rw.isUnsigned(wIdx);
    q.zeroPoint = static_cast<int32_t>(zeroPoints[d]);
    q.scale = pick(b, loc, rw.input(scaleIdx), d);
    if (!perColumn)
      q.scale = buildBroadcastGeneric(
          b, loc, ValueRange{q.scale}, {cols}, b.getF32Type(),
          [](OpBuilder &, Location, ValueRange a) -> Value { return a[0]; });
    out.push_back(q);
  }
  return success();
}

/// The recurrent layers; `quantized`: com.microsoft.DynamicQuantizeLSTM.
template <Cell cell, bool quantized = false>
LogicalResult convertRecurrent(NodeRewriter &rw) {
  for (auto [i, name] :
       llvm::enumerate(std::array<StringRef, 3>{"X", "W", "R"}))
    if (failed(rw.requireInput(i, name)))
      return failure();
  Type t = rw.inputType(0).getElementType();
  if (!isa<FloatType>(t))
    return rw.unsupported("X has element type " + typeName(t) +
                          "; recurrent layers are implemented for floats");
  if (quantized && !t.isF32())
    return rw.fail("X must be a float (f32) tensor, not " + typeName(t));
  OpBuilder &b = rw.b();
  Location loc = rw.loc();
  Type ct = t.isF64() ? t : b.getF32Type();
  Type onnxT = rw.onnxElementType(0);
  int64_t layout = rw.version() >= 14 ? rw.getInt("layout", 0) : 0;
  if (layout != 0 && layout != 1)
    return rw.fail("layout must be 0 or 1; it is " + Twine(layout));
  std::string direction = rw.getString("direction", "forward");
  if (direction != "forward" && direction != "reverse" &&
      direction != "bidirectional")
    return rw.fail("direction must be forward, reverse or bidirectional; it "
                   "is '" +
                   direction + "'");
  int64_t dirs = direction == "bidirectional" ? 2 : 1;
  int64_t g = gateCount(cell);

  ArrayRef<int64_t> xShape = rw.inputType(0).getShape();
  if (xShape.size() != 3)
    return rw.fail("X must have rank 3; it is " + str(xShape));
  int64_t steps = xShape[layout == 0 ? 0 : 1];
  int64_t batch = xShape[layout == 0 ? 1 : 0];
  int64_t input = xShape[2];
  // The sequence lengths become one i32 per batch entry.
  constexpr int64_t kMaxI32 = std::numeric_limits<int32_t>::max();
  if (batch < 1 || batch > kMaxI32 || steps < 0 || steps > kMaxI32)
    return rw.fail("X's batch and sequence dims must be in [1, 2^31) and "
                   "[0, 2^31); X is " +
                   str(xShape));
  ArrayRef<int64_t> rShape = rw.inputType(2).getShape();
  if (rShape.size() != 3)
    return rw.fail("R must have rank 3; it is " + str(rShape));
  // DynamicQuantizeLSTM stores W and R transposed: [D, I, G*H], [D, H, G*H].
  int64_t hidden = rShape[quantized ? 1 : 2];
  if (auto h = rw.getOptionalInt("hidden_size"); h && *h != hidden)
    return rw.fail("hidden_size is " + Twine(*h) + " but R is " + str(rShape));
  if (hidden <= 0)
    return rw.fail("the hidden size must be positive; R is " + str(rShape));
  auto expect = [&](unsigned i, StringRef name,
                    ArrayRef<int64_t> shape) -> LogicalResult {
    if (rw.inputType(i).getShape() == shape)
      return success();
    return rw.fail(name + " must have shape " + str(shape) + "; it is " +
                   str(rw.inputType(i).getShape()));
  };
  SmallVector<int64_t> wShape = {dirs, g * hidden, input};
  SmallVector<int64_t> rShapeWanted = {dirs, g * hidden, hidden};
  if (quantized) {
    wShape = {dirs, input, g * hidden};
    rShapeWanted = {dirs, hidden, g * hidden};
  }
  if (failed(expect(1, "W", wShape)) || failed(expect(2, "R", rShapeWanted)) ||
      (rw.hasInput(3) && failed(expect(3, "B", {dirs, 2 * g * hidden}))))
    return failure();
  SmallVector<int64_t> stateShape =
      layout == 0 ? SmallVector<int64_t>{dirs, batch, hidden}
                  : SmallVector<int64_t>{batch, dirs, hidden};
  if ((rw.hasInput(5) && failed(expect(5, "initial_h", stateShape))) ||
      (cell == Cell::LSTM && rw.hasInput(6) &&
       failed(expect(6, "initial_c", stateShape))) ||
      (cell == Cell::LSTM && rw.hasInput(7) &&
       failed(expect(7, "P", {dirs, 3 * hidden}))))
    return failure();

  Layer layer;
  layer.cell = cell;
  layer.steps = steps;
  layer.batch = batch;
  layer.input = input;
  layer.hidden = hidden;
  layer.ct = ct;
  if (rw.hasAttr("clip")) {
    float clip = rw.getFloat("clip", 0);
    if (!(clip > 0))
      return rw.fail("clip must be positive; it is " +
                     llvm::formatv("{0}", clip).str());
    layer.clip = clip;
  }
  layer.linearBeforeReset =
      cell == Cell::GRU && rw.getInt("linear_before_reset", 0) != 0;
  layer.inputForget = cell == Cell::LSTM && rw.getInt("input_forget", 0) != 0;

  // Sequence lengths: known at compile time, each in [0, steps].
  SmallVector<int64_t> lengths(batch, steps);
  if (rw.hasInput(4)) {
    FailureOr<SmallVector<int64_t>> l = rw.constantInts(4, "sequence_lens");
    if (failed(l))
      return failure();
    if (static_cast<int64_t>(l->size()) != batch)
      return rw.fail("sequence_lens has " + Twine(l->size()) +
                     " entries for a batch of " + Twine(batch));
    for (int64_t v : *l)
      if (v < 0 || v > steps)
        return rw.fail("sequence_lens entry " + Twine(v) + " is outside [0, " +
                       Twine(steps) + "]");
    lengths = *l;
  }
  SmallVector<int32_t> lengths32(lengths.begin(), lengths.end());
  layer.lengths = arith::ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(RankedTensorType::get({batch}, b.getI32Type()),
                             ArrayRef<int32_t>(lengths32)));

  FailureOr<SmallVector<Activation>> acts = readActivations(rw, cell, dirs);
  if (failed(acts))
    return failure();

  auto ctInput = [&](unsigned i) {
    return toComputeType(b, loc, rw.input(i), rw.onnxElementType(i), ct);
  };
  // X as [S * batch, I] in time-major order.
  Value x = ctInput(0);
  if (layout == 1)
    x = transposeTo(b, loc, x, {1, 0, 2});
  Value x2 = reshapeTo(b, loc, x, {steps * batch, input});
  Value w, r;
  SmallVector<QuantizedWeight> wq, rq;
  if (quantized) {
    if (failed(readQuantizedWeights(rw, 1, 8, 9, "W", dirs, g * hidden, wq)) ||
        failed(readQuantizedWeights(rw, 2, 10, 11, "R", dirs, g * hidden, rq)))
      return failure();
  } else {
    w = ctInput(1);
    r = ctInput(2);
  }
  Value bias = rw.hasInput(3) ? ctInput(3) : Value();
  auto state = [&](unsigned i) -> Value {
    // A splat constant, which kernels take in as a value (a fill would be
    // a kernel writing the buffer the loop then updates in place).
    if (!rw.hasInput(i))
      return createConstant(
          b, loc,
          SplatElementsAttr::get(
              RankedTensorType::get({dirs, batch, hidden}, ct),
              scalarAttr(ct, 0)));
    Value v = ctInput(i);
    return layout == 1 ? transposeTo(b, loc, v, {1, 0, 2}) : v;
  };
  Value h0 = state(5);
  Value c0 = cell == Cell::LSTM ? state(6) : Value();
  Value p = cell == Cell::LSTM && rw.hasInput(7) ? ctInput(7) : Value();

  SmallVector<Value> ys, hs, cs;
  for (int64_t d = 0; d < dirs; ++d) {
    Direction dir;
    dir.reverse = direction == "reverse" || d == 1;
    if (quantized) {
      dir.wq = wq[d];
      dir.rq = rq[d];
    } else {
      dir.w = pick(b, loc, w, d);
      dir.r = pick(b, loc, r, d);
    }
    dir.h0 = pick(b, loc, h0, d);
    if (c0)
      dir.c0 = pick(b, loc, c0, d);
    if (p)
      dir.peephole = pick(b, loc, p, d);
    dir.activations = ArrayRef<Activation>(*acts).slice(
        d * activationCount(cell), activationCount(cell));
    // Input-side bias: Wb + Rb, except a GRU's Rb of gate h with
    // linear_before_reset (it is multiplied by r).
    Value inputBias;
    if (bias) {
      Value bd = pick(b, loc, bias, d);
      Value wb = sliceDim0(b, loc, bd, 0, g * hidden);
      Value rb = sliceDim0(b, loc, bd, g * hidden, g * hidden);
      bool keepRh = layer.linearBeforeReset;
      inputBias = buildBroadcastGeneric(
          b, loc, ValueRange{wb, rb}, {g * hidden}, ct,
          [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
            if (!keepRh)
              return arith::AddFOp::create(nb, l, a[0], a[1]);
            Value j = linalg::IndexOp::create(nb, l, 0);
            Value inH = arith::CmpIOp::create(
                nb, l, arith::CmpIPredicate::sge, j,
                arith::ConstantIndexOp::create(nb, l, 2 * hidden));
            return arith::SelectOp::create(
                nb, l, inH, a[0], arith::AddFOp::create(nb, l, a[0], a[1]));
          });
      if (keepRh)
        dir.recurrentBias = sliceDim0(b, loc, rb, 2 * hidden, hidden);
    } else {
      inputBias = createFilled(b, loc, {g * hidden}, ct, scalarAttr(ct, 0));
      if (layer.linearBeforeReset)
        dir.recurrentBias =
            createFilled(b, loc, {hidden}, ct, scalarAttr(ct, 0));
    }
    // From zeros, then the bias as an epilogue (a contraction accumulating
    // into another kernel's result would update a kernel input in place).
    Value xp = dir.wq ? quantizedProduct(b, loc, x2, *dir.wq, false)
                      : contractTransposed(b, loc, x2, dir.w);
    xp = buildBroadcastGeneric(
        b, loc, ValueRange{xp, inputBias}, {steps * batch, g * hidden}, ct,
        [](OpBuilder &nb, Location l, ValueRange a) -> Value {
          return arith::AddFOp::create(nb, l, a[0], a[1]);
        });
    xp = reshapeTo(b, loc, xp, {steps, batch, g * hidden});
    SmallVector<Value> out = runDirection(b, loc, layer, dir, xp);
    ys.push_back(reshapeTo(b, loc, out[0], {steps, 1, batch, hidden}));
    hs.push_back(reshapeTo(b, loc, out[1], {1, batch, hidden}));
    if (cell == Cell::LSTM)
      cs.push_back(reshapeTo(b, loc, out[2], {1, batch, hidden}));
  }
  auto join = [&](ArrayRef<Value> parts, int64_t dim) -> Value {
    if (parts.size() == 1)
      return parts[0];
    return tensor::ConcatOp::create(b, loc, dim, parts);
  };
  Value y = join(ys, 1), yh = join(hs, 0);
  Value yc = cell == Cell::LSTM ? join(cs, 0) : Value();
  if (layout == 1) {
    y = transposeTo(b, loc, y, {2, 0, 1, 3});
    yh = transposeTo(b, loc, yh, {1, 0, 2});
    if (yc)
      yc = transposeTo(b, loc, yc, {1, 0, 2});
  }
  auto toT = [&](Value v) {
    auto type = cast<RankedTensorType>(v.getType());
    if (ct == t)
      return v;
    return buildBroadcastGeneric(b, loc, v, type.getShape(), t,
                                 [&](OpBuilder &nb, Location l, ValueRange a) {
                                   return castScalar(nb, l, a[0], ct, onnxT);
                                 });
  };
  SmallVector<Value> results = {toT(y), toT(yh)};
  if (yc)
    results.push_back(toT(yc));
  return rw.replace(results);
}

} // namespace

void dlc::populateRecurrentHandlers(HandlerRegistry &r) {
  r.add("RNN", {1, 7, 14, 22}, convertRecurrent<Cell::RNN>);
  r.add("GRU", {1, 3, 7, 14, 22}, convertRecurrent<Cell::GRU>);
  r.add("LSTM", {1, 7, 14, 22}, convertRecurrent<Cell::LSTM>);
  r.add("DynamicQuantizeLSTM", {1}, convertRecurrent<Cell::LSTM, true>,
        "com.microsoft");
}

//===- ConvChannelsLast.cpp - the dlc-conv-channels-last pass -------------===//
//
// CPU kernels vectorize a convolution along a row of output pixels (NCHW
// keeps them contiguous). From 14x14 down, a row is shorter than two
// vectors: 7 pixels leave 9 of 16 AVX-512 lanes idle. Output channels are
// plentiful there (256, 512), so such convolutions are turned around: the
// filter is transposed once, at compile time, so that output channels are
// its innermost dim, and the convolution writes channels-last, where
// output channels are contiguous too. The register tiler then keeps a
// block of pixels x channel vectors in registers, broadcasting input
// pixels and loading filter vectors. The transpose back to NCHW is an
// elementwise op that fusion folds into the epilogue's reads.
//
//===----------------------------------------------------------------------===//

#include "ConstantWeights.h"

#include "dlc/Dialect/DLC/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

namespace dlc {
#define GEN_PASS_DEF_CONVCHANNELSLAST
#include "dlc/Dialect/DLC/Transforms/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

/// The fraction of vector lanes `n` elements fill, in vectors of `lanes`.
double laneUse(int64_t n, int64_t lanes) {
  return static_cast<double>(n) /
         static_cast<double>((n + lanes - 1) / lanes * lanes);
}

struct ConvChannelsLastPass
    : public dlc::impl::ConvChannelsLastBase<ConvChannelsLastPass> {
  using Base::Base;

  /// Whether `op` vectorizes better along output channels than along
  /// pixels.
  bool profitable(linalg::Conv2DNchwFchwOp op) const {
    auto x = cast<RankedTensorType>(op.getInputs()[0].getType());
    auto w = cast<RankedTensorType>(op.getInputs()[1].getType());
    auto out = cast<RankedTensorType>(op.getOutputs()[0].getType());
    int64_t f = out.getDimSize(1), oh = out.getDimSize(2),
            ow = out.getDimSize(3);
    // A 1x1 convolution over its whole, unpadded input walks all pixels
    // as one row (dlc-cpu-loop-order merges them).
    bool flat = w.getDimSize(2) == 1 && w.getDimSize(3) == 1 &&
                x.getDimSize(2) == oh && x.getDimSize(3) == ow;
    int64_t pixels = flat ? oh * ow : ow;
    bool pixelsFit = pixels >= 2 * lanes && laneUse(pixels, lanes) >= 0.8;
    return !pixelsFit && f >= 2 * lanes &&
           laneUse(f, lanes) > laneUse(pixels, lanes);
  }

  LogicalResult rewrite(linalg::Conv2DNchwFchwOp op) {
    Value x = op.getInputs()[0], w = op.getInputs()[1];
    Value init = op.getOutputs()[0];
    auto xType = dyn_cast<RankedTensorType>(x.getType());
    auto wType = dyn_cast<RankedTensorType>(w.getType());
    auto outType = dyn_cast<RankedTensorType>(init.getType());
    if (!xType || !wType || !outType || !xType.hasStaticShape() ||
        !wType.hasStaticShape() || !outType.hasStaticShape() ||
        !xType.getElementType().isF32() || !outType.getElementType().isF32())
      return failure();
    auto fill = init.getDefiningOp<linalg::FillOp>();
    if (!fill || !profitable(op))
      return failure();
    std::string key;
    std::optional<std::vector<float>> filter = dlc::f32ConstantValues(w, &key);
    if (!filter)
      return failure();

    int64_t n = outType.getDimSize(0), f = outType.getDimSize(1),
            oh = outType.getDimSize(2), ow = outType.getDimSize(3);
    int64_t c = wType.getDimSize(1), kh = wType.getDimSize(2),
            kw = wType.getDimSize(3);
    // Output channels in blocks of two vectors (a register block's
    // width), each block's filter contiguous: (F, C, KH, KW) ->
    // (F / fb, C, KH, KW, fb). A block's filter is then one sequential
    // stream; with the channels innermost over all of F, successive taps
    // would sit F * 4 bytes apart, a power of two that maps a block's
    // whole filter onto a few cache sets.
    int64_t fb = f % (2 * lanes) == 0 ? 2 * lanes : lanes;
    if (f % fb != 0)
      return failure();
    int64_t taps = c * kh * kw;
    std::vector<float> packed(filter->size());
    for (int64_t o = 0; o < f; ++o)
      for (int64_t i = 0; i < taps; ++i)
        packed[((o / fb) * taps + i) * fb + o % fb] = (*filter)[o * taps + i];

    OpBuilder b(op);
    Location loc = op.getLoc();
    MLIRContext *ctx = b.getContext();
    auto packedType =
        RankedTensorType::get({f / fb, c, kh, kw, fb}, b.getF32Type());
    // Inline constants stay inline; the weights of real models are
    // resources, and the packed copy is one too.
    Value packedFilter = dlc::createF32Constant(b, loc, packedType, packed, key,
                                                ".channels_last");

    // The convolution into (N, OH, OW, F / fb, fb): channels-last in
    // memory. Loops (n, oh, ow, block, lane, c, kh, kw).
    auto blockedType =
        RankedTensorType::get({n, oh, ow, f / fb, fb}, b.getF32Type());
    Value empty =
        tensor::EmptyOp::create(b, loc, blockedType.getShape(), b.getF32Type());
    Value blockedInit =
        linalg::FillOp::create(b, loc, fill.getInputs()[0], empty).getResult(0);
    auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
    SmallVector<int64_t> strides(op.getStrides().getValues<int64_t>());
    SmallVector<int64_t> dilations(op.getDilations().getValues<int64_t>());
    AffineMap xMap =
        AffineMap::get(8, 0,
                       {d(0), d(5), d(1) * strides[0] + d(6) * dilations[0],
                        d(2) * strides[1] + d(7) * dilations[1]},
                       ctx);
    AffineMap wMap = AffineMap::get(8, 0, {d(3), d(5), d(6), d(7), d(4)}, ctx);
    AffineMap outMap =
        AffineMap::get(8, 0, {d(0), d(1), d(2), d(3), d(4)}, ctx);
    SmallVector<utils::IteratorType> iterators(5,
                                               utils::IteratorType::parallel);
    iterators.append(3, utils::IteratorType::reduction);
    Value blocked =
        linalg::GenericOp::create(
            b, loc, blockedType, ValueRange{x, packedFilter}, blockedInit,
            ArrayRef<AffineMap>{xMap, wMap, outMap}, iterators,
            [](OpBuilder &nb, Location nloc, ValueRange a) {
              Value p = arith::MulFOp::create(nb, nloc, a[0], a[1]);
              Value sum = arith::AddFOp::create(nb, nloc, a[2], p);
              linalg::YieldOp::create(nb, nloc, sum);
            })
            .getResult(0);

    // Back to (n, f, oh, ow), as a generic so that fusion can fold it.
    Value nchwEmpty =
        tensor::EmptyOp::create(b, loc, outType.getShape(), b.getF32Type());
    AffineMap readMap = AffineMap::get(
        4, 0, {d(0), d(2), d(3), d(1).floorDiv(fb), d(1) % fb}, ctx);
    Value nchw =
        linalg::GenericOp::create(
            b, loc, outType, blocked, nchwEmpty,
            ArrayRef<AffineMap>{readMap, b.getMultiDimIdentityMap(4)},
            SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
            [](OpBuilder &nb, Location nloc, ValueRange a) {
              linalg::YieldOp::create(nb, nloc, a[0]);
            })
            .getResult(0);
    op.getResult(0).replaceAllUsesWith(nchw);
    op.erase();
    ++numRewritten;
    return success();
  }

  void runOnOperation() override {
    SmallVector<linalg::Conv2DNchwFchwOp> convs;
    getOperation().walk(
        [&](linalg::Conv2DNchwFchwOp op) { convs.push_back(op); });
    for (linalg::Conv2DNchwFchwOp op : convs)
      (void)rewrite(op);
  }
};

} // namespace

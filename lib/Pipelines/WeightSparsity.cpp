//===- WeightSparsity.cpp - zeros in the weights of a model ---------------===//

#include "dlc/Pipelines/WeightSparsity.h"

#include "dlc/Dialect/DLC/IR/DLC.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/Format.h"

using namespace mlir;

namespace {

/// Weights above this many elements are not analyzed (the zero map of one
/// takes a byte per element).
constexpr int64_t kMaxAnalyzedElements = int64_t(1) << 28;

/// Whether each element of a constant is zero (+0 or -0 for floats), in
/// row-major order; empty when the storage is not one this reads.
std::vector<uint8_t> zeroMap(Attribute value, RankedTensorType type) {
  Type elem = type.getElementType();
  if (!elem.isIntOrFloat() || elem.isInteger(1) ||
      elem.getIntOrFloatBitWidth() % 8 != 0)
    return {};
  unsigned bytes = elem.getIntOrFloatBitWidth() / 8;
  int64_t count = type.getNumElements();
  ArrayRef<char> data;
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value))
    data = resource.getData();
  else if (auto dense = dyn_cast<DenseElementsAttr>(value))
    data = dense.getRawData();
  else
    return {};
  bool splat = static_cast<int64_t>(data.size()) == bytes && count != 1;
  if (!splat && static_cast<int64_t>(data.size()) != count * bytes)
    return {};
  auto isZero = [&](const char *p) {
    for (unsigned b = 0; b < bytes; ++b) {
      uint8_t v = static_cast<uint8_t>(p[b]);
      // Little-endian: the sign bit of a float is the top bit of its last
      // byte.
      if (isa<FloatType>(elem) && b + 1 == bytes)
        v &= 0x7f;
      if (v)
        return false;
    }
    return true;
  };
  if (splat)
    return std::vector<uint8_t>(count, isZero(data.data()));
  std::vector<uint8_t> zero(count);
  for (int64_t i = 0; i < count; ++i)
    zero[i] = isZero(data.data() + i * bytes);
  return zero;
}

/// The constant behind `v`, if any, also through reshapes (which keep the
/// element order: `v`'s shape then indexes the constant's data).
arith::ConstantOp constantOf(Value v) {
  while (Operation *op = v.getDefiningOp()) {
    if (auto c = dyn_cast<arith::ConstantOp>(op))
      return c;
    if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::CastOp>(
            op))
      return {};
    v = op->getOperand(0);
  }
  return {};
}

std::string layerName(Operation *op) {
  std::string name;
  op->getLoc()->walk([&](Location l) {
    if (auto n = dyn_cast<NameLoc>(l)) {
      name = n.getName().str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return name;
}

/// Fills `out` for `weight`, operand of `op`, when its indexing map is a
/// projection onto output (parallel) and reduction dims.
bool analyze(linalg::LinalgOp op, OpOperand &weight, dlc::WeightSparsity &out) {
  auto type = dyn_cast<RankedTensorType>(weight.get().getType());
  arith::ConstantOp constant = constantOf(weight.get());
  if (!type || !constant || type.getRank() < 1 || !type.hasStaticShape() ||
      type.getNumElements() == 0 ||
      type.getNumElements() > kMaxAnalyzedElements || op.getNumDpsInits() != 1)
    return false;
  AffineMap map = op.getMatchingIndexingMap(&weight);
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  // Per weight dim: an output dim (a loop the result is indexed by) or a
  // reduced one.
  SmallVector<bool> isOutput;
  for (AffineExpr e : map.getResults()) {
    auto d = dyn_cast<AffineDimExpr>(e);
    if (!d)
      return false;
    bool reduced = iterators[d.getPosition()] == utils::IteratorType::reduction;
    if (!reduced && !outMap.isFunctionOfDim(d.getPosition()))
      return false;
    isOutput.push_back(!reduced);
  }
  if (llvm::all_of(isOutput, [](bool o) { return o; }))
    return false; // not reduced over: not a weight
  std::vector<uint8_t> zero = zeroMap(constant.getValue(), type);
  if (zero.empty())
    return false;
  ArrayRef<int64_t> shape = type.getShape();
  int64_t rank = type.getRank();
  out.outputs = out.reduction = 1;
  for (int64_t d = 0; d < rank; ++d)
    (isOutput[d] ? out.outputs : out.reduction) *= shape[d];
  // The zero map as [outputs, reduction], each in the weight's dim order.
  int64_t m = out.outputs, k = out.reduction;
  std::vector<uint8_t> mk(m * k);
  SmallVector<int64_t> index(rank, 0);
  for (int64_t linear = 0; linear < static_cast<int64_t>(zero.size());
       ++linear) {
    int64_t row = 0, col = 0;
    for (int64_t d = 0; d < rank; ++d) {
      if (isOutput[d])
        row = row * shape[d] + index[d];
      else
        col = col * shape[d] + index[d];
    }
    mk[row * k + col] = zero[linear];
    for (int64_t d = rank - 1; d >= 0 && ++index[d] == shape[d]; --d)
      index[d] = 0;
  }
  out.elements = m * k;
  out.zeros = llvm::count(mk, 1);
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c + 4 <= k; c += 4) {
      int64_t nonzero = 0;
      for (int64_t j = 0; j < 4; ++j)
        nonzero += !mk[r * k + c + j];
      ++out.groups24;
      out.sparse24 += nonzero <= 2;
    }
  for (auto [b, block] : llvm::enumerate(dlc::kSparsityBlocks)) {
    auto [bm, bk] = block;
    for (int64_t r = 0; r + bm <= m; r += bm)
      for (int64_t c = 0; c + bk <= k; c += bk) {
        bool allZero = true;
        for (int64_t i = 0; i < bm && allZero; ++i)
          for (int64_t j = 0; j < bk && allZero; ++j)
            allZero = mk[(r + i) * k + c + j];
        ++out.blocks[b];
        out.zeroBlocks[b] += allZero;
      }
  }
  out.layer = layerName(op);
  out.op = op->getName().stripDialect().str();
  return true;
}

double percent(int64_t part, int64_t whole) {
  return whole ? 100.0 * static_cast<double>(part) / whole : 0.0;
}

} // namespace

std::vector<dlc::WeightSparsity> dlc::analyzeWeightSparsity(ModuleOp module) {
  std::vector<WeightSparsity> out;
  module.walk([&](linalg::LinalgOp op) {
    if (op.getNumReductionLoops() == 0)
      return;
    // Integer weights dequantized in a float product's body with scales
    // per block of the reduction (MatMulNBits: 4-bit fields packed into
    // bytes, or bytes): a byte may be two weights, a stored zero is not a
    // zero weight, and the scales are reduced over too (not analyzed yet).
    auto feeds = [&](function_ref<bool(Operation *)> kind) {
      return llvm::any_of(op.getBlock()->getArguments(), [&](BlockArgument a) {
        return llvm::any_of(a.getUsers(), kind);
      });
    };
    SmallVector<unsigned> reductions;
    op.getReductionDims(reductions);
    int64_t reducedInputs =
        llvm::count_if(op.getDpsInputOperands(), [&](OpOperand *in) {
          AffineMap map = op.getMatchingIndexingMap(in);
          return llvm::any_of(
              reductions, [&](unsigned d) { return map.isFunctionOfDim(d); });
        });
    if (feeds([](Operation *u) {
          return isa<arith::ShRUIOp, arith::ShRSIOp>(u);
        }) ||
        (reducedInputs > 2 && feeds([](Operation *u) {
           return isa<arith::UIToFPOp, arith::SIToFPOp>(u);
         })))
      return;
    for (OpOperand *input : op.getDpsInputOperands()) {
      WeightSparsity s;
      if (analyze(op, *input, s)) {
        out.push_back(std::move(s));
        return;
      }
    }
  });
  return out;
}

void dlc::printWeightSparsity(const std::vector<WeightSparsity> &layers,
                              llvm::raw_ostream &os) {
  int64_t elements = 0, zeros = 0, layers24 = 0;
  for (const WeightSparsity &s : layers) {
    elements += s.elements;
    zeros += s.zeros;
    layers24 += s.groups24 && s.sparse24 == s.groups24;
  }
  os << "weights:         " << layers.size() << " layers, " << elements
     << " elements, " << llvm::format("%.1f", percent(zeros, elements))
     << "% zero, " << layers24 << " layers 2:4 sparse\n";
  for (const WeightSparsity &s : layers) {
    os << "weight " << (s.layer.empty() ? s.op : s.layer) << " (" << s.op
       << ", " << s.outputs << " x " << s.reduction
       << "): " << llvm::format("%.1f", percent(s.zeros, s.elements))
       << "% zero, 2:4 "
       << llvm::format("%.1f", percent(s.sparse24, s.groups24))
       << "%, zero blocks";
    for (auto [b, block] : llvm::enumerate(kSparsityBlocks))
      os << " " << block[0] << "x" << block[1] << " "
         << llvm::format("%.1f", percent(s.zeroBlocks[b], s.blocks[b])) << "%";
    os << "\n";
  }
}

std::vector<dlc::SparseKernel> dlc::findSparseKernels(ModuleOp module) {
  std::vector<SparseKernel> out;
  module.walk([&](linalg::GenericOp op) {
    auto rows = op->getAttrOfType<IntegerAttr>(kSparseRowsAttr);
    if (!rows || op.getNumDpsInputs() != 2)
      return;
    SparseKernel k;
    k.layer = layerName(op);
    k.rows = rows.getInt();
    if (auto pairs = op->getAttrOfType<DenseI64ArrayAttr>(kSparsePairsAttr);
        pairs && pairs.size() == 2) {
      k.kept = pairs[0];
      k.pairs = pairs[1];
    }
    out.push_back(std::move(k));
  });
  return out;
}

void dlc::printSparseKernels(const std::vector<SparseKernel> &kernels,
                             StringRef mode, llvm::raw_ostream &os) {
  os << "sparse kernels:  " << kernels.size()
     << " layers read only their kept inputs (--sparsity=" << mode << ")\n";
  for (const SparseKernel &k : kernels)
    os << "sparse " << (k.layer.empty() ? "(unnamed)" : k.layer)
       << ": groups of " << k.rows << " outputs keep "
       << llvm::format("%.1f", percent(k.kept, k.pairs))
       << "% of (group, input) pairs\n";
}

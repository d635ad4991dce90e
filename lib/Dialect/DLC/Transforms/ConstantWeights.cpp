//===- ConstantWeights.cpp - reading and re-laying constant weights -------===//

#include "ConstantWeights.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>

using namespace mlir;

namespace {

/// Constants larger than this stay as they are (a copy of each is made).
constexpr int64_t kMaxElements = int64_t(1) << 26;

std::optional<std::vector<float>> readValues(Value v, std::string &key) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.hasStaticShape() || !type.getElementType().isF32() ||
      type.getNumElements() > kMaxElements)
    return std::nullopt;
  if (auto cst = v.getDefiningOp<arith::ConstantOp>()) {
    std::vector<float> values(type.getNumElements());
    if (auto res = dyn_cast<DenseResourceElementsAttr>(cst.getValue())) {
      ArrayRef<char> data = res.getData();
      if (data.size() != values.size() * sizeof(float))
        return std::nullopt; // released or malformed: leave it alone
      std::memcpy(values.data(), data.data(), data.size());
      key = res.getRawHandle().getKey().str();
      return values;
    }
    if (auto dense = dyn_cast<DenseElementsAttr>(cst.getValue())) {
      llvm::copy(dense.getValues<float>(), values.begin());
      return values;
    }
    return std::nullopt;
  }
  if (auto reshape = v.getDefiningOp<tensor::CollapseShapeOp>())
    return readValues(reshape.getSrc(), key);
  if (auto reshape = v.getDefiningOp<tensor::ExpandShapeOp>())
    return readValues(reshape.getSrc(), key);
  auto slice = v.getDefiningOp<tensor::ExtractSliceOp>();
  if (!slice || !slice.hasUnitStride() ||
      ShapedType::isDynamicShape(slice.getStaticOffsets()) ||
      ShapedType::isDynamicShape(slice.getStaticSizes()))
    return std::nullopt;
  std::optional<std::vector<float>> source = readValues(slice.getSource(), key);
  if (!source)
    return std::nullopt;
  ArrayRef<int64_t> srcShape = slice.getSourceType().getShape();
  ArrayRef<int64_t> offsets = slice.getStaticOffsets();
  ArrayRef<int64_t> sizes = slice.getStaticSizes();
  int64_t rank = srcShape.size();
  SmallVector<int64_t> srcStrides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    srcStrides[d] = srcStrides[d + 1] * srcShape[d + 1];
  // Elements of the slice in row-major order (dropped unit dims change
  // nothing in that order).
  std::vector<float> values;
  values.reserve(type.getNumElements());
  SmallVector<int64_t> at(rank, 0);
  for (int64_t i = 0, n = type.getNumElements(); i < n; ++i) {
    int64_t linear = 0;
    for (int64_t d = 0; d < rank; ++d)
      linear += (offsets[d] + at[d]) * srcStrides[d];
    values.push_back((*source)[linear]);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++at[d] < sizes[d])
        break;
      at[d] = 0;
    }
  }
  return values;
}

} // namespace

std::optional<std::vector<float>>
dlc::f32ConstantValues(Value v, std::string *resourceKey) {
  std::string key;
  std::optional<std::vector<float>> result = readValues(v, key);
  if (result && resourceKey)
    *resourceKey = key;
  return result;
}

Value dlc::createF32Constant(OpBuilder &b, Location loc, RankedTensorType type,
                             const std::vector<float> &values,
                             StringRef resourceKey, StringRef suffix) {
  ElementsAttr attr;
  if (!resourceKey.empty()) {
    ArrayRef<char> bytes(reinterpret_cast<const char *>(values.data()),
                         values.size() * sizeof(float));
    attr = DenseResourceElementsAttr::get(
        type, (resourceKey + suffix).str(),
        HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, alignof(float)));
  } else {
    attr = DenseElementsAttr::get(type, ArrayRef<float>(values));
  }
  return arith::ConstantOp::create(b, loc, attr);
}

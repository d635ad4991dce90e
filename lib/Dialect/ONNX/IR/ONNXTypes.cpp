//===- ONNXTypes.cpp - ONNX data types as MLIR types ----------------------===//

#include "dlc/Dialect/ONNX/IR/ONNXTypes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace {
/// ONNX TensorProto.DataType numbers.
enum DataType : int64_t {
  FLOAT = 1,
  UINT8 = 2,
  INT8 = 3,
  UINT16 = 4,
  INT16 = 5,
  INT32 = 6,
  INT64 = 7,
  STRING = 8,
  BOOL = 9,
  FLOAT16 = 10,
  DOUBLE = 11,
  UINT32 = 12,
  UINT64 = 13,
  COMPLEX64 = 14,
  COMPLEX128 = 15,
  BFLOAT16 = 16,
  FLOAT8E4M3FN = 17,
  FLOAT8E4M3FNUZ = 18,
  FLOAT8E5M2 = 19,
  FLOAT8E5M2FNUZ = 20,
  UINT4 = 21,
  INT4 = 22,
  FLOAT4E2M1 = 23,
  FLOAT8E8M0 = 24,
};
} // namespace

Type dlc::onnx::getElementType(MLIRContext *ctx, int64_t dataType) {
  Builder b(ctx);
  switch (dataType) {
  case FLOAT:
    return b.getF32Type();
  case DOUBLE:
    return b.getF64Type();
  case FLOAT16:
    return b.getF16Type();
  case BFLOAT16:
    return b.getBF16Type();
  case BOOL:
    return b.getI1Type();
  case INT4:
    return b.getIntegerType(4);
  case INT8:
    return b.getIntegerType(8);
  case INT16:
    return b.getIntegerType(16);
  case INT32:
    return b.getIntegerType(32);
  case INT64:
    return b.getIntegerType(64);
  case UINT4:
    return b.getIntegerType(4, /*isSigned=*/false);
  case UINT8:
    return b.getIntegerType(8, /*isSigned=*/false);
  case UINT16:
    return b.getIntegerType(16, /*isSigned=*/false);
  case UINT32:
    return b.getIntegerType(32, /*isSigned=*/false);
  case UINT64:
    return b.getIntegerType(64, /*isSigned=*/false);
  case FLOAT8E4M3FN:
    return Float8E4M3FNType::get(ctx);
  case FLOAT8E4M3FNUZ:
    return Float8E4M3FNUZType::get(ctx);
  case FLOAT8E5M2:
    return Float8E5M2Type::get(ctx);
  case FLOAT8E5M2FNUZ:
    return Float8E5M2FNUZType::get(ctx);
  case FLOAT4E2M1:
    return Float4E2M1FNType::get(ctx);
  case FLOAT8E8M0:
    return Float8E8M0FNUType::get(ctx);
  default:
    return {};
  }
}

int64_t dlc::onnx::getDataType(Type t) {
  if (t.isF32())
    return FLOAT;
  if (t.isF64())
    return DOUBLE;
  if (t.isF16())
    return FLOAT16;
  if (t.isBF16())
    return BFLOAT16;
  if (isa<Float8E4M3FNType>(t))
    return FLOAT8E4M3FN;
  if (isa<Float8E4M3FNUZType>(t))
    return FLOAT8E4M3FNUZ;
  if (isa<Float8E5M2Type>(t))
    return FLOAT8E5M2;
  if (isa<Float8E5M2FNUZType>(t))
    return FLOAT8E5M2FNUZ;
  if (isa<Float4E2M1FNType>(t))
    return FLOAT4E2M1;
  if (isa<Float8E8M0FNUType>(t))
    return FLOAT8E8M0;
  if (auto i = dyn_cast<IntegerType>(t)) {
    bool u = i.isUnsigned();
    switch (i.getWidth()) {
    case 1:
      return BOOL;
    case 4:
      return u ? UINT4 : INT4;
    case 8:
      return u ? UINT8 : INT8;
    case 16:
      return u ? UINT16 : INT16;
    case 32:
      return u ? UINT32 : INT32;
    case 64:
      return u ? UINT64 : INT64;
    default:
      return 0;
    }
  }
  return 0;
}

std::string dlc::onnx::getDataTypeName(int64_t dataType) {
  static const char *const names[] = {
      "UNDEFINED",      "FLOAT",        "UINT8",          "INT8",
      "UINT16",         "INT16",        "INT32",          "INT64",
      "STRING",         "BOOL",         "FLOAT16",        "DOUBLE",
      "UINT32",         "UINT64",       "COMPLEX64",      "COMPLEX128",
      "BFLOAT16",       "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
      "FLOAT8E5M2FNUZ", "UINT4",        "INT4",           "FLOAT4E2M1",
      "FLOAT8E8M0"};
  if (dataType >= 0 &&
      dataType < static_cast<int64_t>(sizeof(names) / sizeof(names[0])))
    return names[dataType];
  return "data type " + std::to_string(dataType);
}

int64_t dlc::onnx::boundedElementCount(llvm::ArrayRef<int64_t> shape) {
  // Zero dims do not excuse the others: code multiplies partial products.
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d <= 0)
      continue;
    if (n > kMaxTensorElements / d)
      return -1;
    n *= d;
  }
  return llvm::is_contained(shape, 0) ? 0 : n;
}

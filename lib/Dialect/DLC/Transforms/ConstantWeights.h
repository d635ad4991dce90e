//===- ConstantWeights.h - reading and re-laying constant weights ---------===//
//
// Passes that lay out a constant weight anew at compile time
// (dlc-conv-channels-last, dlc-constant-columns-last) read its f32 values
// and write the new layout as a constant of the same kind. Internal to the
// DLC transforms.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_LIB_DIALECT_DLC_TRANSFORMS_CONSTANTWEIGHTS_H
#define DLC_LIB_DIALECT_DLC_TRANSFORMS_CONSTANTWEIGHTS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"

#include <optional>
#include <string>
#include <vector>

namespace dlc {

/// The f32 values of `v` in row-major order when it is a constant, or a
/// static unit-stride slice or a reshape of one; `resourceKey` (when given)
/// is set to the name of the resource blob it comes from, or left empty for
/// an inline constant. Nothing for other values, and for constants of more
/// than 2^26 elements (each rewrite makes a copy).
std::optional<std::vector<float>> f32ConstantValues(mlir::Value v,
                                                    std::string *resourceKey);

/// A constant of `type` holding `values`: a resource blob named after
/// `resourceKey` plus `suffix` when the weight it re-lays was one (the
/// weights of real models are), else inline like the original.
mlir::Value createF32Constant(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::RankedTensorType type,
                              const std::vector<float> &values,
                              llvm::StringRef resourceKey,
                              llvm::StringRef suffix);

} // namespace dlc

#endif // DLC_LIB_DIALECT_DLC_TRANSFORMS_CONSTANTWEIGHTS_H

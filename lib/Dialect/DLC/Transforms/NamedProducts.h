//===- NamedProducts.h - generic and named products alike ------*- C++ -*-===//
//
// The CPU layout passes rewrite a product's indexing maps, which only a
// linalg.generic has; ONNX's MatMul and Gemm arrive as named ops
// (linalg.matmul with an (n, k) map for a transposed B, batch_matmul).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DIALECT_DLC_TRANSFORMS_NAMEDPRODUCTS_H
#define DLC_DIALECT_DLC_TRANSFORMS_NAMEDPRODUCTS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace dlc {

/// Whether `op` is a linalg.generic or one of the named products the
/// layout passes take.
inline bool isGenericOrNamedProduct(mlir::linalg::LinalgOp op) {
  return mlir::isa<mlir::linalg::GenericOp, mlir::linalg::MatmulOp,
                   mlir::linalg::BatchMatmulOp>(op.getOperation());
}

/// `op` as a linalg.generic: itself, or a named product generalized in
/// its place.
inline mlir::FailureOr<mlir::linalg::GenericOp>
asGeneric(mlir::RewriterBase &rewriter, mlir::linalg::LinalgOp op) {
  if (auto generic = mlir::dyn_cast<mlir::linalg::GenericOp>(op.getOperation()))
    return generic;
  rewriter.setInsertionPoint(op);
  return mlir::linalg::generalizeNamedOp(rewriter, op);
}

} // namespace dlc

#endif // DLC_DIALECT_DLC_TRANSFORMS_NAMEDPRODUCTS_H

//===- NarrowIndexDivision.cpp - the dlc-narrow-index-division pass -------===//
//
// On targets with 32-bit pointers, index divisions and remainders in i32
// (see the pass description in Passes.td): LLVM expands a 32-bit division
// by a constant into a multiply and shifts, and a 64-bit one into a call
// that a kernel's shared object cannot resolve.
//
//===----------------------------------------------------------------------===//

#include "dlc/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/TypeSwitch.h"

namespace dlc {
#define GEN_PASS_DEF_NARROWINDEXDIVISION
#include "dlc/Codegen/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

/// Replaces index op `op` (two operands, one result) with `Op` on i32
/// values cast from and back to index, zero- or sign-extending.
template <typename Op> void narrow(Operation *op, bool isUnsigned) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  Type i32 = b.getI32Type();
  auto toI32 = [&](Value v) -> Value {
    if (isUnsigned)
      return arith::IndexCastUIOp::create(b, loc, i32, v);
    return arith::IndexCastOp::create(b, loc, i32, v);
  };
  Value r =
      Op::create(b, loc, toI32(op->getOperand(0)), toI32(op->getOperand(1)));
  Type index = b.getIndexType();
  Value back = isUnsigned
                   ? Value(arith::IndexCastUIOp::create(b, loc, index, r))
                   : Value(arith::IndexCastOp::create(b, loc, index, r));
  op->getResult(0).replaceAllUsesWith(back);
  op->erase();
}

struct NarrowIndexDivision
    : public dlc::impl::NarrowIndexDivisionBase<NarrowIndexDivision> {
  void runOnOperation() override {
    SmallVector<Operation *> work;
    getOperation()->walk([&](Operation *op) {
      if (op->getNumResults() == 1 && op->getResult(0).getType().isIndex())
        work.push_back(op);
    });
    for (Operation *op : work)
      llvm::TypeSwitch<Operation *>(op)
          .Case<arith::DivUIOp, arith::RemUIOp, arith::CeilDivUIOp>(
              [](auto o) { narrow<decltype(o)>(o, /*isUnsigned=*/true); })
          .Case<arith::DivSIOp, arith::RemSIOp, arith::FloorDivSIOp,
                arith::CeilDivSIOp>(
              [](auto o) { narrow<decltype(o)>(o, /*isUnsigned=*/false); });
  }
};

} // namespace

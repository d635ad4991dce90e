//===- GPUBF16Storage.cpp - the dlc-gpu-bf16-storage pass
//------------------===//
//
// SPIR-V for Vulkan has no bf16 type. Kernels that only move bf16 values
// and convert them (dlc-legalize-math's expand-bf16-conversions has made
// every conversion integer operations on the bits, and bf16 arithmetic
// has been emulated in f32) hold them as 16-bit integers: every memref of
// bf16 becomes one of i16 (the same bytes), loads and stores move i16,
// and the bitcasts between bf16 and i16 around them fold away. A bf16
// value the kernel still computes with stays, and the target's type check
// names it.
//
//===----------------------------------------------------------------------===//

#include "dlc/Codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace dlc {
#define GEN_PASS_DEF_GPUBF16STORAGE
#include "dlc/Codegen/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

/// `t` with i16 elements where it is a memref of bf16, else null.
MemRefType asWords(Type t) {
  auto m = dyn_cast<MemRefType>(t);
  if (!m || !m.getElementType().isBF16())
    return {};
  return cast<MemRefType>(m.clone(IntegerType::get(t.getContext(), 16)));
}

/// Replaces the bf16 value `v` by i16 value `bits` (its bits): bitcasts to
/// i16 read `bits` directly; other users get a bitcast back to bf16.
void replaceWithBits(OpBuilder &b, Value v, Value bits) {
  Value asBF16;
  for (OpOperand &use : llvm::make_early_inc_range(v.getUses())) {
    auto cast = dyn_cast<arith::BitcastOp>(use.getOwner());
    if (cast && cast.getType() == bits.getType()) {
      cast.getResult().replaceAllUsesWith(bits);
      continue;
    }
    if (!asBF16) {
      b.setInsertionPointAfterValue(bits);
      asBF16 = arith::BitcastOp::create(b, v.getLoc(), v.getType(), bits);
    }
    use.set(asBF16);
  }
}

struct GPUBF16Storage : public dlc::impl::GPUBF16StorageBase<GPUBF16Storage> {
  void runOnOperation() override {
    getOperation().walk([](gpu::GPUFuncOp func) {
      OpBuilder b(func.getContext());
      // Arguments and every value of memref type.
      bool changed = false;
      for (BlockArgument arg : func.getArguments())
        if (MemRefType words = asWords(arg.getType())) {
          arg.setType(words);
          changed = true;
        }
      if (changed) {
        SmallVector<Type> inputs(func.getBody().getArgumentTypes());
        func.setFunctionTypeAttr(TypeAttr::get(FunctionType::get(
            func.getContext(), inputs, func.getFunctionType().getResults())));
      }
      func.walk([&](Operation *op) {
        for (Region &r : op->getRegions())
          for (Block &block : r)
            for (BlockArgument arg : block.getArguments())
              if (MemRefType words = asWords(arg.getType()))
                arg.setType(words);
        if (auto load = dyn_cast<memref::LoadOp>(op)) {
          if (!load.getType().isBF16())
            return;
          b.setInsertionPoint(load);
          auto bits = memref::LoadOp::create(b, load.getLoc(), load.getMemRef(),
                                             load.getIndices());
          replaceWithBits(b, load.getResult(), bits);
          return;
        }
        if (auto store = dyn_cast<memref::StoreOp>(op)) {
          Value v = store.getValueToStore();
          if (!v.getType().isBF16())
            return;
          b.setInsertionPoint(store);
          Value bits;
          if (auto cast = v.getDefiningOp<arith::BitcastOp>();
              cast && cast.getIn().getType().isInteger(16))
            bits = cast.getIn();
          else
            bits = arith::BitcastOp::create(b, store.getLoc(),
                                            b.getIntegerType(16), v);
          store->setOperand(0, bits);
          return;
        }
        for (Value result : op->getResults())
          if (MemRefType words = asWords(result.getType()))
            result.setType(words);
      });
      // Loads of bf16 were replaced; the old ones and the casts that read
      // them go (the casts first).
      SmallVector<Operation *> dead;
      func.walk([&](Operation *op) {
        if (isa<memref::LoadOp, arith::BitcastOp>(op) && op->use_empty())
          dead.push_back(op);
      });
      while (!dead.empty()) {
        Operation *op = dead.pop_back_val();
        SmallVector<Operation *> producers;
        for (Value v : op->getOperands())
          if (Operation *def = v.getDefiningOp();
              def && isa<memref::LoadOp, arith::BitcastOp>(def))
            producers.push_back(def);
        op->erase();
        for (Operation *def : producers)
          if (def->use_empty() && !llvm::is_contained(dead, def))
            dead.push_back(def);
      }
    });
  }
};

} // namespace

//===- CPUBF16Memory.cpp - the dlc-cpu-bf16-memory pass -------------------===//

#include "dlc/Codegen/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace dlc {
#define GEN_PASS_DEF_CPUBF16MEMORY
#include "dlc/Codegen/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

/// `t` with i16 elements when it is a vector of bf16, else null.
VectorType asWords(Type t) {
  auto v = dyn_cast<VectorType>(t);
  if (!v || !v.getElementType().isBF16())
    return {};
  return v.clone(IntegerType::get(t.getContext(), 16));
}

struct CPUBF16Memory : public dlc::impl::CPUBF16MemoryBase<CPUBF16Memory> {
  void runOnOperation() override {
    getOperation().walk([](Operation *op) {
      OpBuilder b(op);
      Location loc = op->getLoc();
      if (auto store = dyn_cast<LLVM::MaskedStoreOp>(op)) {
        if (VectorType words = asWords(store.getValue().getType()))
          store.getValueMutable().assign(
              LLVM::BitcastOp::create(b, loc, words, store.getValue()));
        return;
      }
      auto load = dyn_cast<LLVM::MaskedLoadOp>(op);
      if (!load)
        return;
      Type type = load.getType();
      VectorType words = asWords(type);
      if (!words)
        return;
      for (OpOperand &passThru : load.getPassThruMutable())
        passThru.assign(LLVM::BitcastOp::create(b, loc, words, passThru.get()));
      load.getResult().setType(words);
      b.setInsertionPointAfter(load);
      auto back = LLVM::BitcastOp::create(b, loc, type, load.getResult());
      load.getResult().replaceAllUsesExcept(back, back);
    });
  }
};

} // namespace

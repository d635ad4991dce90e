//===- CPUKernelEntry.cpp - the dlc-cpu-kernel-entry pass -----------------===//

#include "dlc/Codegen/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace dlc {
#define GEN_PASS_DEF_CPUKERNELENTRY
#include "dlc/Codegen/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

LogicalResult addEntry(LLVM::LLVMFuncOp impl) {
  MLIRContext *ctx = impl.getContext();
  LLVM::LLVMFunctionType implType = impl.getFunctionType();
  unsigned numParams = implType.getNumParams();
  // Parameters: one pointer per buffer, begin and end, then the scratch
  // pointer when dlc-cpu-scratch gave the kernel one.
  bool scratch = impl->hasAttr(dlc::kScratchSizeAttr);
  unsigned trailing = scratch ? 3 : 2;
  if (numParams < trailing)
    return impl.emitError("kernel has no workgroup range parameters");
  unsigned numBuffers = numParams - trailing;
  for (unsigned i = 0; i < numParams; ++i) {
    bool range = i == numBuffers || i == numBuffers + 1;
    if (!range && !isa<LLVM::LLVMPointerType>(implType.getParamType(i)))
      return impl.emitError("kernel parameter ")
             << i
             << " is not a pointer; kernels must be lowered with the "
                "bare-pointer calling convention";
  }

  std::string name = impl.getName().str();
  impl.setName(name + ".impl");
  impl.setLinkage(LLVM::Linkage::Internal);
  impl->removeAttr(dlc::kKernelAttr);

  OpBuilder b(impl);
  Location loc = impl.getLoc();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto i32 = IntegerType::get(ctx, 32);
  auto entryType = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                               {ptr, i32, i32, ptr});
  auto entry = LLVM::LLVMFuncOp::create(b, loc, name, entryType);
  Block *block = entry.addEntryBlock(b);
  b.setInsertionPointToStart(block);
  Value bindings = block->getArgument(0);
  SmallVector<Value> args;
  for (unsigned i = 0; i < numBuffers; ++i) {
    Value slot = LLVM::GEPOp::create(b, loc, ptr, ptr, bindings,
                                     ArrayRef<LLVM::GEPArg>{int32_t(i)});
    args.push_back(LLVM::LoadOp::create(b, loc, ptr, slot));
  }
  Type indexType = implType.getParamType(numBuffers);
  for (unsigned i = 1; i <= 2; ++i) {
    Value v = block->getArgument(i);
    if (indexType != i32)
      v = LLVM::ZExtOp::create(b, loc, indexType, v);
    args.push_back(v);
  }
  if (scratch)
    args.push_back(block->getArgument(3));
  // A kernel of a branch on a run-time condition (dlc.run_if) returns at
  // once, writing nothing, when its condition buffer (one byte, 0 or 1)
  // does not hold the value it runs for.
  if (auto runIf = impl->getAttrOfType<DenseI64ArrayAttr>(dlc::kRunIfAttr)) {
    impl->removeAttr(dlc::kRunIfAttr);
    if (runIf[0] >= numBuffers)
      return impl.emitError("dlc.run_if names argument ")
             << runIf[0] << " of a kernel with " << numBuffers << " buffers";
    auto i8 = IntegerType::get(ctx, 8);
    Value flag = LLVM::LoadOp::create(b, loc, i8, args[runIf[0]]);
    Value zero = LLVM::ConstantOp::create(b, loc, i8, 0);
    Value run = LLVM::ICmpOp::create(
        b, loc, runIf[1] ? LLVM::ICmpPredicate::ne : LLVM::ICmpPredicate::eq,
        flag, zero);
    Block *call = new Block(), *skip = new Block();
    entry.getBody().push_back(call);
    entry.getBody().push_back(skip);
    LLVM::CondBrOp::create(b, loc, run, call, skip);
    b.setInsertionPointToStart(skip);
    LLVM::ReturnOp::create(b, loc, ValueRange());
    b.setInsertionPointToStart(call);
  }
  LLVM::CallOp::create(b, loc, impl, args);
  LLVM::ReturnOp::create(b, loc, ValueRange());
  return success();
}

struct CPUKernelEntryPass
    : public dlc::impl::CPUKernelEntryBase<CPUKernelEntryPass> {
  void runOnOperation() override {
    SmallVector<LLVM::LLVMFuncOp> kernels;
    for (auto f : getOperation().getOps<LLVM::LLVMFuncOp>())
      if (f->hasAttr(dlc::kKernelAttr) && !f.isExternal())
        kernels.push_back(f);
    for (LLVM::LLVMFuncOp k : kernels)
      if (failed(addEntry(k)))
        return signalPassFailure();
  }
};

} // namespace

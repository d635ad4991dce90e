//===- OutlineDispatches.cpp - the dlc-outline-dispatches pass ------------===//

#include "dlc/Dialect/DLC/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

namespace dlc {
#define GEN_PASS_DEF_OUTLINEDISPATCHES
#include "dlc/Dialect/DLC/Transforms/Passes.h.inc"
} // namespace dlc

using namespace mlir;

namespace {

/// A short, readable name for the op that produces the dispatch's result:
/// "conv_2d_nchw_fchw", "generic", "pad", ...
std::string describe(dlc::DispatchOp dispatch) {
  Operation *producer =
      dispatch.getYield().getValues().empty()
          ? nullptr
          : dispatch.getYield().getValues()[0].getDefiningOp();
  if (!producer)
    return "copy";
  std::string name = producer->getName().stripDialect().str();
  for (char &c : name)
    if (c == '.')
      c = '_';
  return name;
}

struct OutlineDispatchesPass
    : public dlc::impl::OutlineDispatchesBase<OutlineDispatchesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> hosts(module.getOps<func::FuncOp>());
    for (func::FuncOp host : hosts) {
      unsigned index = 0;
      SmallVector<dlc::DispatchOp> dispatches;
      host.walk([&](dlc::DispatchOp d) { dispatches.push_back(d); });
      for (dlc::DispatchOp dispatch : dispatches) {
        std::string name = (host.getSymName() + "_k" + Twine(index++) + "_" +
                            describe(dispatch))
                               .str();
        OpBuilder b(module.getBody(), module.getBody()->end());
        auto type = b.getFunctionType(dispatch.getInputs().getTypes(),
                                      dispatch.getResultTypes());
        auto kernel = func::FuncOp::create(b, dispatch.getLoc(), name, type);
        kernel.setPrivate();
        kernel->setAttr(dlc::kKernelAttr, b.getUnitAttr());
        if (Attribute runIf = dispatch->getAttr(dlc::kRunIfAttr))
          kernel->setAttr(dlc::kRunIfAttr, runIf);
        kernel.getBody().takeBody(dispatch.getBody());
        Block &entry = kernel.getBody().front();
        auto yield = cast<dlc::YieldOp>(entry.getTerminator());
        OpBuilder yb(yield);
        func::ReturnOp::create(yb, yield.getLoc(), yield.getValues());
        yield.erase();
        symbols.insert(kernel);

        OpBuilder hb(dispatch);
        auto launch = dlc::LaunchOp::create(
            hb, dispatch.getLoc(), dispatch.getResultTypes(),
            kernel.getSymName(), dispatch.getInputs());
        dispatch.replaceAllUsesWith(launch.getResults());
        dispatch.erase();
      }
    }
  }
};

} // namespace

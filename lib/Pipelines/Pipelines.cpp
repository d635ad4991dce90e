//===- Pipelines.cpp - dlc's compilation pipelines ------------------------===//

#include "dlc/Pipelines/Pipelines.h"
#include "dlc/Pipelines/CompileModel.h"
#include "dlc/Pipelines/Report.h"
#include "dlc/Pipelines/WeightSparsity.h"

#include "dlc/Codegen/Passes.h"
#include "dlc/Conversion/Passes.h"
#include "dlc/Dialect/DLC/Transforms/Passes.h"
#include "dlc/Target/Artifact.h"
#include "dlc/Target/KernelBinary.h"
#include "dlc/Target/PassOptions.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/Timing.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"

#include <chrono>

using namespace mlir;

void dlc::buildLegalizePipeline(OpPassManager &pm,
                                const TargetDescription *target) {
  pm.addNestedPass<func::FuncOp>(createFoldBlockedDequantize());
  if (!target || target->hasInt8DotProduct)
    pm.addNestedPass<func::FuncOp>(createFoldQDQ());
  pm.addPass(createConvertONNXToLinalg());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void dlc::buildOptimizePipeline(OpPassManager &pm) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addNestedPass<func::FuncOp>(createFoldConstants());
  pm.addPass(createCanonicalizerPass());
}

void dlc::buildDispatchPipeline(OpPassManager &pm,
                                const TargetDescription *target,
                                SparsityMode sparsity) {
  if (target && target->kind == TargetKind::CPU) {
    if (sparsity != SparsityMode::Off && target->sparseStepCost > 0) {
      SparseContractionsOptions sparse;
      sparse.force = sparsity == SparsityMode::Force;
      sparse.columns = std::max<int64_t>(target->vectorBits / 32, 4);
      sparse.stepCost = target->sparseStepCost;
      sparse.outputCost = target->sparseOutputCost;
      sparse.inputCost = target->sparseInputCost;
      pm.addNestedPass<func::FuncOp>(createSparseContractions(sparse));
    }
    CPUInt8ConvOptions int8;
    int8.lanes = std::max<int64_t>(target->vectorBits / 32, 4);
    int8.dotProducts = target->hasInt8DotProduct;
    int8.signedDot = target->int8DotSigned;
    pm.addNestedPass<func::FuncOp>(createCPUInt8Conv(int8));
    ConvChannelsLastOptions channelsLast;
    channelsLast.lanes = std::max<int64_t>(target->vectorBits / 32, 4);
    pm.addNestedPass<func::FuncOp>(createConvChannelsLast(channelsLast));
    ConstantColumnsLastOptions columnsLast;
    columnsLast.lanes = channelsLast.lanes;
    pm.addNestedPass<func::FuncOp>(createConstantColumnsLast(columnsLast));
    pm.addNestedPass<func::FuncOp>(createTransposeIntoMatvec());
  }
  pm.addNestedPass<func::FuncOp>(createEpilogueThroughReshape());
  pm.addNestedPass<func::FuncOp>(createFormDispatches());
  ConcatInPlaceOptions concatInPlace;
  if (target)
    concatInPlace.alignment = target->bufferAlignment();
  pm.addNestedPass<func::FuncOp>(createConcatInPlace(concatInPlace));
  SliceInPlaceOptions sliceInPlace;
  if (target)
    sliceInPlace.alignment = target->bufferAlignment();
  pm.addNestedPass<func::FuncOp>(createSliceInPlace(sliceInPlace));
  pm.addNestedPass<func::FuncOp>(createPredicateDispatches());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createOutlineDispatches());
  pm.addPass(createCSEPass());
}

namespace {

struct CodegenPipelineOptions
    : public PassPipelineOptions<CodegenPipelineOptions> {
  Option<std::string> target{
      *this, "target",
      llvm::cl::desc("The target, as dlc-compile --target names it"),
      llvm::cl::init("cpu")};
};

/// Registers a kernel code generation pipeline taking a target option;
/// `build` adds the passes, or fails with a message.
void registerCodegenPipeline(
    StringRef arg, StringRef description,
    std::function<LogicalResult(OpPassManager &, const dlc::TargetDescription &,
                                std::string &)>
        build) {
  registerPassPipeline(
      arg, description,
      [build, arg](OpPassManager &pm, StringRef text,
                   function_ref<LogicalResult(const Twine &)> errorHandler) {
        CodegenPipelineOptions options;
        if (failed(options.parseFromString(text)))
          return failure();
        llvm::Expected<dlc::TargetDescription> target =
            dlc::TargetDescription::parse(options.target);
        if (!target)
          return errorHandler(arg + ": " + llvm::toString(target.takeError()));
        std::string error;
        if (failed(build(pm, *target, error)))
          return errorHandler(arg + ": " + error);
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)> optHandler) {
        optHandler(CodegenPipelineOptions());
      });
}

} // namespace

void dlc::registerPipelines() {
  PassPipelineRegistration<>(
      "dlc-legalize",
      "ONNX nodes to linalg/tensor/arith/math, folded and cleaned up",
      [](OpPassManager &pm) { buildLegalizePipeline(pm); });
  PassPipelineRegistration<>(
      "dlc-optimize", "Graph-level optimization of the legalized program",
      [](OpPassManager &pm) { buildOptimizePipeline(pm); });
  PassPipelineRegistration<>(
      "dlc-dispatch", "Form dispatch regions and outline them as kernels",
      [](OpPassManager &pm) { buildDispatchPipeline(pm); });
  registerCodegenPipeline(
      "dlc-codegen-tiling",
      "Kernels: fuse, tile into workgroups (and threads), bufferize",
      [](OpPassManager &pm, const TargetDescription &target, std::string &) {
        buildKernelTilingPipeline(pm, target);
        return success();
      });
  registerCodegenPipeline(
      "dlc-codegen-cpu",
      "Kernels to the LLVM dialect for a CPU target, as dlc-compile does",
      [](OpPassManager &pm, const TargetDescription &target,
         std::string &error) -> LogicalResult {
        if (target.isGPU()) {
          error = "needs a cpu target, not " + target.str();
          return failure();
        }
        buildKernelTilingPipeline(pm, target);
        return buildCPULoweringPipeline(pm, target, error);
      });
  registerCodegenPipeline(
      "dlc-codegen-vulkan",
      "Kernels to one SPIR-V module each for a Vulkan target, as dlc-compile "
      "does",
      [](OpPassManager &pm, const TargetDescription &target,
         std::string &error) -> LogicalResult {
        if (target.kind != TargetKind::Vulkan) {
          error = "needs a vulkan target, not " + target.str();
          return failure();
        }
        buildKernelTilingPipeline(pm, target);
        buildGPUKernelChecks(pm, target);
        buildVulkanLoopsPipeline(pm, target);
        buildVulkanSPIRVPipeline(pm, target);
        return success();
      });
  registerCodegenPipeline(
      "dlc-codegen-cuda",
      "Kernels to a gpu.binary of PTX for a CUDA target, as dlc-compile does",
      [](OpPassManager &pm, const TargetDescription &target,
         std::string &error) -> LogicalResult {
        if (target.kind != TargetKind::CUDA) {
          error = "needs a cuda target, not " + target.str();
          return failure();
        }
        buildKernelTilingPipeline(pm, target);
        buildGPUKernelChecks(pm, target);
        buildCUDALoweringPipeline(pm, target);
        return success();
      });
}

namespace {

/// Runs a pipeline built by `build` on `module` with the command-line pass
/// manager options (IR printing, timing, crash reproducers) applied.
LogicalResult runPipeline(ModuleOp module,
                          llvm::function_ref<void(OpPassManager &)> build) {
  PassManager pm(module.getContext(), ModuleOp::getOperationName());
  if (failed(dlc::applyCommandLinePassOptions(pm)))
    return failure();
  build(pm);
  return pm.run(module);
}

/// Moves the kernel functions of `host` into a new module, leaving
/// declarations behind so that the host's dlc.launch ops stay valid.
OwningOpRef<ModuleOp> extractKernels(ModuleOp host) {
  OpBuilder b(host.getContext());
  OwningOpRef<ModuleOp> kernels = ModuleOp::create(host.getLoc());
  b.setInsertionPointToEnd(kernels->getBody());
  for (auto f : host.getOps<func::FuncOp>()) {
    if (!f->hasAttr(dlc::kKernelAttr))
      continue;
    b.clone(*f);
    f.getBody().getBlocks().clear();
  }
  return kernels;
}

/// What the kernels' contractions compute in: integer (i8 x i8 -> i32 and
/// other integer products), float, or none (elementwise, pooling, data
/// movement); the float ones that read or write 8-bit activations (a
/// quantized model's layer that still runs in float: it dequantizes its
/// int8 activations, or quantizes its result); and the float ones whose
/// only 8-bit operands are constants, weights dequantized in the product
/// (MatMulNBits' 4- and 8-bit weights), which sit between float tensors.
struct KernelArithmetic {
  unsigned integer = 0, floating = 0, none = 0, weightOnly = 0;
  SmallVector<std::string> floatBetweenInt8;
  /// Per kernel, in words: "int8" (integer products), "float", "float on
  /// 8/4-bit weights", "float on int8 activations", "no products".
  llvm::StringMap<std::string> byKernel;
};

KernelArithmetic classifyKernels(ModuleOp host, ModuleOp kernels) {
  KernelArithmetic out;
  auto isInt8Tensor = [](Type t) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    return tensor && tensor.getElementType().isInteger(8);
  };
  // Per kernel, the operands every launch binds to a constant.
  llvm::StringMap<llvm::SmallBitVector> constantOperands;
  host.walk([&](dlc::LaunchOp launch) {
    llvm::SmallBitVector constant(launch.getInputs().size());
    for (auto [i, v] : llvm::enumerate(launch.getInputs()))
      constant[i] = isa_and_nonnull<arith::ConstantOp>(v.getDefiningOp());
    auto [it, inserted] =
        constantOperands.try_emplace(launch.getKernel(), constant);
    if (!inserted)
      it->second &= constant;
  });
  for (auto f : kernels.getOps<func::FuncOp>()) {
    if (!f->hasAttr(dlc::kKernelAttr) || f.isExternal())
      continue;
    bool intProduct = false, floatProduct = false;
    f.walk([&](linalg::LinalgOp op) {
      if (op.getNumReductionLoops() == 0)
        return;
      for (Operation &inner : op->getRegion(0).front()) {
        intProduct |= isa<arith::MulIOp>(inner);
        floatProduct |= isa<arith::MulFOp, math::FmaOp>(inner);
      }
    });
    if (floatProduct) {
      ++out.floating;
      FunctionType type = f.getFunctionType();
      llvm::SmallBitVector constant = constantOperands.lookup(f.getSymName());
      bool int8Activation = false, int8Constant = false;
      for (auto [i, t] : llvm::enumerate(type.getInputs())) {
        if (!isInt8Tensor(t))
          continue;
        bool isConstant = i < constant.size() && constant[i];
        (isConstant ? int8Constant : int8Activation) = true;
      }
      std::string &kind = out.byKernel[f.getSymName()];
      kind = "float";
      if (!int8Activation && int8Constant &&
          llvm::none_of(type.getResults(), isInt8Tensor)) {
        ++out.weightOnly;
        kind = "float on 8/4-bit weights";
      }
      if (int8Activation || llvm::any_of(type.getResults(), isInt8Tensor)) {
        kind = "float on int8 activations";
        llvm::SetVector<StringRef> nodes;
        f.walk([&](Operation *op) {
          // Constants are named after their initializers, not nodes.
          if (isa<arith::ConstantOp>(op))
            return;
          op->getLoc()->walk([&](Location l) {
            if (auto name = dyn_cast<NameLoc>(l))
              nodes.insert(name.getName().getValue());
            return WalkResult::advance();
          });
        });
        out.floatBetweenInt8.push_back(
            (f.getSymName() + " (" + llvm::join(nodes, ", ") + ")").str());
      }
    } else if (intProduct) {
      ++out.integer;
      out.byKernel[f.getSymName()] = "integer";
    } else {
      ++out.none;
      out.byKernel[f.getSymName()] = "no products";
    }
  }
  return out;
}

/// The ONNX nodes each kernel computes, by the names in the locations of its
/// computing and data-moving ops (linalg ops other than fills, slices,
/// pads, reshapes), in the order they come.
/// Constants, fills and empty tensors are left out: CSE merges identical
/// ones of several nodes and fuses their locations.
/// Beside them, a kernel's dlc.run_if (dlc-predicate-dispatches).
struct KernelNodesEntry {
  std::string kernel;
  SmallVector<std::string> nodes;
  std::optional<std::pair<int64_t, int64_t>> runIf;
};
using KernelNodes = SmallVector<KernelNodesEntry>;

KernelNodes collectKernelNodes(ModuleOp kernels) {
  KernelNodes out;
  for (auto f : kernels.getOps<func::FuncOp>()) {
    llvm::SetVector<StringRef> names;
    f.walk([&](Operation *op) {
      // Data movement counts too: a Concat is the slices its inputs are
      // written to, a Flatten a reshape.
      if (!(isa<linalg::LinalgOp>(op) && !isa<linalg::FillOp>(op)) &&
          !isa<tensor::InsertSliceOp, tensor::PadOp, tensor::ConcatOp,
               tensor::CollapseShapeOp, tensor::ExpandShapeOp>(op))
        return;
      op->getLoc()->walk([&](Location l) {
        if (auto name = dyn_cast<NameLoc>(l))
          names.insert(name.getName().getValue());
        return WalkResult::advance();
      });
    });
    out.push_back({f.getSymName().str(), {}, std::nullopt});
    for (StringRef n : names)
      out.back().nodes.push_back(n.str());
    if (auto runIf = f->getAttrOfType<DenseI64ArrayAttr>(dlc::kRunIfAttr))
      out.back().runIf = std::make_pair(runIf[0], runIf[1]);
  }
  return out;
}

void printStats(const dlc::ArtifactStats &s, const KernelArithmetic &arith,
                const KernelNodes &nodes, const dlc::KernelBinary &binary,
                double seconds, const dlc::TargetDescription &target,
                llvm::raw_ostream &os) {
  auto kib = [](uint64_t b) { return llvm::format("%.1f KiB", b / 1024.0); };
  os << "target:          " << target.str() << "\n";
  os << "onnx nodes:      " << s.onnxNodes << "\n";
  os << "kernels:         " << s.kernels << " (" << s.launches
     << " launches)\n";
  os << "arithmetic:      " << arith.integer << " integer, " << arith.floating
     << " float, " << arith.none << " without products\n";
  if (arith.weightOnly)
    os << "weight-only:     " << arith.weightOnly
       << " float kernels on 8- or 4-bit constant weights\n";
  for (const std::string &k : arith.floatBetweenInt8)
    os << "float on int8:   " << k << "\n";
  if (unsigned n = llvm::count_if(
          nodes, [](const KernelNodesEntry &k) { return bool(k.runIf); }))
    os << "branches:        " << n
       << " kernels run only when their branch of a run-time condition is "
          "taken\n";
  os << "arena:           " << s.plan.arenaSize << " bytes ("
     << kib(s.plan.arenaSize) << "), lower bound " << s.plan.lowerBound
     << ", no reuse " << s.plan.noReuseSize << ", ratio "
     << llvm::format("%.3f", s.plan.lowerBound
                                 ? double(s.plan.arenaSize) / s.plan.lowerBound
                                 : 1.0)
     << "\n";
  if (!s.reusedInputs.empty())
    os << "inputs reused:   " << llvm::join(s.reusedInputs, ", ")
       << " (a run reuses their memory: set them before each run)\n";
  os << "constants:       " << s.constantBytes << " bytes\n";
  os << "code:            " << s.codeBytes << " bytes";
  if (target.kind == dlc::TargetKind::CUDA) {
    os << " of PTX, ";
    if (s.cubinBytes)
      os << "cubin " << s.cubinBytes << " bytes";
    else
      os << "no cubin";
  }
  if (target.kind == dlc::TargetKind::CPU && !target.isHosted)
    os << " (no loader on " << target.triple
       << ": the application links the kernels, --emit=obj)";
  os << "\n";
  if (target.kind == dlc::TargetKind::CPU)
    os << "scratch:         " << s.scratchBytes << " bytes per thread ("
       << kib(s.scratchBytes) << ")\n";
  os << "artifact:        " << s.fileBytes << " bytes\n";
  os << "compile time:    " << llvm::format("%.3f s", seconds) << "\n";
  for (const KernelNodesEntry &entry : nodes) {
    const dlc::KernelInfo *info = nullptr;
    for (const dlc::KernelInfo &k : binary.kernels)
      if (k.name == entry.kernel)
        info = &k;
    os << "kernel " << entry.kernel;
    if (info)
      os << ": " << info->grid[0] * info->grid[1] * info->grid[2]
         << " workgroups";
    os << "; ONNX nodes: "
       << (entry.nodes.empty() ? std::string("(none)")
                               : llvm::join(entry.nodes, ", "));
    if (entry.runIf)
      os << "; runs only when argument " << entry.runIf->first << " is "
         << (entry.runIf->second ? "true" : "false");
    os << "\n";
  }
}

} // namespace

std::string dlc::checkCompileOptions(const CompileOptions &options) {
  // PTX, SPIR-V and objects are one target's code each.
  struct Code {
    EmitKind emit;
    TargetKind kind;
    const char *flag, *target;
  };
  static const Code codes[] = {
      {EmitKind::PTX, TargetKind::CUDA, "ptx", "cuda"},
      {EmitKind::SPIRV, TargetKind::Vulkan, "spirv", "vulkan"},
      {EmitKind::Object, TargetKind::CPU, "obj", "cpu"},
  };
  if (options.emit == EmitKind::QDQONNX)
    return "--emit=onnx writes the model --quantize, --weights, "
           "--precision or --prune made; it needs one of them";
  for (const Code &c : codes)
    if (options.emit == c.emit && options.target.kind != c.kind)
      return (llvm::Twine("--emit=") + c.flag + " needs a " + c.target +
              " target, not " + options.target.str())
          .str();
  if (!options.reportPath.empty() && options.emit != EmitKind::Artifact)
    return "--report describes an artifact; it does not go with --emit=" +
           std::string(options.emit == EmitKind::MLIR         ? "mlir"
                       : options.emit == EmitKind::Dispatches ? "dispatches"
                       : options.emit == EmitKind::PTX        ? "ptx"
                       : options.emit == EmitKind::SPIRV      ? "spirv"
                                                              : "obj");
  if (options.sparsity == SparsityMode::Force &&
      options.target.sparseStepCost <= 0)
    return "--sparsity=force: " + options.target.str() +
           " has no sparse kernels yet (CPU targets do)";
  if (!options.kernelDirectory.empty() && options.emit != EmitKind::SPIRV &&
      options.emit != EmitKind::PTX)
    return "one file per kernel (an output directory) is for --emit=spirv "
           "and --emit=ptx";
  return "";
}

/// Writes `data` to `directory`/`name`; an error names the file.
static LogicalResult writeKernelFile(Location loc, StringRef directory,
                                     StringRef name, StringRef data) {
  SmallString<256> path(directory);
  llvm::sys::path::append(path, name);
  std::error_code error;
  llvm::raw_fd_ostream file(path, error, llvm::sys::fs::OF_None);
  if (!error) {
    file << data;
    file.close();
    error = file.error();
  }
  if (error)
    return emitError(loc) << "cannot write '" << path
                          << "': " << error.message();
  return success();
}

/// The C source that registers the kernels of an --emit=obj object with
/// the CPU driver's static mode: a declaration of each kernel function (the
/// dlcx_cpu_kernel_fn signature) and the {name, function} table.
static LogicalResult writeKernelTable(Location loc, StringRef path,
                                      const dlc::KernelBinary &binary,
                                      StringRef symbolPrefix) {
  ArrayRef<dlc::KernelInfo> kernels = binary.kernels;
  // The table's own names: dlc_kernels... or, with a prefix, <prefix>kernels
  // (each model's table its own names, as its kernels have).
  std::string table = symbolPrefix.empty() ? "dlc_" : symbolPrefix.str();
  std::string symbols = table + "kernels", count = table + "kernel_count",
              fingerprint = table + "kernels_fingerprint";
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "/* Generated by dlc-compile --emit=obj: the kernels of the object "
        "it wrote,\n"
        " * for the CPU driver's linked mode. Compile and link this file "
        "with the\n"
        " * object and the runtime, and before loading the artifact "
        "compiled from\n"
        " * the same model for the same target:\n"
     << " *   extern const dlc_cpu_symbol_t " << symbols << "[];\n"
     << " *   extern const size_t " << count << ";\n"
     << " *   extern const uint64_t " << fingerprint << ";\n"
     << " *   dlc_cpu_driver_create_linked(NULL, " << symbols << ", " << count
     << ",\n"
     << " *                                " << fingerprint
     << ", &driver);\n"
        " *   dlc_context_register_driver(context, driver);\n"
        " * The driver loads only the artifact compiled to this object (its "
        "CPU code\n"
        " * fingerprint). Several models in one program: compile each with "
        "its own\n"
        " * --symbol-prefix (the kernels' and this table's names), and give "
        "each its\n"
        " * own context. */\n"
        "#include \"dlc/cpu_driver.h\"\n\n";
  for (const dlc::KernelInfo &k : kernels) {
    // Outlining names kernels main_k<N>_<op>, after a prefix that is a C
    // identifier: C identifiers by construction.
    assert(!k.name.empty() && !llvm::isDigit(k.name.front()) &&
           llvm::all_of(k.name,
                        [](char c) { return llvm::isAlnum(c) || c == '_'; }) &&
           "a kernel name that is no C identifier");
    os << "void " << k.name
       << "(void *const *bindings, uint32_t begin, uint32_t end, "
          "void *scratch);\n";
  }
  // C has no empty arrays: a model without kernels gets one empty row.
  os << "\nconst dlc_cpu_symbol_t " << symbols << "[] = {\n";
  for (const dlc::KernelInfo &k : kernels)
    os << "    {\"" << k.name << "\", " << k.name << "},\n";
  if (kernels.empty())
    os << "    {0, 0},\n";
  os << "};\nconst size_t " << count << " = " << kernels.size() << ";\n";
  os << "const uint64_t " << fingerprint << " = 0x"
     << llvm::format_hex_no_prefix(binary.cpuCodeId, 16) << "ull;\n";
  SmallString<256> directory(path);
  llvm::sys::path::remove_filename(directory);
  return writeKernelFile(loc, directory, llvm::sys::path::filename(path), text);
}

/// --emit=ptx into a directory: each kernel compiled on its own, one
/// complete module per file.
static LogicalResult writePTXFiles(ModuleOp kernels,
                                   const dlc::CompileOptions &options) {
  SmallVector<std::string> names;
  for (auto f : kernels.getOps<func::FuncOp>())
    names.push_back(f.getSymName().str());
  for (const std::string &name : names) {
    OwningOpRef<ModuleOp> one = cast<ModuleOp>(kernels->clone());
    for (auto f : llvm::make_early_inc_range(one->getOps<func::FuncOp>()))
      if (f.getSymName() != name)
        f.erase();
    dlc::KernelBinary single;
    if (failed(dlc::compileCUDAKernels(*one, options.target,
                                       dlc::CubinMode::CheckOnly, single)) ||
        failed(writeKernelFile(kernels.getLoc(), options.kernelDirectory,
                               name + ".ptx",
                               StringRef(single.code).rtrim('\0'))))
      return failure();
  }
  return success();
}

/// Runs the stages after import on `module` and writes the output.
static LogicalResult compileModule(OwningOpRef<ModuleOp> module,
                                   const dlc::CompileOptions &options,
                                   llvm::raw_ostream &output,
                                   std::vector<dlc::ONNXGraphNode> graph = {}) {
  using namespace dlc;
  auto start = std::chrono::steady_clock::now();
  if (!module)
    return failure();
  auto emitMLIR = [&]() {
    module->print(output);
    output << "\n";
    return success();
  };
  bool mlir = options.emit == EmitKind::MLIR;
  if (mlir && options.stopAfter == Stage::Import)
    return emitMLIR();
  if (failed(runPipeline(*module, [&](OpPassManager &pm) {
        buildLegalizePipeline(pm, &options.target);
      })))
    return failure();
  if (mlir && options.stopAfter == Stage::Legalize)
    return emitMLIR();
  if (failed(runPipeline(*module, buildOptimizePipeline)))
    return failure();
  // Weights are constants next to the ops that read them only until
  // dispatch formation.
  std::vector<WeightSparsity> sparsity;
  if (options.printStats)
    sparsity = analyzeWeightSparsity(*module);
  if (mlir && options.stopAfter == Stage::Optimize)
    return emitMLIR();
  if (failed(runPipeline(*module, [&](OpPassManager &pm) {
        buildDispatchPipeline(pm, &options.target, options.sparsity);
      })))
    return failure();
  std::vector<SparseKernel> sparseKernels;
  if (options.printStats)
    sparseKernels = findSparseKernels(*module);
  if ((mlir && options.stopAfter == Stage::Dispatch) ||
      options.emit == EmitKind::Dispatches)
    return emitMLIR();

  const TargetDescription &target = options.target;
  // Kernel symbols of several models in one program must differ.
  if (!options.symbolPrefix.empty()) {
    SymbolTable symbols(*module);
    for (auto f : llvm::make_early_inc_range(module->getOps<func::FuncOp>()))
      if (f->hasAttr(kKernelAttr) &&
          failed(
              symbols.rename(f, options.symbolPrefix + f.getSymName().str())))
        return f.emitError("cannot rename kernel ") << f.getSymName();
  }
  OwningOpRef<ModuleOp> kernels = extractKernels(*module);
  if (mlir && options.stopAfter == Stage::Kernels) {
    kernels->print(output);
    output << "\n";
    return success();
  }
  // PTX is one module for all kernels: one per kernel is compiled alone.
  if (options.emit == EmitKind::PTX && !options.kernelDirectory.empty())
    return writePTXFiles(*kernels, options);
  KernelArithmetic arith;
  KernelNodes kernelNodes;
  bool reporting = !options.reportPath.empty();
  if (options.printStats || reporting) {
    arith = classifyKernels(*module, *kernels);
    kernelNodes = collectKernelNodes(*kernels);
  }
  // The report's shapes: each kernel's operands and results as the host
  // binds them.
  llvm::StringMap<std::string> kernelShapes;
  if (reporting)
    for (auto f : kernels->getOps<func::FuncOp>()) {
      std::string text;
      llvm::raw_string_ostream os(text);
      auto print = [&](TypeRange types) {
        llvm::interleaveComma(types, os, [&](Type t) {
          if (auto shaped = dyn_cast<ShapedType>(t)) {
            for (int64_t d : shaped.getShape())
              os << d << "x";
            os << shaped.getElementType();
          } else {
            os << t;
          }
        });
      };
      print(f.getFunctionType().getInputs());
      os << " -> ";
      print(f.getFunctionType().getResults());
      kernelShapes[f.getSymName()] = text;
    }
  KernelBinary binary;
  switch (target.kind) {
  case TargetKind::CPU:
    if (failed(compileCPUKernels(*kernels, target,
                                 options.emit == EmitKind::Object, binary)))
      return failure();
    break;
  case TargetKind::Vulkan:
    if (failed(compileVulkanKernels(*kernels, target, binary)))
      return failure();
    break;
  case TargetKind::CUDA: {
    // Only an artifact carries the cubin; --emit=ptx writes the PTX.
    CubinMode cubin = options.cudaCubin && options.emit == EmitKind::Artifact
                          ? CubinMode::Assemble
                          : CubinMode::CheckOnly;
    if (failed(compileCUDAKernels(*kernels, target, cubin, binary)))
      return failure();
    break;
  }
  }
  if (mlir) {
    kernels->print(output);
    output << "\n";
    return success();
  }
  if (!options.kernelDirectory.empty()) {
    for (const KernelInfo &k : binary.kernels)
      if (failed(writeKernelFile(
              module->getLoc(), options.kernelDirectory, k.name + ".spv",
              StringRef(binary.code).substr(k.codeOffset, k.codeSize))))
        return failure();
    return success();
  }
  if (options.emit == EmitKind::SPIRV && binary.kernels.size() > 1)
    return emitError(module->getLoc())
           << "--emit=spirv: the model has " << binary.kernels.size()
           << " kernels, one SPIR-V module each, and a file holds one "
              "module; give -o a directory (DIR/) for one file per kernel";
  if (options.emit == EmitKind::Object && !options.kernelTablePath.empty() &&
      failed(writeKernelTable(module->getLoc(), options.kernelTablePath, binary,
                              options.symbolPrefix)))
    return failure();
  if (options.emit == EmitKind::Object || options.emit == EmitKind::SPIRV) {
    output << binary.code;
    return success();
  }
  if (options.emit == EmitKind::PTX) {
    output << StringRef(binary.code).rtrim('\0');
    return success();
  }
  ArtifactStats stats;
  if (failed(writeArtifact(*module, target, binary, output, &stats)))
    return failure();
  if (options.printStats) {
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    printStats(stats, arith, kernelNodes, binary, seconds, target,
               llvm::errs());
    printWeightSparsity(sparsity, llvm::errs());
    if (options.target.sparseStepCost > 0)
      printSparseKernels(sparseKernels,
                         options.sparsity == SparsityMode::Auto  ? "auto"
                         : options.sparsity == SparsityMode::Off ? "off"
                                                                 : "force",
                         llvm::errs());
  }
  if (!options.reportPath.empty()) {
    CompileReport report;
    report.model = "(model)";
    if (auto file = dyn_cast<FileLineColLoc>(module->getLoc()))
      report.model = file.getFilename().str();
    report.target = target.str();
    report.graph = std::move(graph);
    for (const KernelNodesEntry &entry : kernelNodes) {
      const std::string &name = entry.kernel;
      ReportKernel k;
      k.name = name;
      k.onnxNodes.assign(entry.nodes.begin(), entry.nodes.end());
      for (const KernelInfo &info : binary.kernels)
        if (info.name == name) {
          k.workgroups = uint64_t(info.grid[0]) * info.grid[1] * info.grid[2];
          k.bindings = info.bindingCount;
          k.codeBytes = info.ownCodeBytes;
        }
      k.shapes = kernelShapes.lookup(name);
      k.arithmetic = arith.byKernel.lookup(name);
      report.kernels.push_back(std::move(k));
    }
    report.stats = std::move(stats);
    report.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (failed(writeReportHTML(module->getLoc(), options.reportPath, report,
                               options.reportProfilePath)))
      return failure();
  }
  return success();
}

LogicalResult dlc::compileONNXFile(MLIRContext &context, StringRef inputPath,
                                   const CompileOptions &options,
                                   llvm::raw_ostream &output) {
  if (std::string error = checkCompileOptions(options); !error.empty())
    return emitError(FileLineColLoc::get(&context, inputPath, 0, 0), error);
  // The report draws the graph as the file has it.
  std::vector<ONNXGraphNode> graph;
  if (!options.reportPath.empty() &&
      failed(describeONNXFile(context, inputPath, graph)))
    return failure();
  return compileModule(
      importONNXFile(context, inputPath, options.importOptions), options,
      output, std::move(graph));
}

LogicalResult dlc::compileONNXBuffer(MLIRContext &context, StringRef buffer,
                                     StringRef bufferName, bool isText,
                                     const CompileOptions &options,
                                     llvm::raw_ostream &output) {
  if (std::string error = checkCompileOptions(options); !error.empty())
    return emitError(FileLineColLoc::get(&context, bufferName, 0, 0), error);
  std::vector<ONNXGraphNode> graph;
  if (!options.reportPath.empty() &&
      failed(describeONNXBuffer(context, buffer, bufferName, isText, graph)))
    return failure();
  return compileModule(importONNXBuffer(context, buffer, bufferName, isText,
                                        options.importOptions),
                       options, output, std::move(graph));
}

LogicalResult dlc::compileONNXModel(MLIRContext &context,
                                    ::onnx::ModelProto &model,
                                    StringRef modelName,
                                    const CompileOptions &options,
                                    llvm::raw_ostream &output) {
  if (std::string error = checkCompileOptions(options); !error.empty())
    return emitError(FileLineColLoc::get(&context, modelName, 0, 0), error);
  // Before the import, which rewrites the model.
  std::vector<ONNXGraphNode> graph;
  if (!options.reportPath.empty())
    graph = describeONNXModel(model);
  return compileModule(
      importONNXModel(context, model, modelName, options.importOptions),
      options, output, std::move(graph));
}

//===- CompileCommand.cpp - dlc-compile's command line
//---------------------===//
//
// A driver over the same pipelines dlc-opt exposes one pass at a time:
// import, legalize, optimize, form dispatches, generate code for the target,
// plan memory and write the artifact. dlc-compile is this function; the
// Python package calls it too.
//
//===----------------------------------------------------------------------===//

#include "dlc/Driver/CompileCommand.h"
#include "dlc/Frontend/ONNX/Importer.h"
#include "dlc/Pipelines/Pipelines.h"
#include "dlc/Quantization/Quantize.h"
#include "dlc/Target/TargetDescription.h"
#include "dlc/Tools/Registration.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <mutex>

using namespace mlir;
namespace cl = llvm::cl;

static cl::OptionCategory category("dlc-compile options");

static cl::opt<std::string> inputFile(cl::Positional,
                                      cl::desc("<model.onnx | model.onnxtxt>"),
                                      cl::Required, cl::cat(category));
static cl::opt<std::string> outputFile("o",
                                       cl::desc("Output file (a directory "
                                                "for one file per kernel)"),
                                       cl::value_desc("path"), cl::init(""),
                                       cl::cat(category));
static cl::opt<std::string>
    targetSpec("target",
               cl::desc("cpu (this machine), cpu:<triple>[:+feature,...] "
                        "(LLVM's feature names, e.g. +avx512vnni), "
                        "vulkan[:+fp16,+fp64,+int8,+dot8,+subgroup,+int64] or "
                        "cuda:sm_XX (default: cpu)"),
               cl::init("cpu"), cl::cat(category));
static cl::opt<std::string>
    cpuModel("cpu",
             cl::desc("CPU targets: the processor to compile for (LLVM's "
                      "names: znver4, skylake-avx512, cortex-a76, ...) "
                      "instead of this machine's or a generic one"),
             cl::init(""), cl::cat(category));
static cl::opt<dlc::EmitKind> emitKind(
    "emit", cl::desc("What to write"), cl::init(dlc::EmitKind::Artifact),
    cl::values(
        clEnumValN(dlc::EmitKind::MLIR, "mlir",
                   "MLIR after the stage named by --stage"),
        clEnumValN(dlc::EmitKind::Dispatches, "dispatches",
                   "MLIR after dispatch formation"),
        clEnumValN(dlc::EmitKind::PTX, "ptx",
                   "PTX of all kernels, one module (cuda); -o DIR/: one "
                   "module per kernel"),
        clEnumValN(dlc::EmitKind::SPIRV, "spirv",
                   "SPIR-V of a one-kernel model (vulkan); -o DIR/: one "
                   "module per kernel"),
        clEnumValN(dlc::EmitKind::Object, "obj",
                   "a relocatable object with all kernels (cpu), for static "
                   "linking"),
        clEnumValN(dlc::EmitKind::Artifact, "artifact",
                   "the .dlcx artifact (default)"),
        clEnumValN(dlc::EmitKind::QDQONNX, "onnx",
                   "the model as a rewrite left it: with --quantize the "
                   "QDQ model, with --weights the model with MatMulNBits "
                   "nodes, with --precision the 16-bit model, with --prune "
                   "the pruned model (ONNX Runtime runs each)"),
        clEnumValN(dlc::EmitKind::QDQONNX, "qdq-onnx",
                   "the same as onnx (its first name)")),
    cl::cat(category));
static cl::opt<dlc::Stage> stopAfter(
    "stage", cl::desc("With --emit=mlir: print the IR after this stage"),
    cl::init(dlc::Stage::Codegen),
    cl::values(clEnumValN(dlc::Stage::Import, "import", "the ONNX importer"),
               clEnumValN(dlc::Stage::Legalize, "legalize",
                          "ONNX to linalg/tensor/arith/math"),
               clEnumValN(dlc::Stage::Optimize, "optimize",
                          "graph-level optimization"),
               clEnumValN(dlc::Stage::Dispatch, "dispatch",
                          "dispatch formation"),
               clEnumValN(dlc::Stage::Kernels, "kernels",
                          "the kernels alone, before code generation (what "
                          "dlc-opt's dlc-codegen-* pipelines take)"),
               clEnumValN(dlc::Stage::Codegen, "codegen",
                          "kernel code generation (default)")),
    cl::cat(category));
static cl::list<std::string>
    inputShapes("input-shape",
                cl::desc("Pin an input's shape: name=d0,d1,... (name= a "
                         "scalar; name[k]=... element k of a sequence input, "
                         "name[]= an empty one; name=none an empty optional "
                         "input; repeatable)"),
                cl::value_desc("name=dims"), cl::cat(category));

namespace llvm {
// Registers LLVM's own -stats option; declared in a private LLVM header.
void initStatisticOptions();
} // namespace llvm

static cl::list<std::string> bindInputs(
    "bind-input",
    cl::desc("Fix an input's value at compile time: name=tensor.pb (an ONNX "
             "TensorProto); the input becomes a constant (repeatable)"),
    cl::value_desc("name=file"), cl::cat(category));

static cl::opt<std::string> kernelTable(
    "kernel-table",
    cl::desc("With --emit=obj: where to write the C source of the kernel "
             "table for the CPU driver's static mode (default: the "
             "object's name with .kernels.c; none when the object goes to "
             "stdout)"),
    cl::value_desc("file.c"), cl::init(""), cl::cat(category));

static cl::opt<std::string> report(
    "report",
    cl::desc("Also write an HTML page of what the compile did: the ONNX "
             "nodes coloured by kernel, the kernels, the arena over time"),
    cl::value_desc("file.html"), cl::init(""), cl::cat(category));
static cl::opt<std::string> reportProfile(
    "report-profile",
    cl::desc("With --report: add the kernel times of this dlc-run --profile "
             "trace (of the artifact this command writes)"),
    cl::value_desc("trace.json"), cl::init(""), cl::cat(category));

static cl::opt<bool> cubin(
    "cubin",
    cl::desc("CUDA targets: carry a cubin for the target's sm, assembled by "
             "ptxas -O3, next to the PTX (default true). With "
             "--cubin=false the artifact holds PTX only, which the driver "
             "compiles at load; ptxas still checks it (at -O0)"),
    cl::init(true), cl::cat(category));

static cl::opt<std::string> symbolPrefix(
    "symbol-prefix",
    cl::desc("CPU targets: start every kernel's symbol (and, with "
             "--emit=obj, the kernel table's names) with this C identifier, "
             "so that several models' objects link into one program; the "
             "artifact must be compiled with the same prefix"),
    cl::value_desc("name_"), cl::init(""), cl::cat(category));

static cl::opt<dlc::SparsityMode> sparsity(
    "sparsity",
    cl::desc("Convolutions over sparse constant weights (pruned models): "
             "auto reads only the nonzero blocks where the target's cost "
             "model predicts a gain (default), off keeps every kernel "
             "dense, force makes every sparse-capable layer with a "
             "skippable zero block sparse (CPU targets)"),
    cl::values(clEnumValN(dlc::SparsityMode::Auto, "auto", "by cost model"),
               clEnumValN(dlc::SparsityMode::Off, "off", "dense kernels"),
               clEnumValN(dlc::SparsityMode::Force, "force",
                          "sparse wherever a zero block can be skipped")),
    cl::init(dlc::SparsityMode::Auto), cl::cat(category));

static cl::opt<bool> splitInputFile(
    "split-input-file",
    cl::desc("Treat each chunk of the input between '# -----' lines as a "
             "separate model (for tests); outputs are concatenated"),
    cl::init(false), cl::cat(category));

static cl::OptionCategory quantCategory("dlc-compile quantization options");
static cl::opt<std::string> quantize(
    "quantize",
    cl::desc("Post-training quantization: int8 (per-channel int8 weights, "
             "uint8 activations, calibrated on --calibration-data)"),
    cl::value_desc("int8"), cl::init(""), cl::cat(quantCategory));
static cl::opt<std::string> calibrationData(
    "calibration-data",
    cl::desc("With --quantize: a folder with one sub-folder per sample, each "
             "holding <input name>.npy for every graph input"),
    cl::value_desc("dir"), cl::init(""), cl::cat(quantCategory));
static cl::opt<std::string> calibrationMethod(
    "calibration-method",
    cl::desc("With --quantize: how ranges are chosen: minmax (default), "
             "percentile[:P] (P% of the values inside; 99.99), entropy "
             "(least KL divergence) or mse (least squared error)"),
    cl::value_desc("method"), cl::init(""), cl::cat(quantCategory));
static cl::opt<std::string> activationScales(
    "activation-scales",
    cl::desc("With --quantize: per-channel (default) gives the 4-D "
             "activations that only convolutions read one scale per channel "
             "(one zero point; the convolutions take the scales into their "
             "weights); per-tensor gives every activation one scale"),
    cl::value_desc("per-channel|per-tensor"), cl::init(""),
    cl::cat(quantCategory));
static cl::opt<std::string> quantReport(
    "quant-report",
    cl::desc("With --quantize: write every quantized layer's error against "
             "float (SQNR, cosine) and the outputs' error to this JSON file"),
    cl::value_desc("file.json"), cl::init(""), cl::cat(quantCategory));
static cl::opt<std::string> keepFloat(
    "keep-float",
    cl::desc("With --quantize or --precision: keep these nodes in float "
             "(name,name,...), or auto:<error> to keep the most sensitive "
             "layers in float until every output's relative RMS error "
             "against float on --calibration-data is at most <error>"),
    cl::value_desc("names|auto:error"), cl::init(""), cl::cat(quantCategory));

static cl::opt<std::string> weights(
    "weights",
    cl::desc("Weight-only quantization of MatMul and Gemm weights: "
             "int4[:group=16|32|64|128|256][:sym|asym] (blocks along K, "
             "default 32, asymmetric) or int8[:per-channel|group=G][:sym|"
             "asym] (per channel: blocks of K up to 256); "
             "--quant-report writes each layer's error, and with "
             "--calibration-data the outputs' error against float"),
    cl::value_desc("int4|int8[:...]"), cl::init(""), cl::cat(quantCategory));
static cl::opt<std::string>
    weightsSkip("weights-skip",
                cl::desc("With --weights: leave these nodes' weights in float"),
                cl::value_desc("name,name"), cl::init(""),
                cl::cat(quantCategory));

static cl::opt<std::string> precision(
    "precision",
    cl::desc("Mixed precision: fp16 or bf16 stores weights and activations "
             "in 16 bits (float32 sums inside convolutions, matrix products, "
             "reductions and normalizations; graph inputs and outputs stay "
             "float32); --keep-float=name,...|auto:<error> keeps nodes in "
             "float32; "
             "--quant-report with --calibration-data writes the outputs' "
             "error against float32. fp32: the model as it is (default)"),
    cl::value_desc("fp32|fp16|bf16"), cl::init(""), cl::cat(quantCategory));

static cl::opt<std::string> prune(
    "prune",
    cl::desc("Prune Conv, Gemm and MatMul weights by magnitude (changes the "
             "model): N:M keeps N of every M consecutive weights along the "
             "reduction (2:4), block:<R>x<C>:<density> keeps that share of "
             "R-output by C-reduction blocks, magnitude:<density> that "
             "share of weights; --quant-report with --calibration-data "
             "writes the error against the unpruned model"),
    cl::value_desc("N:M|block:RxC:D|magnitude:D"), cl::init(""),
    cl::cat(quantCategory));
static cl::opt<std::string>
    pruneSkip("prune-skip",
              cl::desc("With --prune: leave these nodes' weights as they are"),
              cl::value_desc("name,name"), cl::init(""),
              cl::cat(quantCategory));

/// A comma-separated list of node names (--keep-float, --weights-skip,
/// --prune-skip).
static std::vector<std::string> nodeNames(StringRef list) {
  SmallVector<StringRef> names;
  list.split(names, ',', -1, /*KeepEmpty=*/false);
  std::vector<std::string> out;
  for (StringRef name : names)
    out.push_back(name.str());
  return out;
}

/// --quant-report and --calibration-data for a rewrite (`flag`) whose
/// report measures the outputs' error on the calibration data when given.
template <typename Options>
static std::string readReportOptions(const char *flag, Options &options) {
  options.reportPath = quantReport;
  options.calibrationDir = calibrationData;
  if (!calibrationData.empty() && quantReport.empty())
    return std::string(flag) +
           " uses --calibration-data only for --quant-report";
  return "";
}

/// Whether --precision asks for anything but the model's own float32.
static bool lowersPrecision() {
  return precision.getNumOccurrences() && precision != "fp32";
}

/// Checks --precision and its options; fills `options` when it lowers the
/// precision. Returns an error message or "".
static std::string readPrecisionOptions(dlc::PrecisionOptions &options) {
  if (!lowersPrecision())
    return "";
  if (quantize.getNumOccurrences())
    return "--precision=" + precision +
           " does not go together with --quantize yet: 16-bit activations "
           "around integer kernels are not supported";
  for (cl::Option *o : std::initializer_list<cl::Option *>{&calibrationMethod,
                                                           &activationScales})
    if (o->getNumOccurrences())
      return ("--" + o->ArgStr + " is for --quantize").str();
  if (splitInputFile)
    return "--precision does not work with --split-input-file";
  std::string error;
  std::optional<dlc::PrecisionOptions> parsed =
      dlc::parsePrecisionSpec(precision, error);
  if (!parsed)
    return error;
  options = *parsed;
  if (keepFloat.getNumOccurrences())
    if (std::string error = dlc::parseKeepFloat(keepFloat, options.keepFloat,
                                                options.autoKeepFloatBudget);
        !error.empty())
      return error;
  if (weights.getNumOccurrences() &&
      (options.autoKeepFloatBudget || quantReport.getNumOccurrences()))
    return "--precision with --weights: --quant-report and --keep-float=auto "
           "measure one rewrite; write the --weights model with --emit=onnx "
           "first and give it to --precision";
  if (options.autoKeepFloatBudget) {
    // The samples measure the error that the search keeps within budget.
    if (calibrationData.empty())
      return "--keep-float=auto with --precision needs --calibration-data "
             "(the samples its error is measured on)";
    options.calibrationDir = calibrationData;
    options.reportPath = quantReport;
    return "";
  }
  return readReportOptions("--precision", options);
}

/// Checks --weights and its options; fills `options` when --weights is
/// given. Returns an error message or "".
static std::string readWeightsOptions(dlc::WeightOnlyOptions &options) {
  if (!weights.getNumOccurrences()) {
    if (weightsSkip.getNumOccurrences())
      return "--weights-skip needs --weights";
    return "";
  }
  if (quantize.getNumOccurrences())
    return "--weights and --quantize do not go together: --quantize=int8 "
           "quantizes weights and activations, --weights only weights";
  // (--keep-float goes to --precision when both are given.)
  for (cl::Option *o : std::initializer_list<cl::Option *>{
           &calibrationMethod, &activationScales, &keepFloat})
    if (o->getNumOccurrences() && (o != &keepFloat || !lowersPrecision()))
      return ("--" + o->ArgStr +
              " is for --quantize; --weights takes "
              "--weights-skip")
          .str();
  if (splitInputFile)
    return "--weights does not work with --split-input-file";
  std::string error;
  std::optional<dlc::WeightOnlyOptions> parsed =
      dlc::parseWeightsSpec(weights, error);
  if (!parsed)
    return error;
  options = *parsed;
  if (std::string error = readReportOptions("--weights", options);
      !error.empty())
    return error;
  options.skip = nodeNames(weightsSkip);
  return "";
}

/// Checks --prune and its options; fills `options` when --prune is given.
/// Returns an error message or "".
static std::string readPruneOptions(dlc::PruneOptions &options) {
  if (!prune.getNumOccurrences()) {
    if (pruneSkip.getNumOccurrences())
      return "--prune-skip needs --prune";
    return "";
  }
  for (cl::Option *o :
       std::initializer_list<cl::Option *>{&quantize, &weights, &precision})
    if (o->getNumOccurrences() && (o != &precision || lowersPrecision()))
      return ("--prune does not go together with --" + o->ArgStr +
              " yet: prune first (--prune=... --emit=onnx -o pruned.onnx), "
              "then give the pruned model to --" +
              o->ArgStr)
          .str();
  for (cl::Option *o : std::initializer_list<cl::Option *>{
           &calibrationMethod, &activationScales, &keepFloat})
    if (o->getNumOccurrences())
      return ("--" + o->ArgStr + " is for --quantize, not --prune").str();
  if (splitInputFile)
    return "--prune does not work with --split-input-file";
  std::string error;
  std::optional<dlc::PruneOptions> parsed = dlc::parsePruneSpec(prune, error);
  if (!parsed)
    return error;
  options = *parsed;
  if (std::string error = readReportOptions("--prune", options); !error.empty())
    return error;
  options.skip = nodeNames(pruneSkip);
  return "";
}

/// Checks the quantization options together; fills `options` when
/// --quantize is given. Returns an error message or "".
static std::string readQuantizeOptions(dlc::QuantizeOptions &options) {
  bool quantizing = quantize.getNumOccurrences() > 0;
  if (weights.getNumOccurrences() || (lowersPrecision() && !quantizing) ||
      prune.getNumOccurrences())
    return "";
  if (!quantizing) {
    for (cl::Option *o : std::initializer_list<cl::Option *>{
             &calibrationData, &calibrationMethod, &activationScales,
             &quantReport, &keepFloat})
      if (o->getNumOccurrences())
        return ("--" + o->ArgStr + " needs --quantize=int8" +
                (o == &calibrationMethod || o == &activationScales
                     ? ""
                     : " or --precision=fp16|bf16"))
            .str();
    return "";
  }
  if (quantize != "int8")
    return "--quantize=" + quantize +
           ": unknown precision; dlc quantizes to int8";
  if (calibrationData.empty())
    return "--quantize=int8 needs --calibration-data=<dir> (one folder per "
           "sample, each with <input name>.npy for every graph input)";
  if (splitInputFile)
    return "--quantize does not work with --split-input-file";
  options.calibrationDir = calibrationData;
  options.reportPath = quantReport;
  std::string error;
  if (!calibrationMethod.empty()) {
    std::optional<dlc::CalibrationMethodSpec> method =
        dlc::parseCalibrationMethod(calibrationMethod, error);
    if (!method)
      return error;
    options.method = *method;
  }
  if (activationScales.getNumOccurrences()) {
    if (activationScales != "per-channel" && activationScales != "per-tensor")
      return "--activation-scales=" + activationScales +
             ": choose per-channel or per-tensor";
    options.perChannelActivations = activationScales == "per-channel";
  }
  if (keepFloat.getNumOccurrences())
    return dlc::parseKeepFloat(keepFloat, options.keepFloat,
                               options.autoKeepFloatBudget);
  return "";
}

/// Where the compile writes: stdout for "-"; for a file, a temporary next
/// to it, renamed over it only once complete, so that a compile that fails
/// or is killed (SIGPIPE when --stats is piped into head) never leaves a
/// truncated artifact under the name.
class OutputFile {
public:
  static std::unique_ptr<OutputFile> open(llvm::StringRef path,
                                          std::string &error) {
    auto out = std::unique_ptr<OutputFile>(new OutputFile());
    out->path = path.str();
    if (path == "-") {
      out->stdoutFile = mlir::openOutputFile(path, &error);
      return out->stdoutFile ? std::move(out) : nullptr;
    }
    if (llvm::sys::fs::is_directory(path)) {
      error = ("cannot open output file '" + path + "': Is a directory").str();
      return nullptr;
    }
    llvm::Expected<llvm::sys::fs::TempFile> temp =
        llvm::sys::fs::TempFile::create(path + "-%%%%%%.tmp");
    if (!temp) {
      error = ("cannot open output file '" + path +
               "': " + llvm::toString(temp.takeError()))
                  .str();
      return nullptr;
    }
    out->temp.emplace(std::move(*temp));
    out->stream.emplace(out->temp->FD, /*shouldClose=*/false);
    return out;
  }
  ~OutputFile() {
    if (temp)
      llvm::consumeError(temp->discard());
  }
  llvm::raw_ostream &os() {
    return stdoutFile ? stdoutFile->os()
                      : static_cast<llvm::raw_ostream &>(*stream);
  }
  /// Puts the output in place; returns false (with `error`) if it cannot.
  bool keep(std::string &error) {
    if (stdoutFile) {
      stdoutFile->keep();
      return true;
    }
    stream->flush();
    if (stream->has_error()) {
      error = "cannot write '" + path + "': " + stream->error().message();
      return false;
    }
    stream.reset();
    llvm::Error e = temp->keep(path);
    temp.reset();
    if (e) {
      error = "cannot write '" + path + "': " + llvm::toString(std::move(e));
      return false;
    }
    return true;
  }

private:
  OutputFile() = default;
  std::string path;
  std::unique_ptr<llvm::ToolOutputFile> stdoutFile;
  std::optional<llvm::sys::fs::TempFile> temp;
  std::optional<llvm::raw_fd_ostream> stream;
};

static std::string defaultOutput(llvm::StringRef input, dlc::EmitKind kind) {
  if (kind == dlc::EmitKind::MLIR || kind == dlc::EmitKind::Dispatches ||
      kind == dlc::EmitKind::PTX)
    return "-";
  llvm::SmallString<256> path(input);
  if (kind == dlc::EmitKind::QDQONNX) {
    // model.onnx -> model.qdq.onnx (model.fp16.onnx), never the input
    // itself.
    llvm::sys::path::replace_extension(path,
                                       prune.getNumOccurrences() ? "pruned.onnx"
                                       : lowersPrecision() ? precision + ".onnx"
                                                           : "qdq.onnx");
    return std::string(path);
  }
  llvm::sys::path::replace_extension(path, kind == dlc::EmitKind::SPIRV ? "spv"
                                           : kind == dlc::EmitKind::Object
                                               ? "o"
                                               : "dlcx");
  return std::string(path);
}

/// Keeps `output`: 0, or 1 after saying why it could not.
static int kept(OutputFile &output, llvm::raw_ostream &errs) {
  std::string error;
  if (output.keep(error))
    return 0;
  errs << "dlc-compile: error: " << error << "\n";
  return 1;
}

/// dlc's --stats; created once LLVM's own -stats has been renamed.
static cl::opt<bool> *printStats = nullptr;

/// Registers the passes and the options dlc-compile accepts besides its
/// own, once per process.
static void registerOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    dlc::registerAllPasses();
    registerAsmPrinterCLOptions();
    registerMLIRContextCLOptions();
    registerPassManagerCLOptions();
    registerDefaultTimingManagerCLOptions();
    // dlc's --stats reports kernels and memory; LLVM's pass statistics stay
    // available as --llvm-stats.
    llvm::initStatisticOptions();
    if (cl::Option *llvmStats = cl::getRegisteredOptions().lookup("stats"))
      llvmStats->setArgStr("llvm-stats");
    printStats = new cl::opt<bool>("stats",
                                   cl::desc("Print ONNX nodes in -> kernels "
                                            "out, arena bytes and compile "
                                            "time"),
                                   cl::init(false), cl::cat(category));
    cl::SetVersionPrinter([](llvm::raw_ostream &os) {
      os << "dlc-compile " << dlc::getVersionString() << " (LLVM/MLIR "
         << LLVM_VERSION_STRING << ")\n";
    });
    // --help lists dlc-compile's own options and MLIR's IR printing flags;
    // LLVM's hundreds of backend options are still accepted but not listed.
    static cl::OptionCategory irCategory("MLIR debugging options");
    auto &registered = cl::getRegisteredOptions();
    for (llvm::StringRef name :
         {"mlir-print-ir-after-all", "mlir-print-ir-before-all",
          "mlir-print-ir-after", "mlir-print-ir-before",
          "mlir-print-ir-after-failure", "mlir-timing", "mlir-pass-statistics",
          "mlir-disable-threading"})
      if (cl::Option *option = registered.lookup(name))
        option->addCategory(irCategory);
    cl::HideUnrelatedOptions({&category, &quantCategory, &irCategory});
  });
}

int dlc::runCompileCommand(llvm::ArrayRef<const char *> args,
                           llvm::raw_ostream &errs, bool stdoutTaken) {
  registerOnce();
  // Every call starts from the defaults: a process may compile many times.
  cl::ResetAllOptionOccurrences();
  if (!cl::ParseCommandLineOptions(
          static_cast<int>(args.size()), args.data(),
          "dlc-compile: compile an ONNX model into a dlc artifact\n\n"
          "  dlc-compile model.onnx --target=vulkan -o model.dlcx\n"
          "  dlc-compile model.onnx --emit=mlir --stage=legalize\n",
          &errs))
    return 1;

  llvm::Expected<dlc::TargetDescription> target =
      dlc::TargetDescription::parse(targetSpec, cpuModel);
  if (!target) {
    errs << "dlc-compile: error: " << llvm::toString(target.takeError())
         << "\n";
    return 1;
  }
  dlc::ONNXImportOptions importOptions;
  for (const std::string &spec : inputShapes) {
    std::string error = dlc::parseInputShapeSpec(spec, importOptions);
    if (!error.empty()) {
      errs << "dlc-compile: error: " << error << "\n";
      return 1;
    }
  }

  for (const std::string &spec : bindInputs) {
    auto [name, file] = llvm::StringRef(spec).split('=');
    if (name.empty() || file.empty()) {
      errs << "dlc-compile: error: --bind-input '" << spec
           << "' is not of the form name=file.pb\n";
      return 1;
    }
    importOptions.boundInputs[name] = file.str();
  }

  DialectRegistry registry;
  dlc::registerAllDialects(registry);
  MLIRContext context(registry);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context, errs);

  dlc::CompileOptions options;
  options.target = *target;
  options.emit = emitKind;
  options.stopAfter = emitKind == dlc::EmitKind::MLIR ? stopAfter.getValue()
                                                      : dlc::Stage::Codegen;
  options.printStats = *printStats;
  options.importOptions = std::move(importOptions);
  if (reportProfile.getNumOccurrences() && report.empty()) {
    errs << "dlc-compile: error: --report-profile needs --report\n";
    return 1;
  }
  if (!report.empty() && splitInputFile) {
    errs << "dlc-compile: error: --report describes one model; it does not "
            "work with --split-input-file\n";
    return 1;
  }
  options.reportPath = report;
  options.reportProfilePath = reportProfile;
  if (cubin.getNumOccurrences() && target->kind != dlc::TargetKind::CUDA) {
    errs << "dlc-compile: error: --cubin is for cuda targets, not '"
         << targetSpec << "'\n";
    return 1;
  }
  options.cudaCubin = cubin;
  if (symbolPrefix.getNumOccurrences()) {
    llvm::StringRef p = symbolPrefix;
    if (target->kind != dlc::TargetKind::CPU) {
      errs << "dlc-compile: error: --symbol-prefix is for cpu targets, not '"
           << targetSpec << "'\n";
      return 1;
    }
    if (p.empty() || llvm::isDigit(p.front()) ||
        !llvm::all_of(p, [](char c) { return llvm::isAlnum(c) || c == '_'; })) {
      errs << "dlc-compile: error: --symbol-prefix '" << p
           << "' is not a C identifier (letters, digits and _, not starting "
              "with a digit)\n";
      return 1;
    }
  }
  options.symbolPrefix = symbolPrefix;
  options.sparsity = sparsity;
  dlc::PruneOptions pruneOptions;
  if (std::string error = readPruneOptions(pruneOptions); !error.empty()) {
    errs << "dlc-compile: error: " << error << "\n";
    return 1;
  }
  dlc::QuantizeOptions quantizeOptions;
  if (std::string error = readQuantizeOptions(quantizeOptions);
      !error.empty()) {
    errs << "dlc-compile: error: " << error << "\n";
    return 1;
  }
  dlc::WeightOnlyOptions weightOptions;
  if (std::string error = readWeightsOptions(weightOptions); !error.empty()) {
    errs << "dlc-compile: error: " << error << "\n";
    return 1;
  }
  dlc::PrecisionOptions precisionOptions;
  if (std::string error = readPrecisionOptions(precisionOptions);
      !error.empty()) {
    errs << "dlc-compile: error: " << error << "\n";
    return 1;
  }
  bool weighting = weights.getNumOccurrences() > 0;
  bool pruning = prune.getNumOccurrences() > 0;
  bool quantizing = !quantizeOptions.calibrationDir.empty() || weighting ||
                    lowersPrecision() || pruning;
  // One of the model rewrites, if any, then what `emit` asks for.
  auto runQuantizer = [&](llvm::raw_ostream &os) {
    if (pruning)
      return dlc::pruneONNXFile(context, inputFile, options, pruneOptions, os);
    if (lowersPrecision())
      return dlc::lowerPrecisionONNXFile(context, inputFile, options,
                                         precisionOptions, os,
                                         weighting ? &weightOptions : nullptr);
    if (weighting)
      return dlc::quantizeWeightsONNXFile(context, inputFile, options,
                                          weightOptions, os);
    return dlc::quantizeONNXFile(context, inputFile, options, quantizeOptions,
                                 os);
  };
  if (!quantizing || emitKind != dlc::EmitKind::QDQONNX) {
    // Refused before the model is read, let alone compiled.
    if (std::string error = dlc::checkCompileOptions(options); !error.empty()) {
      errs << "dlc-compile: error: " << error << "\n";
      return 1;
    }
  }

  std::string outputPath =
      outputFile.empty() ? defaultOutput(inputFile, emitKind) : outputFile;
  if (stdoutTaken && outputPath == "-") {
    errs << "dlc-compile: error: the output would go to stdout, which "
            "--batch uses for its results; give -o a file\n";
    return 1;
  }
  std::string error;
  if (kernelTable.getNumOccurrences() && emitKind != dlc::EmitKind::Object) {
    errs << "dlc-compile: error: --kernel-table is for --emit=obj\n";
    return 1;
  }
  if (emitKind == dlc::EmitKind::Object) {
    options.kernelTablePath = kernelTable;
    if (kernelTable.empty() && outputPath != "-") {
      llvm::SmallString<256> table(outputPath);
      llvm::sys::path::replace_extension(table, "kernels.c");
      options.kernelTablePath = std::string(table);
    }
  }
  // -o DIR/ (or an existing directory) with --emit=spirv or --emit=ptx: one
  // file per kernel there.
  if ((emitKind == dlc::EmitKind::SPIRV || emitKind == dlc::EmitKind::PTX) &&
      (llvm::StringRef(outputPath).ends_with("/") ||
       llvm::sys::fs::is_directory(outputPath))) {
    if (splitInputFile) {
      errs << "dlc-compile: error: --split-input-file writes one "
              "stream; it does not take an output directory\n";
      return 1;
    }
    if (std::error_code ec = llvm::sys::fs::create_directories(outputPath)) {
      errs << "dlc-compile: error: cannot create '" << outputPath
           << "': " << ec.message() << "\n";
      return 1;
    }
    options.kernelDirectory = outputPath;
    if (quantizing)
      return failed(runQuantizer(llvm::nulls())) ? 1 : 0;
    return failed(
               dlc::compileONNXFile(context, inputFile, options, llvm::nulls()))
               ? 1
               : 0;
  }
  std::unique_ptr<OutputFile> output = OutputFile::open(outputPath, error);
  if (!output) {
    errs << "dlc-compile: error: " << error << "\n";
    return 1;
  }
  if (quantizing) {
    if (failed(runQuantizer(output->os())))
      return 1;
    return kept(*output, errs);
  }
  if (!splitInputFile) {
    if (failed(dlc::compileONNXFile(context, inputFile, options, output->os())))
      return 1;
    return kept(*output, errs);
  }
  // Each chunk is compiled on its own; a failing chunk does not stop the
  // others, but makes the exit status non-zero.
  std::unique_ptr<llvm::MemoryBuffer> file = openInputFile(inputFile, &error);
  if (!file) {
    errs << "dlc-compile: error: " << error << "\n";
    return 1;
  }
  llvm::SmallVector<llvm::StringRef> chunks;
  file->getBuffer().split(chunks, "# -----");
  bool ok = true;
  for (auto [i, chunk] : llvm::enumerate(chunks)) {
    std::string name = (inputFile + ":chunk" + llvm::Twine(i)).str();
    ok &= succeeded(dlc::compileONNXBuffer(context, chunk, name,
                                           /*isText=*/true, options,
                                           output->os()));
    if (i + 1 != chunks.size())
      output->os() << "// -----\n";
  }
  int status = kept(*output, errs);
  return ok ? status : 1;
}

int dlc::runCompileCommand(llvm::ArrayRef<const char *> args,
                           std::string &errors, bool stdoutTaken) {
  llvm::raw_string_ostream os(errors);
  return runCompileCommand(args, os, stdoutTaken);
}

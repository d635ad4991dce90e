//===- Calibration.cpp - calibration data and host runs of a model --------===//
//
// The quantizer observes the float model by running it: the model is
// compiled for this machine's CPU with the tensors to observe as extra
// outputs, loaded with dlc's C runtime from memory, and run on each sample
// of the calibration folder.
//
//===----------------------------------------------------------------------===//

#include "Calibration.h"

#include "dlc/Pipelines/CompileModel.h"

#include "dlc/cpu_driver.h"
#include "dlc/runtime.h"
#include "tensor_file.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include "onnx/onnx_pb.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <set>

using namespace mlir;
using namespace dlc;

static std::string shapeString(llvm::ArrayRef<int64_t> dims) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(dims))
    s += (i ? ", " : "") + std::to_string(d);
  return s + "]";
}

FailureOr<CalibrationSet>
CalibrationSet::open(MLIRContext &context, llvm::StringRef dir,
                     llvm::ArrayRef<std::string> inputNames) {
  Location loc = FileLineColLoc::get(&context, dir, 0, 0);
  CalibrationSet set;
  set.dir = dir.str();
  set.inputNames.assign(inputNames.begin(), inputNames.end());
  if (!llvm::sys::fs::is_directory(dir))
    return emitError(loc, "--calibration-data: '")
           << dir << "' is not a directory";
  std::error_code ec;
  std::vector<std::string> strays;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    if (llvm::sys::fs::is_directory(it->path()))
      set.samples.push_back(it->path());
    else
      strays.push_back(llvm::sys::path::filename(it->path()).str());
  }
  if (ec)
    return emitError(loc, "--calibration-data: cannot list '")
           << dir << "': " << ec.message();
  if (set.samples.empty()) {
    InFlightDiagnostic diag = emitError(loc, "--calibration-data: '")
                              << dir
                              << "' holds no sample folders; it must hold "
                                 "one folder per sample with one "
                                 "<input name>.npy per graph input";
    if (!strays.empty())
      diag << " (found the file '" << strays.front() << "' instead)";
    return diag;
  }
  llvm::sort(set.samples);
  llvm::StringSet<> wanted;
  for (const std::string &name : inputNames)
    wanted.insert(name + ".npy");
  std::string expected;
  for (auto [i, name] : llvm::enumerate(inputNames))
    expected += (i ? ", " : "") + name + ".npy";
  for (const std::string &sample : set.samples) {
    for (const std::string &name : inputNames) {
      llvm::SmallString<256> path(sample);
      llvm::sys::path::append(path, name + ".npy");
      if (!llvm::sys::fs::exists(path))
        return emitError(loc, "--calibration-data: sample '")
               << llvm::sys::path::filename(sample) << "' has no '" << name
               << ".npy' for graph input '" << name
               << "' (every sample folder holds " << expected << ")";
    }
    for (llvm::sys::fs::directory_iterator it(sample, ec), end;
         it != end && !ec; it.increment(ec)) {
      llvm::StringRef file = llvm::sys::path::filename(it->path());
      if (file.ends_with(".npy") && !wanted.contains(file))
        return emitError(loc, "--calibration-data: sample '")
               << llvm::sys::path::filename(sample) << "' holds '" << file
               << "', which is not a graph input of the model (its inputs: "
               << expected << ")";
    }
  }
  return set;
}

std::string CalibrationSet::file(size_t sample, size_t input) const {
  llvm::SmallString<256> path(samples[sample]);
  llvm::sys::path::append(path, inputNames[input] + ".npy");
  return std::string(path);
}

HostModel::~HostModel() {
  if (session)
    dlc_session_destroy(session);
  if (loaded)
    dlc_model_destroy(loaded);
  if (runtime)
    dlc_context_destroy(runtime);
}

FailureOr<std::unique_ptr<HostModel>>
HostModel::compile(MLIRContext &context, const onnx::ModelProto &model,
                   llvm::StringRef modelName,
                   const ONNXImportOptions &importOptions,
                   llvm::ArrayRef<std::string> extraOutputs) {
  Location loc = FileLineColLoc::get(&context, modelName, 0, 0);
  onnx::ModelProto copy = model;
  llvm::StringSet<> present;
  for (const onnx::ValueInfoProto &output : copy.graph().output())
    present.insert(output.name());
  for (const std::string &name : extraOutputs)
    if (present.insert(name).second)
      copy.mutable_graph()->add_output()->set_name(name);

  std::unique_ptr<HostModel> host(new HostModel);
  host->context = &context;
  llvm::Expected<TargetDescription> target = TargetDescription::parse("cpu");
  if (!target)
    return emitError(loc, "cannot describe this machine's CPU: ")
           << llvm::toString(target.takeError());
  CompileOptions options;
  options.target = *target;
  options.importOptions = importOptions;
  std::string artifact;
  {
    llvm::raw_string_ostream os(artifact);
    if (failed(compileONNXModel(context, copy, modelName, options, os)))
      return emitError(loc, "cannot compile the float model for "
                            "calibration on this machine's CPU (see above)");
  }
  // The runtime uses weights in place and wants them aligned.
  size_t size = artifact.size();
  host->storage.reset(new uint8_t[size + DLCX_ALIGNMENT]);
  uint8_t *aligned = host->storage.get();
  aligned +=
      (DLCX_ALIGNMENT - reinterpret_cast<uintptr_t>(aligned) % DLCX_ALIGNMENT) %
      DLCX_ALIGNMENT;
  std::memcpy(aligned, artifact.data(), size);
  std::string().swap(artifact);
  auto runtimeError = [&](llvm::StringRef what, const char *message) {
    return emitError(loc, "calibration: ") << what << ": " << message;
  };
  if (dlc_context_create(nullptr, &host->runtime) != DLC_OK)
    return emitError(loc, "calibration: cannot create a runtime context");
  if (dlc_model_load_memory(host->runtime, aligned, size, nullptr,
                            &host->loaded) != DLC_OK)
    return runtimeError("cannot load the calibration model",
                        dlc_context_message(host->runtime));
  dlc_session_options_t sessionOptions = {};
  sessionOptions.struct_size = sizeof(sessionOptions);
  if (dlc_session_create(host->loaded, &sessionOptions, &host->session) !=
      DLC_OK)
    return runtimeError("cannot create a session",
                        dlc_context_message(host->runtime));
  auto describe = [](const dlc_tensor_info_t &info) {
    Tensor t;
    t.name = info.name;
    t.dtype = info.dtype;
    t.dims.assign(info.dims, info.dims + info.rank);
    t.bytes = info.size_bytes;
    if (info.dtype == DLCX_DTYPE_F32) {
      t.data.resize(info.size_bytes / sizeof(float));
    } else {
      t.raw.resize(info.size_bytes);
      // 16-bit floats (a --precision model's values) are read widened.
      if (info.dtype == DLCX_DTYPE_F16 || info.dtype == DLCX_DTYPE_BF16)
        t.data.resize(info.size_bytes / 2);
    }
    return t;
  };
  for (uint32_t i = 0; i < dlc_model_input_count(host->loaded); ++i) {
    dlc_tensor_info_t info;
    dlc_model_input_info(host->loaded, i, &info);
    host->inputs.push_back(describe(info));
  }
  for (uint32_t i = 0; i < dlc_model_output_count(host->loaded); ++i) {
    dlc_tensor_info_t info;
    dlc_model_output_info(host->loaded, i, &info);
    host->outputs.push_back(describe(info));
  }
  return host;
}

LogicalResult HostModel::run(const CalibrationSet &set, size_t sample) {
  Location loc = FileLineColLoc::get(context, set.dir, 0, 0);
  for (auto [i, input] : llvm::enumerate(inputs)) {
    auto it = llvm::find(set.inputNames, input.name);
    if (it == set.inputNames.end())
      return emitError(loc, "calibration: no data for graph input '")
             << input.name << "'";
    std::string path = set.file(sample, it - set.inputNames.begin());
    dlc_host_tensor_t tensor = {};
    char error[512] = "";
    if (!dlc_tensor_read_file(path.c_str(), &tensor, error, sizeof(error)))
      return emitError(loc, "--calibration-data: ") << error;
    std::vector<int64_t> dims(tensor.dims, tensor.dims + tensor.rank);
    if (tensor.dtype != input.dtype || dims != input.dims) {
      InFlightDiagnostic diag =
          emitError(loc, "--calibration-data: '")
          << path << "' holds " << dlc_tensor_dtype_name(tensor.dtype) << " "
          << shapeString(dims) << ", but graph input '" << input.name << "' is "
          << dlc_tensor_dtype_name(input.dtype) << " "
          << shapeString(input.dims);
      dlc_tensor_free(&tensor);
      return diag;
    }
    if (input.dtype == DLCX_DTYPE_F32)
      std::memcpy(input.data.data(), tensor.data, input.bytes);
    else
      std::memcpy(input.raw.data(), tensor.data, input.bytes);
    dlc_tensor_free(&tensor);
    const void *data = input.dtype == DLCX_DTYPE_F32
                           ? static_cast<const void *>(input.data.data())
                           : input.raw.data();
    if (dlc_session_set_input(session, i, data, input.bytes) != DLC_OK)
      return emitError(loc, "calibration: ") << dlc_session_message(session);
  }
  if (dlc_session_run(session) != DLC_OK)
    return emitError(loc, "calibration: running sample '")
           << llvm::sys::path::filename(set.samples[sample])
           << "' failed: " << dlc_session_message(session);
  for (auto [i, output] : llvm::enumerate(outputs)) {
    void *data = output.dtype == DLCX_DTYPE_F32
                     ? static_cast<void *>(output.data.data())
                     : output.raw.data();
    if (dlc_session_get_output(session, i, data, output.bytes) != DLC_OK)
      return emitError(loc, "calibration: ") << dlc_session_message(session);
    if (output.dtype != DLCX_DTYPE_F32 && !output.data.empty()) {
      dlc_host_tensor_t view = {};
      view.dtype = output.dtype;
      view.count = output.data.size();
      view.data = output.raw.data();
      view.size = output.raw.size();
      for (size_t e = 0; e < output.data.size(); ++e)
        output.data[e] = static_cast<float>(dlc_tensor_get(&view, e));
    }
  }
  return success();
}

/// Index of every output of `host` by name.
llvm::StringMap<size_t> dlc::outputIndex(const HostModel &host) {
  llvm::StringMap<size_t> index;
  for (size_t i = 0; i < host.outputCount(); ++i)
    index[host.outputName(i)] = i;
  return index;
}

/// The float value of `name` in `host`'s last run: an output, or a graph
/// input.
/// Where `name` is in `host`: (true, output index), (false, input index),
/// or nothing.
static std::optional<std::pair<bool, size_t>>
locate(const HostModel &host, const llvm::StringMap<size_t> &outputs,
       llvm::StringRef name) {
  auto it = outputs.find(name);
  if (it != outputs.end())
    return std::pair(true, it->second);
  for (size_t i = 0; i < host.inputCount(); ++i)
    if (host.inputName(i) == name)
      return std::pair(false, i);
  return std::nullopt;
}

llvm::ArrayRef<float> dlc::valueOf(const HostModel &host,
                                   const llvm::StringMap<size_t> &outputs,
                                   llvm::StringRef name) {
  auto at = locate(host, outputs, name);
  if (!at)
    return {};
  return at->first ? host.output(at->second) : host.input(at->second);
}

llvm::ArrayRef<int64_t> dlc::dimsOf(const HostModel &host,
                                    const llvm::StringMap<size_t> &outputs,
                                    llvm::StringRef name) {
  auto at = locate(host, outputs, name);
  if (!at)
    return {};
  return at->first ? host.outputDims(at->second) : host.inputDims(at->second);
}

std::string dlc::externalDataDir(llvm::StringRef modelName,
                                 const ONNXImportOptions &importOptions) {
  if (!importOptions.externalDataDirectory.empty())
    return importOptions.externalDataDirectory;
  llvm::SmallString<256> dir(modelName);
  llvm::sys::path::remove_filename(dir);
  return dir.empty() ? "." : std::string(dir);
}

llvm::json::Array RewriteErrors::outputsJSON() const {
  llvm::json::Array outputs;
  for (auto [name, e] : llvm::zip(graphOutputs, graphErrors))
    outputs.push_back(outputErrorJSON(name, e));
  return outputs;
}

double RewriteErrors::endToEnd() const {
  double worst = 0;
  for (const ErrorStats &e : graphErrors)
    worst = std::max(worst, e.relativeRMS());
  return worst;
}

FailureOr<RewriteErrors> dlc::measureRewrite(
    MLIRContext &context, const onnx::ModelProto &original,
    const onnx::ModelProto &rewritten, llvm::StringRef modelName,
    const ONNXImportOptions &importOptions, llvm::StringRef calibrationDir,
    llvm::ArrayRef<std::string> tensors) {
  if (calibrationDir.empty())
    return RewriteErrors();
  FailureOr<CalibrationSet> set = CalibrationSet::open(
      context, calibrationDir, sampleInputs(original, importOptions));
  if (failed(set))
    return failure();
  FailureOr<std::unique_ptr<HostModel>> before =
      HostModel::compile(context, original, modelName, importOptions, tensors);
  if (failed(before))
    return failure();
  FailureOr<std::unique_ptr<HostModel>> after =
      HostModel::compile(context, rewritten, modelName, importOptions, tensors);
  if (failed(after))
    return failure();
  llvm::StringMap<size_t> bo = outputIndex(**before), ao = outputIndex(**after);
  RewriteErrors errors;
  errors.tensors.resize(tensors.size());
  for (const onnx::ValueInfoProto &output : original.graph().output())
    errors.graphOutputs.push_back(output.name());
  errors.graphErrors.resize(errors.graphOutputs.size());
  errors.samples = static_cast<int64_t>(set->samples.size());
  for (size_t s = 0; s < set->samples.size(); ++s) {
    if (failed((*before)->run(*set, s)) || failed((*after)->run(*set, s)))
      return failure();
    for (auto [i, name] : llvm::enumerate(tensors))
      errors.tensors[i].add(valueOf(**before, bo, name),
                            valueOf(**after, ao, name));
    for (auto [i, name] : llvm::enumerate(errors.graphOutputs))
      errors.graphErrors[i].add(valueOf(**before, bo, name),
                                valueOf(**after, ao, name));
  }
  return errors;
}

std::vector<std::string>
dlc::sampleInputs(const onnx::ModelProto &model,
                  const ONNXImportOptions &importOptions) {
  std::set<std::string> initializers;
  for (const onnx::TensorProto &t : model.graph().initializer())
    initializers.insert(t.name());
  std::vector<std::string> inputs;
  for (const onnx::ValueInfoProto &input : model.graph().input())
    if (!initializers.count(input.name()) &&
        !importOptions.boundInputs.count(input.name()))
      inputs.push_back(input.name());
  return inputs;
}

LogicalResult dlc::writeReport(Location loc, llvm::StringRef path,
                               llvm::json::Object report) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return emitError(loc, "--quant-report: cannot write '")
           << path << "': " << ec.message();
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(report))) << "\n";
  return success();
}

LogicalResult dlc::quantizeAndEmit(
    MLIRContext &context, llvm::StringRef path,
    const CompileOptions &compileOptions, llvm::raw_ostream &output,
    llvm::function_ref<LogicalResult(onnx::ModelProto &)> quantize) {
  onnx::ModelProto model;
  if (failed(readONNXFile(context, path, model)) || failed(quantize(model)))
    return failure();
  if (compileOptions.emit != EmitKind::QDQONNX)
    return compileONNXModel(context, model, path, compileOptions, output);
  std::string bytes;
  if (!model.SerializeToString(&bytes))
    return emitError(FileLineColLoc::get(&context, path, 0, 0),
                     "cannot serialize the quantized model (over 2 GB?)");
  output << bytes;
  return success();
}

FailureOr<KeepFloatSearch> dlc::searchKeepFloat(
    size_t n, double error,
    llvm::function_ref<FailureOr<std::pair<bool, double>>(size_t)> probe) {
  KeepFloatSearch result;
  result.fewestError = error;
  size_t fails = 0, holds = 0, probed = 0;
  auto tryKeeping = [&](size_t k) -> LogicalResult {
    FailureOr<std::pair<bool, double>> ok = probe(k);
    if (failed(ok))
      return failure();
    probed = k;
    if (ok->first) {
      holds = k;
    } else {
      fails = k;
      result.fewestError = ok->second;
    }
    return success();
  };
  for (size_t k = 1; !holds; k = std::min(2 * k, n - 1)) {
    if (k <= fails || k >= n)
      break;
    if (failed(tryKeeping(k)))
      return failure();
  }
  result.failed = fails;
  if (!holds)
    return result;
  while (holds - fails > 1)
    if (failed(tryKeeping((holds + fails) / 2)))
      return failure();
  if (probed != holds && failed(tryKeeping(holds)))
    return failure();
  result.kept = holds;
  result.failed = fails;
  return result;
}

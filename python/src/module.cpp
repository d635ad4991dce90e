//===- module.cpp - the dlc Python package's native part ------------------===//
//
// dlc._dlc: dlc-compile's command line as a function (the same options,
// checks and messages as the tool), and the C runtime's model and session
// over NumPy arrays. python/dlc/__init__.py builds the API on these.
//
// Built with exceptions and RTTI (nanobind needs them); LLVM's classes are
// not used here, so nothing needs type information LLVM was built without.
//
//===----------------------------------------------------------------------===//

#include "dlc/Driver/CompileCommand.h"

#include "dlc/artifact_format.h"
#include "dlc/runtime.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace nb = nanobind;

namespace {

/// LLVM's command-line options are process-wide: one compile at a time.
std::mutex compileMutex;

/// dlc-compile with `args` (without the program name): its exit status and
/// what it wrote as errors. Runs without the GIL.
std::tuple<int, std::string> compileCommand(std::vector<std::string> args) {
  std::vector<const char *> argv{"dlc-compile"};
  for (const std::string &a : args)
    argv.push_back(a.c_str());
  std::string errors;
  int status;
  {
    nb::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(compileMutex);
    status = dlc::runCompileCommand(argv, errors);
  }
  return {status, errors};
}

/// The artifact's dtype table: (number, NumPy's name, bits, kind).
std::vector<std::tuple<uint32_t, std::string, uint32_t, std::string>>
dtypeTable() {
  size_t count = 0;
  const dlcx_dtype_info_t *table = dlcx_dtype_table(&count);
  std::vector<std::tuple<uint32_t, std::string, uint32_t, std::string>> rows;
  for (size_t i = 0; i < count; ++i)
    rows.emplace_back(table[i].number, table[i].long_name, table[i].bits,
                      std::string(1, table[i].kind));
  return rows;
}

using TensorInfo = std::tuple<std::string, uint32_t, std::vector<int64_t>,
                              size_t, float, int32_t>;

TensorInfo toTuple(const dlc_tensor_info_t &info) {
  return {info.name,
          static_cast<uint32_t>(info.dtype),
          std::vector<int64_t>(info.dims, info.dims + info.rank),
          info.size_bytes,
          info.scale,
          info.zero_point};
}

/// A loaded artifact and one session on it: what dlc.Session wraps.
class Session {
public:
  using Array = nb::ndarray<nb::c_contig, nb::device::cpu>;

  Session(nb::bytes artifact, uint32_t threads, uint32_t device, bool profile) {
    size = artifact.size();
    // The runtime uses the artifact in place; it wants it aligned.
    size_t rounded =
        (size + DLCX_ALIGNMENT - 1) / DLCX_ALIGNMENT * DLCX_ALIGNMENT;
    data = std::aligned_alloc(DLCX_ALIGNMENT, rounded ? rounded : 1);
    if (!data)
      throw std::bad_alloc();
    std::memcpy(data, artifact.c_str(), size);
    check(dlc_context_create(nullptr, &context), "creating the context");
    dlc_model_options_t modelOptions{};
    modelOptions.struct_size = sizeof(modelOptions);
    modelOptions.device_index = device;
    check(dlc_model_load_memory(context, data, size, &modelOptions, &model),
          "loading the artifact");
    dlc_session_options_t sessionOptions{};
    sessionOptions.struct_size = sizeof(sessionOptions);
    sessionOptions.thread_count = threads;
    sessionOptions.enable_profiling = profile;
    dlc_status_t status = dlc_session_create(model, &sessionOptions, &session);
    if (status != DLC_OK)
      fail(status, "creating the session", dlc_context_message(context));
  }
  ~Session() {
    dlc_session_destroy(session);
    dlc_model_destroy(model);
    dlc_context_destroy(context);
    std::free(data);
  }
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;

  std::vector<TensorInfo> inputs() const {
    return describe(dlc_model_input_count(model), dlc_model_input_info);
  }
  std::vector<TensorInfo> outputs() const {
    return describe(dlc_model_output_count(model), dlc_model_output_info);
  }
  std::string driver() const { return dlc_model_driver_name(model); }
  uint32_t kernelCount() const { return dlc_model_kernel_count(model); }
  uint64_t arenaSize() const { return dlc_model_arena_size(model); }

  /// Copies `inputs` in, runs, and copies the outputs into `outputs`
  /// (arrays the caller made with the outputs' sizes); the GIL is released
  /// while the model runs.
  void run(const std::vector<Array> &inputs,
           const std::vector<Array> &outputs) {
    nb::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(busy);
    setInputs(inputs);
    runOnce();
    getOutputs(outputs);
  }

  /// `count` runs after `warmup` more on the inputs given: the duration of
  /// each timed run in nanoseconds.
  std::vector<int64_t> bench(const std::vector<Array> &inputs, uint32_t count,
                             uint32_t warmup) {
    std::vector<int64_t> times;
    times.reserve(count);
    nb::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(busy);
    // Every run gets its inputs (a run may reuse their memory), outside the
    // timed part.
    for (uint32_t i = 0; i < warmup; ++i) {
      setInputs(inputs);
      runOnce();
    }
    for (uint32_t i = 0; i < count; ++i) {
      setInputs(inputs);
      auto start = std::chrono::steady_clock::now();
      runOnce();
      times.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now() - start)
                          .count());
    }
    return times;
  }

  /// The last run's per-launch timings (with profile=True).
  std::vector<std::tuple<std::string, uint64_t, uint64_t>> timings() {
    std::lock_guard<std::mutex> lock(busy);
    const dlc_kernel_timing_t *t = nullptr;
    uint32_t count = 0;
    dlc_status_t status = dlc_session_timings(session, &t, &count);
    if (status != DLC_OK)
      fail(status, "reading the timings", dlc_session_message(session));
    std::vector<std::tuple<std::string, uint64_t, uint64_t>> result;
    for (uint32_t i = 0; i < count; ++i)
      result.emplace_back(t[i].kernel_name, t[i].start_ns, t[i].duration_ns);
    return result;
  }

private:
  std::vector<TensorInfo>
  describe(uint32_t count, dlc_status_t (*info)(const dlc_model_t *, uint32_t,
                                                dlc_tensor_info_t *)) const {
    std::vector<TensorInfo> result;
    for (uint32_t i = 0; i < count; ++i) {
      dlc_tensor_info_t t;
      info(model, i, &t);
      result.push_back(toTuple(t));
    }
    return result;
  }
  [[noreturn]] static void fail(dlc_status_t status, const char *what,
                                const char *message) {
    throw std::runtime_error(std::string("dlc: ") + what + ": " +
                             dlc_status_name(status) + ": " + message);
  }
  void check(dlc_status_t status, const char *what) const {
    if (status != DLC_OK)
      fail(status, what, context ? dlc_context_message(context) : "");
  }
  void setInputs(const std::vector<Array> &inputs) {
    if (inputs.size() != dlc_model_input_count(model))
      throw std::invalid_argument(
          "dlc: the model has " + std::to_string(dlc_model_input_count(model)) +
          " inputs, got " + std::to_string(inputs.size()));
    for (uint32_t i = 0; i < inputs.size(); ++i) {
      dlc_status_t status = dlc_session_set_input(session, i, inputs[i].data(),
                                                  inputs[i].nbytes());
      if (status != DLC_OK)
        fail(status, "setting an input", dlc_session_message(session));
    }
  }
  void runOnce() {
    dlc_status_t status = dlc_session_run(session);
    if (status != DLC_OK)
      fail(status, "running the model", dlc_session_message(session));
  }
  void getOutputs(const std::vector<Array> &outputs) {
    if (outputs.size() != dlc_model_output_count(model))
      throw std::invalid_argument("dlc: wrong number of output arrays");
    for (uint32_t i = 0; i < outputs.size(); ++i) {
      dlc_status_t status = dlc_session_get_output(
          session, i, outputs[i].data(), outputs[i].nbytes());
      if (status != DLC_OK)
        fail(status, "reading an output", dlc_session_message(session));
    }
  }

  /// A session runs one call at a time: Python threads that share it (the
  /// GIL is released while it runs) take turns.
  std::mutex busy;
  void *data = nullptr;
  size_t size = 0;
  dlc_context_t *context = nullptr;
  dlc_model_t *model = nullptr;
  dlc_session_t *session = nullptr;
};

} // namespace

NB_MODULE(_dlc, m) {
  m.doc() = "dlc's native part: the compiler driver and the C runtime";
  m.def("compile_command", &compileCommand, nb::arg("args"),
        "Runs dlc-compile with `args`; returns (exit status, errors).");
  m.def("dtype_table", &dtypeTable,
        "The artifact's element types: (number, name, bits, kind).");
  nb::class_<Session>(m, "Session")
      .def(nb::init<nb::bytes, uint32_t, uint32_t, bool>(), nb::arg("artifact"),
           nb::arg("threads"), nb::arg("device"), nb::arg("profile"))
      .def("inputs", &Session::inputs)
      .def("outputs", &Session::outputs)
      .def("driver", &Session::driver)
      .def("kernel_count", &Session::kernelCount)
      .def("arena_size", &Session::arenaSize)
      .def("run", &Session::run, nb::arg("inputs"), nb::arg("outputs"))
      .def("bench", &Session::bench, nb::arg("inputs"), nb::arg("count"),
           nb::arg("warmup"))
      .def("timings", &Session::timings);
}

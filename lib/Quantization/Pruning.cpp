//===- Pruning.cpp - dlc-compile --prune
//-----------------------------------===//
//
// Magnitude pruning at compile time, for users who do not have a sparse
// model: the weights of every Conv, Gemm and MatMul with a constant float32
// weight get zeros in the pattern asked for, and the rest of the compile
// (or ONNX Runtime, with --emit=onnx) takes the pruned model as it is. An
// explicit opt-in: it changes the model's numbers, which the report (with
// --quant-report and --calibration-data) measures against the original.
//
// Each weight is seen as [outputs, reduction] (Conv: output channels by
// input channels x kernel taps; Gemm and MatMul: N by K), as
// `dlc-compile --stats` analyzes it, whatever its layout in the file:
//   N:M              in each output's reduction, every group of M
//                    consecutive elements keeps its N largest magnitudes
//                    (a last group of fewer than M keeps at most N);
//   block:RxC:D      blocks of R outputs by C reduction elements (edge
//                    blocks smaller) keep the share D of blocks with the
//                    largest sum of squares, per layer;
//   magnitude:D      the share D of elements with the largest magnitudes,
//                    per layer.
// Ties go to the earlier element or block, so a pruned model is the same
// on every run.
//
//===----------------------------------------------------------------------===//

#include "Calibration.h"
#include "ModelGraph.h"

#include "dlc/Quantization/Quantize.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"

#include "onnx/onnx_pb.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

using namespace mlir;
using namespace dlc;

std::optional<PruneOptions> dlc::parsePruneSpec(llvm::StringRef spec,
                                                std::string &error) {
  PruneOptions options;
  options.spelling = spec.str();
  auto fail = [&](const llvm::Twine &why) -> std::optional<PruneOptions> {
    error = ("--prune=" + spec + ": " + why).str();
    return std::nullopt;
  };
  // A density in (0, 1]: the share of weights (or blocks) kept.
  auto density = [&](StringRef text) {
    double d = 0;
    if (text.getAsDouble(d) || !(d > 0 && d <= 1))
      return -1.0;
    return d;
  };
  SmallVector<StringRef> parts;
  spec.split(parts, ':');
  if (parts[0] == "magnitude") {
    if (parts.size() != 2 || (options.density = density(parts[1])) < 0)
      return fail("expected magnitude:<density>, the share of weights kept "
                  "in (0, 1]");
    options.kind = PruneOptions::Magnitude;
    return options;
  }
  if (parts[0] == "block") {
    StringRef r, c;
    std::tie(r, c) = parts.size() == 3 ? parts[1].split('x')
                                       : std::pair<StringRef, StringRef>();
    if (parts.size() != 3 || r.getAsInteger(10, options.rows) ||
        c.getAsInteger(10, options.cols) || options.rows < 1 ||
        options.cols < 1 || options.rows * options.cols < 2 ||
        options.rows > 64 || options.cols > 64 ||
        (options.density = density(parts[2])) < 0)
      return fail("expected block:<R>x<C>:<density>, blocks of R outputs by "
                  "C reduction elements (1 to 64 each, not 1x1) and the "
                  "share of blocks kept in (0, 1]");
    options.kind = PruneOptions::Block;
    return options;
  }
  if (parts.size() == 2 && !parts[0].getAsInteger(10, options.n) &&
      !parts[1].getAsInteger(10, options.m)) {
    if (options.n < 1 || options.m < 2 || options.n >= options.m ||
        options.m > 64)
      return fail("N:M keeps N of every M weights: 1 <= N < M <= 64");
    options.kind = PruneOptions::NM;
    return options;
  }
  return fail("expected N:M (2:4), block:<R>x<C>:<density> or "
              "magnitude:<density>");
}

namespace {

/// A Conv, Gemm or MatMul whose constant float32 weight is pruned.
struct PruneLayer {
  int node = -1;
  std::string name, opType, weight, output;
  int64_t outputs = 0, reduction = 0;
  /// Where element (row, col) of the [outputs, reduction] view is in the
  /// weight's data: row * rowStride + col * colStride.
  int64_t rowStride = 0, colStride = 0;
};

std::vector<PruneLayer> findPruneLayers(const onnx::ModelProto &model,
                                        const std::vector<std::string> &skip,
                                        std::vector<std::string> &unmatched) {
  const onnx::GraphProto &graph = model.graph();
  std::map<std::string, const onnx::TensorProto *> constants =
      constantTensors(graph);
  std::vector<PruneLayer> layers;
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto &node = graph.node(i);
    std::string name = nodeName(node);
    auto skipped = llvm::find(skip, name);
    if (skipped != skip.end()) {
      llvm::erase(unmatched, name);
      continue;
    }
    StringRef op = node.op_type();
    if (!isDefaultDomain(node) || node.input_size() < 2 ||
        node.output_size() < 1 ||
        (op != "Conv" && op != "Gemm" && op != "MatMul"))
      continue;
    auto it = constants.find(node.input(1));
    if (it == constants.end() ||
        it->second->data_type() != onnx::TensorProto::FLOAT)
      continue;
    const onnx::TensorProto &w = *it->second;
    PruneLayer l;
    l.node = i;
    l.name = name;
    l.opType = op.str();
    l.weight = node.input(1);
    l.output = node.output(0);
    if (op == "Conv") {
      // [O, I/group, k...]: a row per output channel.
      if (w.dims_size() < 3)
        continue;
      l.outputs = w.dims(0);
      l.reduction = elementCount(w) / std::max<int64_t>(l.outputs, 1);
      l.rowStride = l.reduction;
      l.colStride = 1;
    } else {
      // [K, N], or [N, K] for Gemm with transB.
      if (w.dims_size() != 2)
        continue;
      bool transposed = op == "Gemm" && intAttr(node, "transB", 0) != 0;
      int64_t k = transposed ? w.dims(1) : w.dims(0);
      int64_t n = transposed ? w.dims(0) : w.dims(1);
      l.outputs = n;
      l.reduction = k;
      l.rowStride = transposed ? k : 1;
      l.colStride = transposed ? 1 : n;
    }
    if (l.outputs > 0 && l.reduction > 0)
      layers.push_back(std::move(l));
  }
  return layers;
}

/// The elements `options` keeps of `w` seen through `l`, as a mask over
/// w's data.
std::vector<uint8_t> keepMask(const std::vector<float> &w, const PruneLayer &l,
                              const PruneOptions &options) {
  int64_t rows = l.outputs, cols = l.reduction;
  std::vector<uint8_t> keep(w.size(), 0);
  auto at = [&](int64_t r, int64_t c) {
    return r * l.rowStride + c * l.colStride;
  };
  // The `count` largest of `scores` (ties: the earlier index).
  auto largest = [](const std::vector<double> &scores, int64_t count) {
    std::vector<int64_t> order(scores.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return scores[a] > scores[b] || (scores[a] == scores[b] && a < b);
    });
    order.resize(std::min<int64_t>(count, static_cast<int64_t>(order.size())));
    return order;
  };
  switch (options.kind) {
  case PruneOptions::NM:
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c0 = 0; c0 < cols; c0 += options.m) {
        int64_t size = std::min(options.m, cols - c0);
        std::vector<double> scores(size);
        for (int64_t j = 0; j < size; ++j)
          scores[j] = std::fabs(w[at(r, c0 + j)]);
        for (int64_t j : largest(scores, options.n))
          keep[at(r, c0 + j)] = 1;
      }
    break;
  case PruneOptions::Block: {
    int64_t blockRows = (rows + options.rows - 1) / options.rows;
    int64_t blockCols = (cols + options.cols - 1) / options.cols;
    std::vector<double> scores(blockRows * blockCols, 0.0);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        double v = w[at(r, c)];
        scores[(r / options.rows) * blockCols + c / options.cols] += v * v;
      }
    int64_t kept = static_cast<int64_t>(
        std::ceil(options.density * static_cast<double>(scores.size())));
    for (int64_t b : largest(scores, kept)) {
      int64_t br = b / blockCols, bc = b % blockCols;
      for (int64_t r = br * options.rows;
           r < std::min(rows, (br + 1) * options.rows); ++r)
        for (int64_t c = bc * options.cols;
             c < std::min(cols, (bc + 1) * options.cols); ++c)
          keep[at(r, c)] = 1;
    }
    break;
  }
  case PruneOptions::Magnitude: {
    std::vector<double> scores(w.size());
    for (size_t i = 0; i < w.size(); ++i)
      scores[i] = std::fabs(w[i]);
    int64_t kept = static_cast<int64_t>(
        std::ceil(options.density * static_cast<double>(w.size())));
    for (int64_t i : largest(scores, kept))
      keep[i] = 1;
    break;
  }
  }
  return keep;
}

} // namespace

LogicalResult dlc::pruneWeights(MLIRContext &context, onnx::ModelProto &model,
                                llvm::StringRef modelName,
                                const ONNXImportOptions &importOptions,
                                const PruneOptions &options) {
  Location loc = FileLineColLoc::get(&context, modelName, 0, 0);
  std::string baseDir = externalDataDir(modelName, importOptions);
  std::vector<std::string> unmatched = options.skip;
  std::vector<PruneLayer> layers =
      findPruneLayers(model, options.skip, unmatched);
  if (!unmatched.empty())
    return emitError(loc, "--prune-skip: the model has no node named '")
           << unmatched.front() << "'";
  if (layers.empty())
    return emitError(loc, "--prune: nothing to prune: no Conv, Gemm or "
                          "MatMul with a constant float32 weight");

  const onnx::ModelProto original = model;
  onnx::GraphProto &graph = *model.mutable_graph();
  std::map<std::string, int> readBefore;
  collectReads(graph, readBefore);
  std::set<std::string> used = usedNames(graph);
  std::map<std::string, const onnx::TensorProto *> constants =
      constantTensors(original.graph());
  // A weight several layers read is pruned once (as the first reader sees
  // it) and shared again.
  std::map<std::string, std::string> prunedName;
  struct Pruned {
    const PruneLayer *layer = nullptr;
    int64_t elements = 0, zerosBefore = 0, zerosAfter = 0;
    ErrorStats weightError;
  };
  std::vector<Pruned> pruned;
  for (const PruneLayer &l : layers) {
    onnx::NodeProto &node = *graph.mutable_node(l.node);
    if (auto it = prunedName.find(l.weight); it != prunedName.end()) {
      node.set_input(1, it->second);
      continue;
    }
    std::string error;
    std::optional<std::vector<float>> w =
        readFloats(*constants.at(l.weight), baseDir, error);
    if (!w)
      return emitError(loc, "--prune: the weight '")
             << l.weight << "' of node '" << l.name << "' " << error;
    std::vector<uint8_t> keep = keepMask(*w, l, options);
    std::vector<float> out(*w);
    Pruned p;
    p.layer = &l;
    p.elements = static_cast<int64_t>(out.size());
    for (size_t i = 0; i < out.size(); ++i) {
      p.zerosBefore += (*w)[i] == 0.0f;
      if (!keep[i])
        out[i] = 0.0f;
      p.zerosAfter += out[i] == 0.0f;
    }
    p.weightError.add(*w, out);
    const onnx::TensorProto &t = *constants.at(l.weight);
    SmallVector<int64_t> dims(t.dims().begin(), t.dims().end());
    std::string name = freshName(l.weight + "_pruned", used);
    *graph.add_initializer() = rawTensor(name, onnx::TensorProto::FLOAT, dims,
                                         out.data(), out.size() * 4);
    node.set_input(1, name);
    prunedName[l.weight] = name;
    pruned.push_back(std::move(p));
  }
  dropUnreadConstants(graph, readBefore);

  int64_t elements = 0, zeros = 0;
  for (const Pruned &p : pruned) {
    elements += p.elements;
    zeros += p.zerosAfter;
  }
  llvm::errs() << "dlc-compile: note: --prune=" << options.spelling
               << " pruned " << pruned.size() << " weights: "
               << llvm::format("%.1f",
                               100.0 * zeros / std::max<int64_t>(elements, 1))
               << "% of " << elements << " elements are zero\n";
  if (options.reportPath.empty())
    return success();

  // The report: each layer's zeros and weight error; with calibration data
  // also its output's and every graph output's error against the original.
  std::vector<std::string> outputs;
  for (const Pruned &p : pruned)
    outputs.push_back(p.layer->output);
  FailureOr<RewriteErrors> measured =
      measureRewrite(context, original, model, modelName, importOptions,
                     options.calibrationDir, outputs);
  if (failed(measured))
    return failure();
  const RewriteErrors &errors = *measured;
  int64_t samples = errors.samples;
  llvm::json::Array layerArray;
  for (auto [i, entry] : llvm::enumerate(pruned)) {
    const Pruned &p = entry;
    auto share = [&](int64_t z) {
      return static_cast<double>(p.elements - z) / p.elements;
    };
    llvm::json::Object o{
        {"name", p.layer->name},
        {"op", p.layer->opType},
        {"weight", p.layer->weight},
        {"output", p.layer->output},
        {"outputs", p.layer->outputs},
        {"reduction", p.layer->reduction},
        {"density_before", share(p.zerosBefore)},
        {"density_after", share(p.zerosAfter)},
        {"weight_sqnr_db", jsonNumber(p.weightError.sqnr())},
    };
    if (samples) {
      o["sqnr_db"] = jsonNumber(errors.tensors[i].sqnr());
      o["cosine"] = jsonNumber(errors.tensors[i].cosine());
    }
    layerArray.push_back(std::move(o));
  }
  llvm::json::Object report{
      {"model", modelName.str()},
      {"prune", options.spelling},
      {"pruned_layers", static_cast<int64_t>(pruned.size())},
      {"weight_elements", elements},
      {"zero_elements", zeros},
      {"calibration_samples", samples},
      {"layers", std::move(layerArray)},
  };
  if (samples) {
    report["end_to_end_error"] = jsonNumber(errors.endToEnd());
    report["outputs"] = errors.outputsJSON();
  }
  return writeReport(loc, options.reportPath, std::move(report));
}

LogicalResult dlc::pruneONNXFile(MLIRContext &context, llvm::StringRef path,
                                 const CompileOptions &compileOptions,
                                 const PruneOptions &options,
                                 llvm::raw_ostream &output) {
  return quantizeAndEmit(
      context, path, compileOptions, output, [&](onnx::ModelProto &model) {
        return pruneWeights(context, model, path, compileOptions.importOptions,
                            options);
      });
}

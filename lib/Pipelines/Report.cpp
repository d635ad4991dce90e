//===- Report.cpp - dlc-compile --report: one HTML page -------------------===//
//
// Plain HTML and inline SVG with a few lines of script for highlighting:
// the page opens from disk in any browser, with nothing fetched.
//
//===----------------------------------------------------------------------===//

#include "dlc/Pipelines/Report.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>

using namespace mlir;

namespace {

/// Text for HTML element content and attribute values.
std::string escape(llvm::StringRef text) {
  std::string out;
  for (char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&#39;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

/// Kernel `i`'s colour: hues spread by the golden angle, so that
/// neighbours differ.
std::string colour(size_t i) {
  return ("hsl(" + llvm::Twine(static_cast<int>((i * 137.508)) % 360) +
          ", 65%, 78%)")
      .str();
}

std::string bytes(uint64_t b) {
  if (b < 1024)
    return std::to_string(b) + " B";
  if (b < 1024 * 1024)
    return llvm::formatv("{0:f1} KiB", b / 1024.0).str();
  return llvm::formatv("{0:f2} MiB", b / (1024.0 * 1024.0)).str();
}

/// Microseconds per kernel name in a dlc-run --profile trace (an array of
/// Chrome trace events, one per launch).
FailureOr<llvm::StringMap<double>> readProfile(Location loc,
                                               llvm::StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path);
  if (!file)
    return emitError(loc, "--report-profile: cannot read '")
           << path << "': " << file.getError().message();
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*file)->getBuffer());
  if (!json)
    return emitError(loc, "--report-profile: '")
           << path << "' is not JSON: " << llvm::toString(json.takeError());
  const llvm::json::Array *events = json->getAsArray();
  if (!events)
    return emitError(loc, "--report-profile: '")
           << path << "' is not a trace (an array of events) that dlc-run "
           << "--profile writes";
  llvm::StringMap<double> times;
  for (const llvm::json::Value &e : *events) {
    const llvm::json::Object *event = e.getAsObject();
    std::optional<llvm::StringRef> name =
        event ? event->getString("name") : std::nullopt;
    std::optional<double> dur = event ? event->getNumber("dur") : std::nullopt;
    if (!name || !dur)
      return emitError(loc, "--report-profile: '")
             << path << "': an event without a name and a duration";
    times[*name] += *dur;
  }
  return times;
}

void writeSummary(llvm::raw_ostream &os, const dlc::CompileReport &r,
                  const llvm::StringMap<double> *profile) {
  const dlc::ArtifactStats &s = r.stats;
  auto row = [&](llvm::StringRef key, const std::string &value) {
    os << "<tr><th>" << key << "</th><td>" << escape(value) << "</td></tr>\n";
  };
  os << "<table class=\"summary\">\n";
  row("model", r.model);
  row("target", r.target);
  row("ONNX nodes", std::to_string(s.onnxNodes));
  row("kernels", std::to_string(s.kernels) + " (" + std::to_string(s.launches) +
                     " launches)");
  double ratio =
      s.plan.lowerBound ? double(s.plan.arenaSize) / s.plan.lowerBound : 1.0;
  row("arena", bytes(s.plan.arenaSize) + " (lower bound " +
                   bytes(s.plan.lowerBound) + ", " +
                   llvm::formatv("{0:f3}", ratio).str() + "x; every buffer " +
                   "in its own place: " + bytes(s.plan.noReuseSize) + ")");
  row("constants", bytes(s.constantBytes));
  row("code", bytes(s.codeBytes));
  row("artifact", bytes(s.fileBytes));
  row("compile time", llvm::formatv("{0:f2} s", r.seconds).str());
  if (profile) {
    double total = 0;
    for (const auto &entry : *profile)
      total += entry.getValue();
    row("measured", llvm::formatv("{0:f1} us in kernels", total).str());
  }
  os << "</table>\n";
}

void writeNodes(llvm::raw_ostream &os, const dlc::CompileReport &r) {
  // The nodes in the order their kernels run, each in its kernel's colour.
  llvm::StringSet<> seen;
  os << "<h2>ONNX nodes by kernel</h2>\n<p>In the order their kernels "
        "run, each in its kernel's colour; hover a node or a kernel to see "
        "what was fused with it.";
  std::string chips;
  llvm::raw_string_ostream cs(chips);
  for (size_t k = 0; k < r.kernels.size(); ++k)
    for (const std::string &node : r.kernels[k].onnxNodes) {
      if (!seen.insert(node).second)
        continue;
      cs << "<span class=\"node\" data-kernel=\"" << k
         << "\" style=\"background:" << colour(k) << "\" title=\""
         << escape(node) << " in " << escape(r.kernels[k].name) << "\">"
         << escape(node) << "</span>";
    }
  int64_t without = r.stats.onnxNodes - static_cast<int64_t>(seen.size());
  if (without > 0)
    os << " " << without << " of the " << r.stats.onnxNodes
       << " nodes are in no kernel: folded into constants, views of "
          "memory, or no work at run time.";
  os << "</p>\n<div class=\"nodes\">" << chips << "</div>\n";
}

/// The graph as layers: each node one row below the lowest node it reads
/// from (graph inputs and initializers are in no row), in the file's order
/// within a row; edges from producer to consumer. Each node in the colour
/// of the first kernel that computes it, grey when none does.
void writeGraph(llvm::raw_ostream &os, const dlc::CompileReport &r) {
  // Constant nodes are values, as initializers are: not drawn (a detector
  // has a hundred, which would all be sources in the first row).
  std::vector<dlc::ONNXGraphNode> nodes;
  for (const dlc::ONNXGraphNode &n : r.graph)
    if (n.opType != "Constant")
      nodes.push_back(n);
  size_t constants = r.graph.size() - nodes.size();
  if (nodes.empty())
    return;
  llvm::StringMap<size_t> kernelOf;
  for (size_t k = 0; k < r.kernels.size(); ++k)
    for (const std::string &node : r.kernels[k].onnxNodes)
      kernelOf.try_emplace(node, k);
  // Rows: one pass when the nodes are in topological order, as ONNX asks
  // (and the import needs); more until no row grows otherwise, at most as
  // many as there are nodes.
  llvm::StringMap<size_t> producer;
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const std::string &out : nodes[i].outputs)
      if (!out.empty())
        producer[out] = i;
  std::vector<size_t> row(nodes.size(), 0);
  for (size_t pass = 0; pass < nodes.size(); ++pass) {
    bool moved = false;
    for (size_t i = 0; i < nodes.size(); ++i)
      for (const std::string &in : nodes[i].inputs) {
        auto it = producer.find(in);
        if (it != producer.end() && it->second != i &&
            row[it->second] + 1 > row[i]) {
          row[i] = row[it->second] + 1;
          moved = true;
        }
      }
    if (!moved)
      break;
  }
  size_t rows = 0;
  for (size_t v : row)
    rows = std::max(rows, v + 1);
  std::vector<size_t> column(nodes.size()), width(rows, 0);
  for (size_t i = 0; i < nodes.size(); ++i)
    column[i] = width[row[i]]++;
  size_t columns = *std::max_element(width.begin(), width.end());
  const double boxW = 120, boxH = 22, gapX = 16, gapY = 18, margin = 8;
  auto x = [&](size_t i) {
    // Each row centred.
    double rowWidth = width[row[i]] * (boxW + gapX);
    double full = columns * (boxW + gapX);
    return margin + (full - rowWidth) / 2 + column[i] * (boxW + gapX);
  };
  auto y = [&](size_t i) { return margin + row[i] * (boxH + gapY); };
  auto num = [](double v) { return llvm::formatv("{0:f1}", v).str(); };
  os << "<h2>ONNX graph</h2>\n<p>" << nodes.size() << " nodes in " << rows
     << " rows, each below the nodes it reads; coloured by kernel (grey: in "
        "no kernel). Hover a node to see the rest of its kernel.";
  if (constants)
    os << " Constant nodes (" << constants
       << ") are values, as initializers are, and not drawn.";
  os << "</p>\n"
        "<div class=\"graph\"><svg class=\"graph\" "
        "xmlns=\"http://www.w3.org/2000/svg\" width=\""
     << num(2 * margin + columns * (boxW + gapX)) << "\" height=\""
     << num(2 * margin + rows * (boxH + gapY)) << "\">\n";
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const std::string &in : nodes[i].inputs) {
      auto it = producer.find(in);
      if (it == producer.end() || it->second == i)
        continue;
      size_t p = it->second;
      os << "<line class=\"edge\" x1=\"" << num(x(p) + boxW / 2) << "\" y1=\""
         << num(y(p) + boxH) << "\" x2=\"" << num(x(i) + boxW / 2) << "\" y2=\""
         << num(y(i)) << "\"><title>" << escape(in) << "</title></line>\n";
    }
  for (size_t i = 0; i < nodes.size(); ++i) {
    const dlc::ONNXGraphNode &n = nodes[i];
    auto k = kernelOf.find(n.name);
    std::string kernel = k == kernelOf.end()
                             ? std::string("in no kernel")
                             : "in " + r.kernels[k->second].name;
    os << "<g class=\"op\"";
    if (k != kernelOf.end())
      os << " data-kernel=\"" << k->second << "\"";
    os << "><rect x=\"" << num(x(i)) << "\" y=\"" << num(y(i)) << "\" width=\""
       << num(boxW) << "\" height=\"" << num(boxH) << "\" rx=\"4\" fill=\""
       << (k == kernelOf.end() ? std::string("#ddd") : colour(k->second))
       << "\"/><text x=\"" << num(x(i) + boxW / 2) << "\" y=\""
       << num(y(i) + boxH / 2 + 4) << "\">" << escape(n.opType)
       << "</text><title>" << escape(n.name) << " (" << escape(n.opType) << ") "
       << escape(kernel) << "</title></g>\n";
  }
  os << "</svg></div>\n";
}

void writeKernels(llvm::raw_ostream &os, const dlc::CompileReport &r,
                  const llvm::StringMap<double> *profile) {
  llvm::StringMap<unsigned> launches;
  for (const std::string &k : r.stats.launchKernels)
    ++launches[k];
  os << "<h2>Kernels</h2>\n<table id=\"kernels\" class=\"kernels\">\n"
        "<tr><th>#</th><th>kernel</th><th>workgroups</th><th>buffers</th>"
        "<th>launches</th><th>code</th><th>arithmetic</th>";
  if (profile)
    os << "<th>measured</th>";
  os << "<th>ONNX nodes</th></tr>\n";
  for (size_t k = 0; k < r.kernels.size(); ++k) {
    const dlc::ReportKernel &kernel = r.kernels[k];
    os << "<tr class=\"kernel\" id=\"kernel-" << escape(kernel.name)
       << "\" data-kernel=\"" << k << "\"><td style=\"background:" << colour(k)
       << "\">" << k << "</td><td><code>" << escape(kernel.name)
       << "</code></td><td>" << kernel.workgroups << "</td><td>"
       << kernel.bindings << "</td><td>" << launches.lookup(kernel.name)
       << "</td><td>" << bytes(kernel.codeBytes) << "</td><td>"
       << escape(kernel.arithmetic) << "</td>";
    if (profile) {
      auto it = profile->find(kernel.name);
      os << "<td>"
         << (it == profile->end()
                 ? std::string("-")
                 : llvm::formatv("{0:f1} us", it->getValue()).str())
         << "</td>";
    }
    os << "<td>";
    for (size_t i = 0; i < kernel.onnxNodes.size(); ++i)
      os << (i ? ", " : "") << escape(kernel.onnxNodes[i]);
    if (kernel.onnxNodes.empty())
      os << "(none)";
    os << "<div class=\"shapes\">" << escape(kernel.shapes)
       << "</div></td></tr>\n";
  }
  os << "</table>\n";
}

void writeArena(llvm::raw_ostream &os, const dlc::CompileReport &r) {
  const dlc::ArtifactStats &s = r.stats;
  os << "<h2>Arena</h2>\n<p>Each buffer as a box: across, the launches "
        "from the one that writes it to the last that reads it (graph "
        "outputs to the end); down, its place in the arena. "
     << bytes(s.plan.arenaSize) << " in all; no plan can go below "
     << bytes(s.plan.lowerBound) << " (the most bytes alive at once).</p>\n";
  int64_t launches = std::max<int64_t>(1, s.launchKernels.size());
  const double width = 960, height = 360, left = 60, top = 10;
  double arena = std::max<uint64_t>(1, s.plan.arenaSize);
  auto num = [](double v) { return llvm::formatv("{0:f1}", v).str(); };
  os << "<svg class=\"arena\" xmlns=\"http://www.w3.org/2000/svg\" "
        "width=\""
     << num(width + left + 10) << "\" height=\"" << num(height + top + 30)
     << "\">\n";
  os << "<rect x=\"" << num(left) << "\" y=\"" << num(top) << "\" width=\""
     << num(width) << "\" height=\"" << num(height)
     << "\" fill=\"none\" stroke=\"#888\"/>\n";
  for (size_t b = 0; b < s.buffers.size() && b < s.plan.offsets.size(); ++b) {
    const dlc::BufferLifetime &life = s.buffers[b];
    int64_t first = std::clamp<int64_t>(life.first, 0, launches - 1);
    int64_t last = std::clamp<int64_t>(life.last, first, launches - 1);
    double x = left + width * first / launches;
    double w = std::max(1.0, width * (last - first + 1) / launches);
    double y = top + height * s.plan.offsets[b] / arena;
    double h = std::max(1.0, height * life.size / arena);
    std::string writer = first < static_cast<int64_t>(s.launchKernels.size())
                             ? s.launchKernels[first]
                             : std::string("?");
    os << "<rect class=\"buffer\" x=\"" << num(x) << "\" y=\"" << num(y)
       << "\" width=\"" << num(w) << "\" height=\"" << num(h) << "\" fill=\""
       << colour(b) << "\" stroke=\"#333\" stroke-width=\"0.3\"><title>buffer "
       << b << ": " << bytes(life.size) << " at offset " << s.plan.offsets[b]
       << ", launches " << first << " to " << last << " (written by "
       << escape(writer) << ")</title></rect>\n";
  }
  os << "<text x=\"" << num(left) << "\" y=\"" << num(height + top + 20)
     << "\" font-size=\"12\">launch 0</text><text x=\""
     << num(left + width - 80) << "\" y=\"" << num(height + top + 20)
     << "\" font-size=\"12\">launch " << launches - 1
     << "</text><text x=\"2\" y=\"" << num(top + 12)
     << "\" font-size=\"12\">offset 0</text><text x=\"2\" y=\""
     << num(top + height) << "\" font-size=\"12\">" << bytes(s.plan.arenaSize)
     << "</text>\n</svg>\n";
}

const char *kStyle = R"(body { font-family: sans-serif; margin: 1.5em; }
table { border-collapse: collapse; margin-bottom: 1em; }
th, td { border: 1px solid #ccc; padding: 2px 8px; text-align: left;
  vertical-align: top; }
table.summary th { background: #f3f3f3; }
.nodes { line-height: 2em; }
.node { display: inline-block; padding: 0 5px; margin: 1px; border-radius: 4px;
  font-size: 12px; border: 1px solid transparent; }
.hl { border: 1px solid #000 !important; font-weight: bold; }
tr.kernel.hl td { background-color: #ffd; }
.shapes { color: #555; font-family: monospace; font-size: 11px; }
div.graph { max-height: 640px; overflow: auto; border: 1px solid #ccc;
  margin-bottom: 1em; }
svg.graph text { font-size: 11px; text-anchor: middle; pointer-events: none; }
svg.graph line.edge { stroke: #999; stroke-width: 1; }
svg.graph g.op.hl rect { stroke: #000; stroke-width: 2; }
)";

/// Hovering a node or a kernel row marks everything of that kernel. At the
/// end the body records how many kernel rows the script saw (a test in a
/// browser reads it: the script ran to its end).
const char *kScript = R"(document.querySelectorAll('[data-kernel]')
  .forEach(function (e) {
    var k = e.getAttribute('data-kernel');
    var mark = function (on) {
      document.querySelectorAll('[data-kernel="' + k + '"]')
        .forEach(function (m) { m.classList.toggle('hl', on); });
    };
    e.addEventListener('mouseenter', function () { mark(true); });
    e.addEventListener('mouseleave', function () { mark(false); });
  });
document.body.setAttribute('data-ready', String(
  document.querySelectorAll('tr.kernel').length));
)";

} // namespace

LogicalResult dlc::writeReportHTML(Location loc, llvm::StringRef path,
                                   const CompileReport &report,
                                   llvm::StringRef profilePath) {
  std::optional<llvm::StringMap<double>> profile;
  if (!profilePath.empty()) {
    FailureOr<llvm::StringMap<double>> read = readProfile(loc, profilePath);
    if (failed(read))
      return failure();
    llvm::StringSet<> names;
    for (const ReportKernel &k : report.kernels)
      names.insert(k.name);
    for (const auto &entry : *read)
      if (!names.contains(entry.getKey()))
        return emitError(loc, "--report-profile: '")
               << profilePath << "' times kernel '" << entry.getKey()
               << "', which this compile does not have: profile the "
                  "artifact this command writes";
    profile = std::move(*read);
  }
  std::error_code error;
  llvm::raw_fd_ostream os(path, error, llvm::sys::fs::OF_Text);
  if (error)
    return emitError(loc, "--report: cannot write '")
           << path << "': " << error.message();
  os << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta "
        "charset=\"utf-8\">\n<title>dlc report: "
     << escape(report.model) << " for " << escape(report.target)
     << "</title>\n<style>\n"
     << kStyle << "</style>\n</head>\n<body>\n<h1>dlc-compile report</h1>\n";
  const llvm::StringMap<double> *times = profile ? &*profile : nullptr;
  writeSummary(os, report, times);
  writeGraph(os, report);
  writeNodes(os, report);
  writeKernels(os, report, times);
  writeArena(os, report);
  os << "<script>\n" << kScript << "</script>\n</body>\n</html>\n";
  os.close();
  if (os.has_error())
    return emitError(loc, "--report: cannot write '")
           << path << "': " << os.error().message();
  return success();
}

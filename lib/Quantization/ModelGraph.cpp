//===- ModelGraph.cpp - reading and editing ONNX graphs -------------------===//

#include "ModelGraph.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "onnx/onnx_pb.h"

#include <algorithm>
#include <cstring>
#include <set>

using namespace dlc;

bool dlc::isDefaultDomain(const onnx::NodeProto &node) {
  return node.domain().empty() || node.domain() == "ai.onnx";
}

const onnx::AttributeProto *dlc::findAttr(const onnx::NodeProto &node,
                                          llvm::StringRef name) {
  for (const onnx::AttributeProto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

int64_t dlc::intAttr(const onnx::NodeProto &node, llvm::StringRef name,
                     int64_t fallback) {
  const onnx::AttributeProto *a = findAttr(node, name);
  return a ? a->i() : fallback;
}

double dlc::floatAttr(const onnx::NodeProto &node, llvm::StringRef name,
                      double fallback) {
  const onnx::AttributeProto *a = findAttr(node, name);
  return a ? a->f() : fallback;
}

int64_t dlc::defaultOpset(const onnx::ModelProto &model) {
  for (const onnx::OperatorSetIdProto &id : model.opset_import())
    if (id.domain().empty() || id.domain() == "ai.onnx")
      return id.version();
  return 0;
}

/// The constant tensors of the main graph by name: initializers and
/// Constant nodes with a `value` tensor.
std::map<std::string, const onnx::TensorProto *>
dlc::constantTensors(const onnx::GraphProto &graph) {
  std::map<std::string, const onnx::TensorProto *> constants;
  for (const onnx::TensorProto &t : graph.initializer())
    constants[t.name()] = &t;
  for (const onnx::NodeProto &node : graph.node())
    if (node.op_type() == "Constant" && isDefaultDomain(node) &&
        node.output_size() == 1)
      if (const onnx::AttributeProto *a = findAttr(node, "value"))
        if (a->has_t())
          constants[node.output(0)] = &a->t();
  return constants;
}

int64_t dlc::elementCount(const onnx::TensorProto &t) {
  int64_t n = 1;
  for (int64_t d : t.dims())
    n *= d;
  return n;
}

/// A float32 tensor's values: inline (float_data or raw_data) or in an
/// external data file under `baseDir`.
std::optional<std::vector<float>> dlc::readFloats(const onnx::TensorProto &t,
                                                  llvm::StringRef baseDir,
                                                  std::string &error) {
  if (t.data_type() != onnx::TensorProto::FLOAT) {
    error = "is not float32";
    return std::nullopt;
  }
  int64_t n = elementCount(t);
  std::vector<float> values(n);
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    std::string location;
    uint64_t offset = 0, length = n * sizeof(float);
    for (const onnx::StringStringEntryProto &e : t.external_data()) {
      if (e.key() == "location")
        location = e.value();
      else if ((e.key() == "offset" && !llvm::to_integer(e.value(), offset)) ||
               (e.key() == "length" && !llvm::to_integer(e.value(), length))) {
        error =
            "has a malformed external data " + e.key() + " '" + e.value() + "'";
        return std::nullopt;
      }
    }
    llvm::SmallString<256> path(baseDir);
    llvm::sys::path::append(path, location);
    auto file = llvm::MemoryBuffer::getFileSlice(path, length, offset);
    if (!file || length != n * sizeof(float)) {
      error = "cannot read its external data from '" + std::string(path) + "'";
      return std::nullopt;
    }
    std::memcpy(values.data(), (*file)->getBufferStart(), length);
    return values;
  }
  if (t.has_raw_data()) {
    if (t.raw_data().size() != n * sizeof(float)) {
      error = "holds " + std::to_string(t.raw_data().size()) +
              " bytes of raw data for " + std::to_string(n) + " floats";
      return std::nullopt;
    }
    std::memcpy(values.data(), t.raw_data().data(), n * sizeof(float));
    return values;
  }
  if (t.float_data_size() != n) {
    error = "holds " + std::to_string(t.float_data_size()) + " values for " +
            std::to_string(n) + " elements";
    return std::nullopt;
  }
  std::copy(t.float_data().begin(), t.float_data().end(), values.begin());
  return values;
}

/// Every name the main graph and its subgraphs read.
void dlc::collectReads(const onnx::GraphProto &graph,
                       std::map<std::string, int> &reads) {
  for (const onnx::NodeProto &node : graph.node()) {
    for (const std::string &input : node.input())
      if (!input.empty())
        ++reads[input];
    for (const onnx::AttributeProto &a : node.attribute()) {
      if (a.has_g())
        collectReads(a.g(), reads);
      for (const onnx::GraphProto &g : a.graphs())
        collectReads(g, reads);
    }
  }
  for (const onnx::ValueInfoProto &output : graph.output())
    ++reads[output.name()];
}

/// Removes the constants of `graph` that were read (`readBefore`) and are
/// not any more: as initializers, graph inputs of IR < 4 models, or
/// Constant nodes.
void dlc::dropUnreadConstants(onnx::GraphProto &graph,
                              const std::map<std::string, int> &readBefore) {
  std::map<std::string, int> reads;
  collectReads(graph, reads);
  std::set<std::string> dropped;
  for (const auto &[name, tensor] : constantTensors(graph))
    if (readBefore.count(name) && !reads.count(name))
      dropped.insert(name);
  auto isDropped = [&](const std::string &name) {
    return dropped.count(name) != 0;
  };
  auto *initializers = graph.mutable_initializer();
  initializers->erase(std::remove_if(initializers->begin(), initializers->end(),
                                     [&](const onnx::TensorProto &t) {
                                       return isDropped(t.name());
                                     }),
                      initializers->end());
  auto *inputs = graph.mutable_input();
  inputs->erase(std::remove_if(inputs->begin(), inputs->end(),
                               [&](const onnx::ValueInfoProto &v) {
                                 return isDropped(v.name());
                               }),
                inputs->end());
  auto *nodes = graph.mutable_node();
  nodes->erase(std::remove_if(nodes->begin(), nodes->end(),
                              [&](const onnx::NodeProto &n) {
                                return n.op_type() == "Constant" &&
                                       n.output_size() == 1 &&
                                       isDropped(n.output(0));
                              }),
               nodes->end());
}

std::string dlc::nodeName(const onnx::NodeProto &node) {
  return node.name().empty() && node.output_size() ? node.output(0)
                                                   : node.name();
}

std::set<std::string> dlc::usedNames(const onnx::GraphProto &graph) {
  std::map<std::string, int> reads;
  collectReads(graph, reads);
  std::set<std::string> used;
  for (const auto &[name, count] : reads)
    used.insert(name);
  for (const onnx::ValueInfoProto &v : graph.input())
    used.insert(v.name());
  for (const onnx::TensorProto &t : graph.initializer())
    used.insert(t.name());
  for (const onnx::NodeProto &node : graph.node())
    for (const std::string &out : node.output())
      used.insert(out);
  return used;
}

std::string dlc::freshName(const std::string &base,
                           std::set<std::string> &used) {
  std::string name = base;
  for (int i = 1; used.count(name); ++i)
    name = base + "_" + std::to_string(i);
  used.insert(name);
  return name;
}

onnx::TensorProto dlc::rawTensor(const std::string &name, int dataType,
                                 llvm::ArrayRef<int64_t> dims,
                                 const void *bytes, size_t size) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(dataType);
  for (int64_t d : dims)
    t.add_dims(d);
  t.set_raw_data(bytes, size);
  return t;
}

void dlc::addIntAttr(onnx::NodeProto &node, const std::string &name,
                     int64_t v) {
  onnx::AttributeProto *a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

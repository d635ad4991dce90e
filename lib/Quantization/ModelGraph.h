//===- ModelGraph.h - reading and editing ONNX graphs -----------*- C++ -*-===//
//
// Private to the quantizers (--quantize, --weights): what they read from and
// change in an ONNX model's main graph before it is imported.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_LIB_QUANTIZATION_MODELGRAPH_H
#define DLC_LIB_QUANTIZATION_MODELGRAPH_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace onnx {
class AttributeProto;
class GraphProto;
class ModelProto;
class NodeProto;
class TensorProto;
} // namespace onnx

namespace dlc {

bool isDefaultDomain(const onnx::NodeProto &node);
const onnx::AttributeProto *findAttr(const onnx::NodeProto &node,
                                     llvm::StringRef name);
int64_t intAttr(const onnx::NodeProto &node, llvm::StringRef name,
                int64_t fallback);
double floatAttr(const onnx::NodeProto &node, llvm::StringRef name,
                 double fallback);
/// The model's opset of the default domain (0 when it imports none).
int64_t defaultOpset(const onnx::ModelProto &model);

/// The constant tensors of the main graph by name: initializers and
/// Constant nodes with a `value` tensor.
std::map<std::string, const onnx::TensorProto *>
constantTensors(const onnx::GraphProto &graph);

int64_t elementCount(const onnx::TensorProto &t);

/// A float32 tensor's values: inline (float_data or raw_data) or in an
/// external data file under `baseDir`; on failure `error` says why.
std::optional<std::vector<float>> readFloats(const onnx::TensorProto &t,
                                             llvm::StringRef baseDir,
                                             std::string &error);

/// Every name the main graph and its subgraphs read, with counts.
void collectReads(const onnx::GraphProto &graph,
                  std::map<std::string, int> &reads);

/// Removes the constants of `graph` that were read (`readBefore`) and are
/// not any more: as initializers, graph inputs of IR < 4 models, or
/// Constant nodes.
void dropUnreadConstants(onnx::GraphProto &graph,
                         const std::map<std::string, int> &readBefore);

/// The name a node goes by: its own, or its first output's.
std::string nodeName(const onnx::NodeProto &node);

/// Every name the main graph defines or reads (its subgraphs' reads
/// included), for freshName.
std::set<std::string> usedNames(const onnx::GraphProto &graph);

/// A name not in `used`, `base` or `base_N`; it is added to `used`.
std::string freshName(const std::string &base, std::set<std::string> &used);

/// A tensor of `dataType` holding `bytes` as raw data.
onnx::TensorProto rawTensor(const std::string &name, int dataType,
                            llvm::ArrayRef<int64_t> dims, const void *bytes,
                            size_t size);

void addIntAttr(onnx::NodeProto &node, const std::string &name, int64_t v);

} // namespace dlc

#endif // DLC_LIB_QUANTIZATION_MODELGRAPH_H

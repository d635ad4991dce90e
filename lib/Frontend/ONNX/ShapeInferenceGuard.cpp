//===- ShapeInferenceGuard.cpp - ranks checked before ONNX's inference ----===//
//
// The ONNX library's shape inference functions trust their inputs: Gemm
// before opset 13 reads dim 1 of B whatever B's rank, so a 1-D B reads past
// the end of the dims; ParseData copies as many bytes of a constant input
// as its dims ask for, whatever its raw data holds; data propagation reads
// input types without checking that they are known (each crashed the
// compiler under dlc-fuzz-compile-structured). The importer hands the
// library a schema registry of its own: it returns copies of the library's
// schemas whose inference functions first check every constant input's
// data against its dims and the input ranks listed here, and whose data
// propagation is skipped for a node with an untyped input.
// A node that fails the check gets no inferred type (the library's
// non-strict mode moves on), and dlc's handler for the operator reports it
// by name when it legalizes the node. An operator whose library inference
// contradicts its specification (STFT in ONNX 1.12) is not inferred at all.
//
//===----------------------------------------------------------------------===//

#include "ShapeInferenceGuard.h"

#include "onnx/defs/schema.h"
#include "onnx/defs/shape_inference.h"

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

namespace {

/// What an operator's inference functions assume about one input's rank,
/// in every version the library has: within [minRank, maxRank], equal to
/// input `sameRankAs`'s rank (when that is known), and, when `axis` names
/// an attribute, that attribute within [-rank, rank).
struct RankRule {
  const char *opType;
  unsigned input;
  int minRank;
  int maxRank;
  int sameRankAs = -1;
  const char *axis = nullptr;
};

constexpr int kAnyRank = 1 << 30;

// Found by fuzzing the compiler (tools/dlc-fuzz); each entry names the
// library code that indexes dims without a check.
constexpr RankRule kRankRules[] = {
    // Gemm-1..11: dim(transA ? 1 : 0) of A and dim(transB ? 0 : 1) of B.
    {"Gemm", 0, 2, 2},
    {"Gemm", 1, 2, 2},
    // convPoolShapeInference and convTransposeShapeInference read W's dims
    // for every spatial dim of X.
    {"Conv", 1, 0, kAnyRank, 0},
    {"ConvInteger", 1, 0, kAnyRank, 0},
    {"ConvTranspose", 1, 0, kAnyRank, 0},
    {"QLinearConv", 3, 0, kAnyRank, 0},
    // RNNShapeInference reads dims of X, W and R whatever their ranks.
    {"RNN", 0, 3, 3},
    {"RNN", 1, 3, 3},
    {"RNN", 2, 3, 3},
    {"GRU", 0, 3, 3},
    {"GRU", 1, 3, 3},
    {"GRU", 2, 3, 3},
    {"LSTM", 0, 3, 3},
    {"LSTM", 1, 3, 3},
    {"LSTM", 2, 3, 3},
    // LayerNormalization-17 reads X's dims up to `axis` unchecked.
    {"LayerNormalization", 0, 0, kAnyRank, -1, "axis"},
};

/// Inputs whose length the library's inference functions take as the
/// output's rank, making that many dims: a fuzzed length of 2^32 made
/// Expand's allocate until the compiler ran out of memory. No tensor has
/// more than kMaxRank dims.
struct ShapeInput {
  const char *opType;
  unsigned input;
};
constexpr ShapeInput kShapeInputs[] = {
    {"Expand", 1}, {"Reshape", 1}, {"ConstantOfShape", 0}};
constexpr int64_t kMaxRank = 64;

/// The rank of input `index` when the context knows it, else -1.
int knownRank(const onnx::TypeProto *type) {
  if (!type || !type->has_tensor_type() || !type->tensor_type().has_shape())
    return -1;
  return type->tensor_type().shape().dim_size();
}

/// Throws ONNX's inference error if an input of a node of `opType` has a
/// rank the library's functions do not expect.
template <typename Context>
void checkRanks(const std::string &opType, Context &ctx) {
  for (const RankRule &rule : kRankRules) {
    if (opType != rule.opType || rule.input >= ctx.getNumInputs())
      continue;
    int rank = knownRank(ctx.getInputType(rule.input));
    if (rank < 0)
      continue;
    if (rank < rule.minRank || rank > rule.maxRank)
      fail_shape_inference(opType, " input ", rule.input, " has rank ", rank,
                           "; expected ", rule.minRank, " to ", rule.maxRank);
    if (rule.sameRankAs >= 0 &&
        static_cast<size_t>(rule.sameRankAs) < ctx.getNumInputs()) {
      int other = knownRank(ctx.getInputType(rule.sameRankAs));
      if (other >= 0 && other != rank)
        fail_shape_inference(opType, " input ", rule.input, " has rank ", rank,
                             "; input ", rule.sameRankAs, " has ", other);
    }
    if (rule.axis)
      if (const onnx::AttributeProto *attr = ctx.getAttribute(rule.axis))
        if (attr->i() < -rank || attr->i() >= rank)
          fail_shape_inference(opType, " attribute ", rule.axis, " is ",
                               attr->i(), " for rank ", rank);
  }
  for (const ShapeInput &shape : kShapeInputs) {
    if (opType != shape.opType || shape.input >= ctx.getNumInputs())
      continue;
    const onnx::TypeProto *type = ctx.getInputType(shape.input);
    if (knownRank(type) != 1)
      continue;
    const onnx::TensorShapeProto_Dimension &dim =
        type->tensor_type().shape().dim(0);
    if (dim.has_dim_value() && dim.dim_value() > kMaxRank)
      fail_shape_inference(opType, " input ", shape.input, " has ",
                           dim.dim_value(), " elements: a shape of more than ",
                           kMaxRank, " dims");
  }
}

/// Bytes of one element of ONNX data type `type` when it is a fixed size of
/// whole bytes dlc reads, 0 otherwise (strings, 4-bit and 8-bit float
/// types, unknown numbers: not checked here).
int64_t elementBytes(int32_t type) {
  using T = onnx::TensorProto;
  switch (type) {
  case T::BOOL:
  case T::INT8:
  case T::UINT8:
    return 1;
  case T::INT16:
  case T::UINT16:
  case T::FLOAT16:
  case T::BFLOAT16:
    return 2;
  case T::INT32:
  case T::UINT32:
  case T::FLOAT:
    return 4;
  case T::INT64:
  case T::UINT64:
  case T::DOUBLE:
    return 8;
  default:
    return 0;
  }
}

/// Throws ONNX's inference error if a constant input's raw data does not
/// hold what its dims say: the library's ParseData copies as many bytes as
/// the dims ask for (a fuzzed dim made it read from nowhere). dlc's own
/// import checks the same, after inference.
template <typename Context>
void checkInputData(const std::string &opType, Context &ctx) {
  for (size_t i = 0; i < ctx.getNumInputs(); ++i) {
    const onnx::TensorProto *data = ctx.getInputData(i);
    if (!data || data->data_location() == onnx::TensorProto::EXTERNAL)
      continue;
    int64_t count = 1;
    for (int64_t d : data->dims()) {
      if (d < 0 || (d != 0 && count > (int64_t(1) << 48) / d))
        fail_shape_inference(opType, " input ", i, " has bad dims");
      count *= d;
    }
    int64_t bytes = elementBytes(data->data_type());
    if (data->has_raw_data() && bytes &&
        static_cast<int64_t>(data->raw_data().size()) != count * bytes)
      fail_shape_inference(opType, " input ", i, " has ",
                           data->raw_data().size(), " bytes for ", count,
                           " elements");
    if (!data->has_raw_data() && bytes) {
      int64_t values = data->float_data_size() + data->int32_data_size() +
                       data->int64_data_size() + data->double_data_size() +
                       data->uint64_data_size();
      if (values != count)
        fail_shape_inference(opType, " input ", i, " has ", values,
                             " values for ", count, " elements");
    }
  }
}

/// Throws ONNX's inference error for constant inputs whose values the
/// library's inference divides by without a check: SplitToSequence's
/// scalar split of 0 (a division by zero).
template <typename Context>
void checkInputValues(const std::string &opType, Context &ctx) {
  if (opType != "SplitToSequence" || ctx.getNumInputs() < 2)
    return;
  const onnx::TensorProto *split = ctx.getInputData(1);
  if (!split || split->dims_size() != 0 ||
      split->data_location() == onnx::TensorProto::EXTERNAL)
    return;
  // One value (checkInputData checked the bytes against the dims).
  int64_t value = 1;
  const std::string &raw = split->raw_data();
  if (split->data_type() == onnx::TensorProto::INT64) {
    if (split->has_raw_data() && raw.size() == sizeof(int64_t))
      std::memcpy(&value, raw.data(), sizeof(int64_t));
    else if (split->int64_data_size() == 1)
      value = split->int64_data(0);
  } else if (split->data_type() == onnx::TensorProto::INT32) {
    int32_t v = 1;
    if (split->has_raw_data() && raw.size() == sizeof(int32_t))
      std::memcpy(&v, raw.data(), sizeof(int32_t));
    else if (split->int32_data_size() == 1)
      v = split->int32_data(0);
    value = v;
  }
  if (value <= 0)
    fail_shape_inference(opType, " split ", value, " is not positive");
}

/// Operators whose inference functions in the ONNX releases dlc builds
/// with (Debian's 1.12) contradict the operator's specification: their
/// outputs get no inferred type and dlc's handler derives it.
bool inferenceContradictsSpec(const std::string &opType) {
  // STFT: reads `onesided` with default 0 where the specification's default
  // is 1 (a onesided signal of frame length 16 has 9 bins, not 16), and
  // counts frames with the bin count instead of the frame length (fixed in
  // ONNX 1.14, onnx/onnx#4920; the default in onnx/onnx#7731).
  return opType == "STFT";
}

class GuardedRegistry final : public onnx::ISchemaRegistry {
public:
  const onnx::OpSchema *GetSchema(const std::string &key,
                                  const int maxInclusiveVersion,
                                  const std::string &domain) const override {
    const onnx::OpSchema *schema =
        onnx::OpSchemaRegistry::Instance()->GetSchema(key, maxInclusiveVersion,
                                                      domain);
    if (!schema)
      return schema;
    std::lock_guard<std::mutex> lock(mutex);
    std::unique_ptr<onnx::OpSchema> &guarded =
        schemas[{domain, key, schema->SinceVersion()}];
    if (!guarded) {
      guarded = std::make_unique<onnx::OpSchema>(*schema);
      onnx::InferenceFunction infer =
          schema->GetTypeAndShapeInferenceFunction();
      guarded->TypeAndShapeInferenceFunction(
          [key, infer](onnx::InferenceContext &ctx) {
            if (inferenceContradictsSpec(key))
              return;
            checkInputData(key, ctx);
            checkInputValues(key, ctx);
            checkRanks(key, ctx);
            infer(ctx);
          });
      if (onnx::DataPropagationFunction propagate =
              schema->GetDataPropagationFunction())
        guarded->PartialDataPropagationFunction(
            [key, propagate](onnx::DataPropagationContext &ctx) {
              // Propagation is optional; the library's functions read their
              // inputs' types without checking that they are known (Shape
              // of an untyped value crashed it).
              for (size_t i = 0; i < ctx.getNumInputs(); ++i)
                if (!ctx.getInputType(i))
                  return;
              checkRanks(key, ctx);
              propagate(ctx);
            });
    }
    return guarded.get();
  }

private:
  mutable std::mutex mutex;
  mutable std::map<std::tuple<std::string, std::string, int>,
                   std::unique_ptr<onnx::OpSchema>>
      schemas;
};

} // namespace

const onnx::ISchemaRegistry *dlc::guardedSchemaRegistry() {
  static GuardedRegistry registry;
  return &registry;
}

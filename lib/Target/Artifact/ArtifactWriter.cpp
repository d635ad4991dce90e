//===- ArtifactWriter.cpp - host plan to the .dlcx artifact ---------------===//

#include "dlc/Target/Artifact.h"

#include "dlc/Dialect/DLC/IR/DLC.h"
#include "dlc/Dialect/ONNX/IR/ONNXTypes.h"

#include "dlc/artifact_format.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringMap.h"

#include <cstring>
#include <functional>

using namespace mlir;
using namespace dlc;

static_assert(sizeof(dlcx_header_t) == 64, "header layout");
static_assert(sizeof(dlcx_section_t) == 24, "section layout");
static_assert(sizeof(dlcx_tensor_t) == 120, "tensor layout");
static_assert(sizeof(dlcx_kernel_t) == 40, "kernel layout");
static_assert(sizeof(dlcx_launch_t) == 24, "launch layout");
static_assert(sizeof(dlcx_kernel_limits_t) == 16, "kernel limits layout");
static_assert(sizeof(dlcx_model_t) == 40, "model layout");
static_assert(DLCX_ALIGNMENT == 64, "TargetDescription::bufferAlignment");

namespace {

uint64_t alignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

template <typename T> void append(std::string &s, const T &value) {
  s.append(reinterpret_cast<const char *>(&value), sizeof(T));
}

class StringTable {
public:
  uint32_t add(StringRef s) {
    auto it = offsets.find(s);
    if (it != offsets.end())
      return it->second;
    uint32_t offset = data.size();
    data.append(s.data(), s.size());
    data.push_back('\0');
    offsets[s] = offset;
    return offset;
  }
  std::string data;

private:
  llvm::StringMap<uint32_t> offsets;
};

/// Where a host value lives.
struct Place {
  int64_t buffer = -1;   ///< arena buffer index, or -1
  uint64_t offset = 0;   ///< bytes into the buffer (a dlc.concat operand)
  int64_t constant = -1; ///< constant index, or -1
};

class Writer {
public:
  Writer(func::FuncOp main, const TargetDescription &target,
         const KernelBinary &binary)
      : main(main), target(target), binary(binary),
        alignment(target.bufferAlignment()) {}

  LogicalResult run(llvm::raw_ostream &os, ArtifactStats *stats);

private:
  LogicalResult analyze();
  FailureOr<uint32_t> tensorFor(Value v);
  LogicalResult appendConstant(arith::ConstantOp op);
  /// The model's inputs, then its outputs, with their ONNX names (`io`).
  LogicalResult collectIO();
  /// The kernels, their launches and the tensors each launch binds.
  LogicalResult collectLaunches();
  /// What each kernel was compiled for, for the reader to check launches
  /// against (`kernelLimits`, `kernelArgs`).
  LogicalResult collectKernelLimits();
  /// The model table: arena, names, I/O counts, scratch.
  LogicalResult describeModel();
  /// The file: header, section table and the aligned sections, checksummed.
  std::string layOut() const;

  func::FuncOp main;
  const TargetDescription &target;
  const KernelBinary &binary;
  uint64_t alignment;

  StringTable strings;
  std::string constants;
  std::vector<uint64_t> constantOffsets;
  std::vector<BufferLifetime> buffers;
  DenseMap<Value, Place> places;
  DenseMap<Value, uint32_t> tensorIndex;
  std::vector<dlcx_tensor_t> tensors;
  std::vector<Value> tensorValues;
  std::vector<std::string> tensorNames;
  MemoryPlan plan;

  std::vector<uint32_t> io;
  std::vector<dlcx_kernel_t> kernels;
  std::vector<dlcx_launch_t> launches;
  std::vector<uint32_t> bindings;
  std::vector<dlcx_kernel_limits_t> kernelLimits;
  std::vector<uint64_t> kernelArgs;
  dlcx_model_t model;
};

LogicalResult Writer::appendConstant(arith::ConstantOp op) {
  auto type = cast<RankedTensorType>(op.getType());
  Type elem = type.getElementType();
  if (elem.isInteger(4))
    return op.emitError("4-bit constants at kernel boundaries are not "
                        "supported yet");
  uint64_t offset = alignUp(constants.size(), alignment);
  constants.resize(offset, '\0');
  int64_t bytes = type.getNumElements() * storedElementBytes(elem);
  Attribute value = op.getValue();
  if (auto res = dyn_cast<DenseResourceElementsAttr>(value)) {
    ArrayRef<char> data = res.getData();
    if (static_cast<int64_t>(data.size()) != bytes)
      return op.emitError("constant data has ")
             << data.size() << " bytes but its type needs " << bytes;
    constants.append(data.data(), data.size());
  } else if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    if (elem.isInteger(1)) {
      for (bool b : dense.getValues<bool>())
        constants.push_back(b ? 1 : 0);
    } else if (dense.isSplat()) {
      ArrayRef<char> raw = dense.getRawData();
      for (int64_t i = 0; i < type.getNumElements(); ++i)
        constants.append(raw.data(), storedElementBytes(elem));
    } else {
      ArrayRef<char> raw = dense.getRawData();
      constants.append(raw.data(), raw.size());
    }
  } else {
    return op.emitError("unsupported constant in the host program");
  }
  places[op.getResult()].constant = constantOffsets.size();
  constantOffsets.push_back(offset);
  return success();
}

LogicalResult Writer::analyze() {
  Block &entry = main.getBody().front();
  int64_t position = 0;
  auto bytes = [](Value v) -> uint64_t {
    auto type = cast<RankedTensorType>(v.getType());
    return type.getNumElements() * storedElementBytes(type.getElementType());
  };
  // The operands of a dlc.concat live inside its result's buffer: the
  // buffer is made when the first of them is computed, and lives until the
  // last use of any of them or of the result.
  DenseMap<Value, std::pair<Value, uint64_t>> within;
  for (auto concat : entry.getOps<dlc::ConcatOp>()) {
    uint64_t offset = 0;
    for (Value in : concat.getInputs()) {
      if (!in.getDefiningOp<dlc::LaunchOp>() &&
          !in.getDefiningOp<dlc::ConcatOp>())
        return concat.emitError("an operand is not computed by a kernel; "
                                "it cannot be placed inside the result");
      if (!within.try_emplace(in, concat.getResult(), offset).second)
        return concat.emitError("an operand is already placed inside "
                                "another concat's buffer");
      offset += bytes(in);
    }
  }
  std::function<Place(Value, int64_t)> placeOf = [&](Value v, int64_t first) {
    auto it = places.find(v);
    if (it != places.end() && it->second.buffer >= 0)
      return it->second;
    Place p;
    if (auto outer = within.find(v); outer != within.end()) {
      p = placeOf(outer->second.first, first);
      p.offset += outer->second.second;
    } else {
      BufferLifetime b;
      b.size = bytes(v);
      b.first = b.last = first;
      p.buffer = buffers.size();
      buffers.push_back(b);
    }
    places[v] = p;
    return p;
  };
  for (BlockArgument arg : entry.getArguments())
    placeOf(arg, -1);
  for (Operation &op : entry) {
    if (auto cst = dyn_cast<arith::ConstantOp>(op)) {
      if (isa<RankedTensorType>(cst.getType()) && !cst->use_empty() &&
          failed(appendConstant(cst)))
        return failure();
      continue;
    }
    if (auto empty = dyn_cast<tensor::EmptyOp>(op)) {
      // Tensors without elements (the only ones left at host level) get
      // an empty buffer.
      if (!empty->use_empty())
        placeOf(empty.getResult(), position);
      continue;
    }
    if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(op)) {
      places[op.getResult(0)] = places.lookup(op.getOperand(0));
      continue;
    }
    if (auto concat = dyn_cast<dlc::ConcatOp>(op)) {
      placeOf(concat.getResult(), position);
      continue;
    }
    if (auto view = dyn_cast<dlc::ViewOp>(op)) {
      // Inside the operand's buffer, which its uses keep alive.
      Place p = places.lookup(view.getSource());
      if (p.buffer < 0)
        return view.emitError("the operand of a view is not in the arena");
      p.offset += view.getOffset() *
                  storedElementBytes(view.getType().getElementType());
      places[view.getResult()] = p;
      continue;
    }
    if (auto launch = dyn_cast<dlc::LaunchOp>(op)) {
      for (Value in : launch.getInputs()) {
        Place p = places.lookup(in);
        if (p.buffer >= 0)
          buffers[p.buffer].last = position;
      }
      for (Value r : launch.getResults())
        placeOf(r, position);
      ++position;
      continue;
    }
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (Value v : ret.getOperands()) {
        Place p = places.lookup(v);
        if (p.buffer < 0)
          return ret.emitError("graph output ")
                 << "is not computed by a kernel";
        buffers[p.buffer].last = INT64_MAX / 2;
      }
      continue;
    }
    if (op.use_empty() && isMemoryEffectFree(&op))
      continue;
    return op.emitError("unexpected op in the host program; every "
                        "computation must be inside a kernel");
  }
  plan = planMemory(buffers, alignment);
  return success();
}

/// An int4/uint4 model input or output is held packed, two elements per
/// byte (ONNXToLinalg): its buffer is bytes, its descriptor the ONNX dims.
/// The artifact's element type for `t` (signedness from ONNX's unsigned
/// types), looked up in the format's table by kind and width; 0 when the
/// table has none.
static uint32_t dlcxDtype(Type t) {
  if (t.isBF16())
    return DLCX_DTYPE_BF16;
  // 8- and 4-bit floats are formats beyond kind and width: their ONNX
  // numbers, which the format's table shares.
  if (isa<FloatType>(t) && t.getIntOrFloatBitWidth() <= 8) {
    auto number = static_cast<uint32_t>(dlc::onnx::getDataType(t));
    return dlcx_dtype_is_minifloat(number) ? number : 0;
  }
  char kind = 0;
  if (isa<FloatType>(t))
    kind = 'f';
  else if (t.isInteger(1))
    return DLCX_DTYPE_BOOL;
  else if (auto i = dyn_cast<IntegerType>(t))
    kind = i.isUnsigned() ? 'u' : 'i';
  else
    return 0;
  return dlcx_dtype_find(kind, t.getIntOrFloatBitWidth());
}

static LogicalResult setPackedShape(Location loc, dlcx_tensor_t &t,
                                    DenseI64ArrayAttr shape) {
  if (!shape)
    return success();
  if (shape.size() > static_cast<int64_t>(DLCX_MAX_RANK))
    return emitError(loc, "tensor of rank above ")
           << DLCX_MAX_RANK << " cannot be stored in the artifact";
  std::memset(t.dims, 0, sizeof(t.dims));
  t.rank = shape.size();
  for (auto [d, dim] : llvm::enumerate(shape.asArrayRef()))
    t.dims[d] = dim;
  return success();
}

FailureOr<uint32_t> Writer::tensorFor(Value v) {
  auto it = tensorIndex.find(v);
  if (it != tensorIndex.end())
    return it->second;
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || type.getRank() > static_cast<int64_t>(DLCX_MAX_RANK))
    return emitError(v.getLoc(), "tensor of rank above ")
           << DLCX_MAX_RANK << " cannot be stored in the artifact";
  Place p = places.lookup(v);
  dlcx_tensor_t t;
  std::memset(&t, 0, sizeof(t));
  Type elem = type.getElementType();
  // Between kernels 4-bit integers take a byte each: the descriptor says
  // what the arena holds. (Model inputs and outputs are packed, see
  // setPackedShape.)
  if (elem.isInteger(4))
    elem = IntegerType::get(elem.getContext(), 8);
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (Type orig =
            getIOElementType(main, IOSide::Argument, arg.getArgNumber()))
      elem = orig;
  }
  t.dtype = dlcxDtype(elem);
  if (t.dtype == 0)
    return emitError(v.getLoc(), "unsupported element type in the artifact");
  t.rank = type.getRank();
  for (int64_t d = 0; d < type.getRank(); ++d)
    t.dims[d] = type.getDimSize(d);
  t.size = type.getNumElements() * storedElementBytes(type.getElementType());
  t.quant_axis = -1;
  if (p.buffer >= 0) {
    t.storage = DLCX_STORAGE_ARENA;
    t.offset = plan.offsets[p.buffer] + p.offset;
  } else if (p.constant >= 0) {
    t.storage = DLCX_STORAGE_CONSTANT;
    t.offset = constantOffsets[p.constant];
  } else {
    return emitError(v.getLoc(), "internal error: a value has no place");
  }
  uint32_t index = tensors.size();
  t.name = strings.add("t" + std::to_string(index));
  tensors.push_back(t);
  tensorIndex[v] = index;
  return index;
}

LogicalResult Writer::collectIO() {
  Block &entry = main.getBody().front();
  for (BlockArgument arg : entry.getArguments()) {
    FailureOr<uint32_t> t = tensorFor(arg);
    if (failed(t))
      return failure();
    if (auto name = getIOName(main, IOSide::Argument, arg.getArgNumber()))
      tensors[*t].name = strings.add(name.getValue());
    if (failed(setPackedShape(
            arg.getLoc(), tensors[*t],
            getIOPackedShape(main, IOSide::Argument, arg.getArgNumber()))))
      return failure();
    // An input whose bytes a later buffer takes over (once it is dead) must
    // be set again before each run; the runtime checks that it is.
    Place p = places.lookup(arg);
    if (p.buffer >= 0) {
      uint64_t begin = plan.offsets[p.buffer];
      uint64_t end = begin + std::max<uint64_t>(buffers[p.buffer].size, 1);
      for (auto [j, other] : llvm::enumerate(buffers)) {
        uint64_t otherBegin = plan.offsets[j];
        uint64_t otherEnd = otherBegin + std::max<uint64_t>(other.size, 1);
        if (static_cast<int64_t>(j) != p.buffer && otherBegin < end &&
            begin < otherEnd)
          tensors[*t].flags |= DLCX_TENSOR_INPUT_REUSED;
      }
    }
    io.push_back(*t);
  }
  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  llvm::DenseSet<Value> returned;
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    // Two outputs of no elements may share one value: there is nothing to
    // write into either.
    auto type = dyn_cast<RankedTensorType>(v.getType());
    bool empty = type && type.hasStaticShape() && type.getNumElements() == 0;
    if (!returned.insert(v).second && !empty)
      return ret.emitError("graph output ")
             << i << " repeats another output; it needs its own kernel";
    // Outputs get a descriptor of their own even when another tensor
    // shares the buffer (a reshape of it, for example).
    tensorIndex.erase(v);
    FailureOr<uint32_t> t = tensorFor(v);
    if (failed(t))
      return failure();
    if (Type orig = getIOElementType(main, IOSide::Result, i))
      tensors[*t].dtype = dlcxDtype(orig);
    if (auto name = getIOName(main, IOSide::Result, i))
      tensors[*t].name = strings.add(name.getValue());
    if (failed(setPackedShape(v.getLoc(), tensors[*t],
                              getIOPackedShape(main, IOSide::Result, i))))
      return failure();
    io.push_back(*t);
  }
  return success();
}

LogicalResult Writer::collectLaunches() {
  Block &entry = main.getBody().front();
  llvm::StringMap<uint32_t> kernelIndex;
  for (const KernelInfo &k : binary.kernels) {
    dlcx_kernel_t d;
    std::memset(&d, 0, sizeof(d));
    d.name = strings.add(k.name);
    d.code_format = k.codeFormat;
    d.code_offset = k.codeOffset;
    d.code_size = k.codeSize;
    d.binding_count = k.bindingCount;
    for (int i = 0; i < 3; ++i)
      d.workgroup_size[i] = k.workgroupSize[i];
    kernelIndex[k.name] = kernels.size();
    kernels.push_back(d);
  }
  for (auto launch : entry.getOps<dlc::LaunchOp>()) {
    auto it = kernelIndex.find(launch.getKernel());
    if (it == kernelIndex.end())
      return launch.emitError("kernel '")
             << launch.getKernel() << "' was not compiled";
    const KernelInfo &info = binary.kernels[it->second];
    dlcx_launch_t l;
    std::memset(&l, 0, sizeof(l));
    l.kernel = it->second;
    l.binding_begin = bindings.size();
    for (Value v :
         llvm::concat<Value>(launch.getInputs(), launch.getResults())) {
      FailureOr<uint32_t> t = tensorFor(v);
      if (failed(t))
        return failure();
      bindings.push_back(*t);
    }
    l.binding_count = bindings.size() - l.binding_begin;
    if (l.binding_count != info.bindingCount)
      return launch.emitError("kernel '")
             << launch.getKernel() << "' takes " << info.bindingCount
             << " buffers but the launch passes " << l.binding_count;
    for (int i = 0; i < 3; ++i)
      l.grid[i] = info.grid[i];
    launches.push_back(l);
  }
  return success();
}

LogicalResult Writer::collectKernelLimits() {
  // Its grid, its loop iterations per thread, and the bytes of each
  // buffer (a kernel's launches all bind tensors of the same types).
  kernelLimits.assign(kernels.size(), dlcx_kernel_limits_t());
  std::vector<bool> launched(kernels.size());
  for (auto [k, info] : llvm::enumerate(binary.kernels)) {
    for (int i = 0; i < 3; ++i)
      kernelLimits[k].grid[i] = info.grid[i];
    kernelLimits[k].max_loop_iterations = static_cast<uint32_t>(
        std::min<uint64_t>(info.maxLoopIterations, UINT32_MAX));
  }
  std::vector<size_t> argsBegin;
  for (const KernelInfo &info : binary.kernels) {
    argsBegin.push_back(kernelArgs.size());
    kernelArgs.resize(kernelArgs.size() + info.bindingCount, 0);
  }
  for (const dlcx_launch_t &l : launches) {
    for (uint32_t i = 0; i < l.binding_count; ++i) {
      uint64_t bytes = tensors[bindings[l.binding_begin + i]].size;
      uint64_t &arg = kernelArgs[argsBegin[l.kernel] + i];
      if (launched[l.kernel] && arg != bytes)
        return emitError(main->getLoc(), "internal error: two launches of "
                                         "kernel '")
               << binary.kernels[l.kernel].name
               << "' bind buffers of different sizes";
      arg = bytes;
    }
    launched[l.kernel] = true;
  }
  return success();
}

LogicalResult Writer::describeModel() {
  Block &entry = main.getBody().front();
  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  ModuleOp module = main->getParentOfType<ModuleOp>();
  std::memset(&model, 0, sizeof(model));
  model.arena_size = plan.arenaSize;
  model.arena_lower_bound = plan.lowerBound;
  StringRef graphName = "main";
  if (auto n = main->getAttrOfType<StringAttr>(kGraphNameAttr))
    graphName = n.getValue();
  model.name = strings.add(graphName);
  model.producer = strings.add("dlc 0.1.0");
  model.input_count = entry.getNumArguments();
  model.output_count = ret.getNumOperands();
  if (auto n = module->getAttrOfType<IntegerAttr>(kOnnxNodeCountAttr))
    model.onnx_node_count = n.getInt();
  uint64_t scratch = 0;
  for (const KernelInfo &k : binary.kernels)
    scratch = std::max(scratch, k.scratchSize);
  if (scratch > UINT32_MAX)
    return emitError(main->getLoc(), "a kernel needs ")
           << scratch << " bytes of scratch per thread, more than 4 GiB";
  model.cpu_scratch_size = static_cast<uint32_t>(scratch);
  return success();
}

std::string Writer::layOut() const {
  // Sections, each aligned; the constants go last so that growing weights
  // do not move the tables.
  std::vector<std::pair<uint32_t, std::string>> sections;
  auto addTable = [&](uint32_t kind, const void *data, size_t size) {
    sections.emplace_back(kind,
                          std::string(static_cast<const char *>(data), size));
  };
  addTable(DLCX_SECTION_MODEL, &model, sizeof(model));
  addTable(DLCX_SECTION_TENSORS, tensors.data(),
           tensors.size() * sizeof(dlcx_tensor_t));
  addTable(DLCX_SECTION_KERNELS, kernels.data(),
           kernels.size() * sizeof(dlcx_kernel_t));
  addTable(DLCX_SECTION_LAUNCHES, launches.data(),
           launches.size() * sizeof(dlcx_launch_t));
  addTable(DLCX_SECTION_BINDINGS, bindings.data(),
           bindings.size() * sizeof(uint32_t));
  addTable(DLCX_SECTION_IO, io.data(), io.size() * sizeof(uint32_t));
  addTable(DLCX_SECTION_KERNEL_LIMITS, kernelLimits.data(),
           kernelLimits.size() * sizeof(dlcx_kernel_limits_t));
  addTable(DLCX_SECTION_KERNEL_ARGS, kernelArgs.data(),
           kernelArgs.size() * sizeof(uint64_t));
  addTable(DLCX_SECTION_STRINGS, strings.data.data(), strings.data.size());
  addTable(DLCX_SECTION_CODE, binary.code.data(), binary.code.size());
  addTable(DLCX_SECTION_CONSTANTS, constants.data(), constants.size());
  if (!binary.cubin.empty())
    addTable(DLCX_SECTION_CUBIN, binary.cubin.data(), binary.cubin.size());
  if (target.kind == TargetKind::CPU)
    addTable(DLCX_SECTION_CPU_CODE_ID, &binary.cpuCodeId,
             sizeof(binary.cpuCodeId));

  dlcx_header_t header;
  std::memset(&header, 0, sizeof(header));
  header.magic = DLCX_MAGIC;
  header.version_major = DLCX_VERSION_MAJOR;
  header.version_minor = DLCX_VERSION_MINOR;
  header.header_size = sizeof(dlcx_header_t);
  header.section_count = sections.size();
  header.section_table_offset = sizeof(dlcx_header_t);
  header.target = target.kind == TargetKind::CPU      ? DLCX_TARGET_CPU
                  : target.kind == TargetKind::Vulkan ? DLCX_TARGET_VULKAN
                                                      : DLCX_TARGET_CUDA;
  header.target_sm = target.sm;
  header.target_features = binary.features;

  std::vector<dlcx_section_t> table;
  uint64_t cursor =
      alignUp(sizeof(dlcx_header_t) + sections.size() * sizeof(dlcx_section_t),
              DLCX_ALIGNMENT);
  for (auto &[kind, data] : sections) {
    dlcx_section_t s;
    std::memset(&s, 0, sizeof(s));
    s.kind = kind;
    s.offset = cursor;
    s.size = data.size();
    table.push_back(s);
    cursor = alignUp(cursor + data.size(), DLCX_ALIGNMENT);
  }
  header.file_size = table.back().offset + table.back().size;

  std::string file;
  file.reserve(header.file_size);
  append(file, header);
  for (const dlcx_section_t &s : table)
    append(file, s);
  for (auto [s, section] : llvm::zip(table, sections)) {
    file.resize(s.offset, '\0');
    file.append(section.second);
  }
  uint64_t checksum = dlcx_checksum(file.data() + DLCX_CHECKSUM_START,
                                    file.size() - DLCX_CHECKSUM_START);
  std::memcpy(&file[offsetof(dlcx_header_t, checksum)], &checksum,
              sizeof(checksum));

  return file;
}

LogicalResult Writer::run(llvm::raw_ostream &os, ArtifactStats *stats) {
  strings.add("");
  if (failed(analyze()) || failed(collectIO()) || failed(collectLaunches()) ||
      failed(collectKernelLimits()) || failed(describeModel()))
    return failure();
  std::string file = layOut();
  os << file;

  if (stats) {
    ModuleOp module = main->getParentOfType<ModuleOp>();
    if (auto n = module->getAttrOfType<IntegerAttr>(kOnnxNodeCountAttr))
      stats->onnxNodes = n.getInt();
    stats->kernels = kernels.size();
    stats->launches = launches.size();
    stats->plan = plan;
    stats->constantBytes = constants.size();
    stats->codeBytes = binary.code.size();
    stats->cubinBytes = binary.cubin.size();
    stats->fileBytes = file.size();
    stats->scratchBytes = model.cpu_scratch_size;
    stats->buffers = buffers;
    for (unsigned i = 0; i < model.input_count; ++i)
      if (tensors[io[i]].flags & DLCX_TENSOR_INPUT_REUSED)
        stats->reusedInputs.push_back(
            StringRef(strings.data.c_str() + tensors[io[i]].name).str());
    for (const dlcx_launch_t &l : launches)
      stats->launchKernels.push_back(binary.kernels[l.kernel].name);
  }
  return success();
}

} // namespace

LogicalResult dlc::writeArtifact(ModuleOp hostModule,
                                 const TargetDescription &target,
                                 const KernelBinary &binary,
                                 llvm::raw_ostream &os, ArtifactStats *stats) {
  auto main = hostModule.lookupSymbol<func::FuncOp>("main");
  if (!main || main.isExternal())
    return emitError(hostModule.getLoc(), "the model has no main function");
  Writer writer(main, target, binary);
  return writer.run(os, stats);
}

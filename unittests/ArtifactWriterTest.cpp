//===- ArtifactWriterTest.cpp - host plan placement in the artifact -------===//

#include "dlc/Dialect/DLC/IR/DLC.h"
#include "dlc/Dialect/ONNX/IR/ONNXTypes.h"
#include "dlc/Target/Artifact.h"

#include "dlc/artifact_format.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cstring>

using namespace dlc;
using namespace mlir;

namespace {

/// A host program with the given body; kernels @k1 and @k2 take one
/// tensor<1x4x16xf32> and return one, @k3 takes the result of the concat.
std::string hostProgram(StringRef body, StringRef results) {
  return (R"(
func.func private @k1(tensor<1x4x16xf32>) -> tensor<1x4x16xf32> attributes {dlc.kernel}
func.func private @k2(tensor<1x4x16xf32>) -> tensor<1x4x16xf32> attributes {dlc.kernel}
func.func private @k3(tensor<1x12x16xf32>) -> tensor<1x12x16xf32> attributes {dlc.kernel}
func.func @main(%x: tensor<1x4x16xf32>) -> )" +
          results + " {\n" + body + "\n}\n")
      .str();
}

/// The artifact's tensor table, and the tensors each launch binds.
struct Written {
  std::vector<dlcx_tensor_t> tensors;
  std::vector<std::vector<uint32_t>> launchBindings;
  dlcx_model_t model;
};

class ArtifactWriterTest : public ::testing::Test {
protected:
  ArtifactWriterTest() {
    context.loadDialect<DLCDialect, func::FuncDialect, tensor::TensorDialect,
                        arith::ArithDialect>();
  }

  /// Writes the artifact of `source` for the host CPU; the error message
  /// in `error` when writing fails.
  std::optional<Written> write(const std::string &source, std::string &error) {
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(source, &context);
    if (!module) {
      error = "parse error";
      return std::nullopt;
    }
    KernelBinary binary;
    binary.code = "code";
    for (const char *name : {"k1", "k2", "k3"}) {
      KernelInfo k;
      k.name = name;
      k.bindingCount = 2;
      k.codeFormat = DLCX_CODE_ELF_SHARED;
      k.codeSize = binary.code.size();
      binary.kernels.push_back(k);
    }
    std::string bytes;
    llvm::raw_string_ostream os(bytes);
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
      error = d.str();
      return success();
    });
    TargetDescription target = cantFail(TargetDescription::parse("cpu"));
    if (failed(writeArtifact(*module, target, binary, os)))
      return std::nullopt;
    os.flush();
    Written w;
    dlcx_header_t header;
    std::memcpy(&header, bytes.data(), sizeof(header));
    std::vector<dlcx_launch_t> launches;
    std::vector<uint32_t> bindings;
    for (uint32_t i = 0; i < header.section_count; ++i) {
      dlcx_section_t s;
      std::memcpy(&s,
                  bytes.data() + header.section_table_offset + i * sizeof(s),
                  sizeof(s));
      const char *data = bytes.data() + s.offset;
      if (s.kind == DLCX_SECTION_TENSORS) {
        w.tensors.resize(s.size / sizeof(dlcx_tensor_t));
        std::memcpy(w.tensors.data(), data, s.size);
      } else if (s.kind == DLCX_SECTION_LAUNCHES) {
        launches.resize(s.size / sizeof(dlcx_launch_t));
        std::memcpy(launches.data(), data, s.size);
      } else if (s.kind == DLCX_SECTION_BINDINGS) {
        bindings.resize(s.size / sizeof(uint32_t));
        std::memcpy(bindings.data(), data, s.size);
      } else if (s.kind == DLCX_SECTION_MODEL) {
        std::memcpy(&w.model, data, sizeof(w.model));
      }
    }
    for (const dlcx_launch_t &l : launches)
      w.launchBindings.emplace_back(bindings.begin() + l.binding_begin,
                                    bindings.begin() + l.binding_begin +
                                        l.binding_count);
    return w;
  }

  MLIRContext context;
};

TEST_F(ArtifactWriterTest, ConcatOperandsLiveInsideTheResult) {
  // r = [[a, b], c]: a, b and c are written by their kernels straight into
  // r's buffer, which k3 reads.
  std::string error;
  std::optional<Written> w = write(hostProgram(R"(
  %a = dlc.launch @k1(%x) : (tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  %b = dlc.launch @k2(%a) : (tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  %ab = dlc.concat dim(1) %a, %b : (tensor<1x4x16xf32>, tensor<1x4x16xf32>) -> tensor<1x8x16xf32>
  %c = dlc.launch @k1(%x) : (tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  %r = dlc.concat dim(1) %ab, %c : (tensor<1x8x16xf32>, tensor<1x4x16xf32>) -> tensor<1x12x16xf32>
  %s = dlc.launch @k3(%r) : (tensor<1x12x16xf32>) -> tensor<1x12x16xf32>
  return %s : tensor<1x12x16xf32>)",
                                               "tensor<1x12x16xf32>"),
                                   error);
  ASSERT_TRUE(w) << error;
  ASSERT_EQ(w->launchBindings.size(), 4u);
  auto offset = [&](size_t launch, size_t binding) {
    const dlcx_tensor_t &t = w->tensors[w->launchBindings[launch][binding]];
    EXPECT_EQ(t.storage, DLCX_STORAGE_ARENA);
    return t.offset;
  };
  uint64_t r = offset(3, 0);
  const uint64_t part = 4 * 16 * sizeof(float);
  EXPECT_EQ(offset(0, 1), r);            // a
  EXPECT_EQ(offset(1, 0), r);            // a, read by k2
  EXPECT_EQ(offset(1, 1), r + part);     // b
  EXPECT_EQ(offset(2, 1), r + 2 * part); // c
  // The output of k3 is live at the same time as r: elsewhere.
  uint64_t s = offset(3, 1);
  EXPECT_TRUE(s + 3 * part <= r || r + 3 * part <= s);
  // The most bytes live at once are r's and s's, while k3 runs: a, b, c
  // and ab have no buffers of their own.
  EXPECT_EQ(w->model.arena_lower_bound, 2 * 3 * part);
}

TEST_F(ArtifactWriterTest, ConcatOfAGraphInputIsAnError) {
  std::string error;
  std::optional<Written> w = write(hostProgram(R"(
  %a = dlc.launch @k1(%x) : (tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  %r = dlc.concat dim(1) %x, %a : (tensor<1x4x16xf32>, tensor<1x4x16xf32>) -> tensor<1x8x16xf32>
  return %r : tensor<1x8x16xf32>)",
                                               "tensor<1x8x16xf32>"),
                                   error);
  EXPECT_FALSE(w);
  EXPECT_NE(error.find("an operand is not computed by a kernel"),
            std::string::npos)
      << error;
}

TEST_F(ArtifactWriterTest, ValueInTwoConcatsIsAnError) {
  std::string error;
  std::optional<Written> w = write(hostProgram(R"(
  %a = dlc.launch @k1(%x) : (tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  %b = dlc.launch @k2(%x) : (tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  %r = dlc.concat dim(1) %a, %b : (tensor<1x4x16xf32>, tensor<1x4x16xf32>) -> tensor<1x8x16xf32>
  %q = dlc.concat dim(1) %b, %a : (tensor<1x4x16xf32>, tensor<1x4x16xf32>) -> tensor<1x8x16xf32>
  return %r, %q : tensor<1x8x16xf32>, tensor<1x8x16xf32>)",
                                               "(tensor<1x8x16xf32>, "
                                               "tensor<1x8x16xf32>)"),
                                   error);
  EXPECT_FALSE(w);
  EXPECT_NE(error.find("already placed inside another concat's buffer"),
            std::string::npos)
      << error;
}

TEST_F(ArtifactWriterTest, ViewLivesInsideItsOperand) {
  // v is the second half of a; k2 reads it in place, and a's buffer stays
  // alive until then although no launch reads a itself.
  std::string error;
  std::optional<Written> w = write(R"(
func.func private @k1(tensor<1x4x16xf32>) -> tensor<1x8x16xf32> attributes {dlc.kernel}
func.func private @k2(tensor<1x4x16xf32>) -> tensor<1x4x16xf32> attributes {dlc.kernel}
func.func @main(%x: tensor<1x4x16xf32>) -> tensor<1x4x16xf32> {
  %a = dlc.launch @k1(%x) : (tensor<1x4x16xf32>) -> tensor<1x8x16xf32>
  %v = dlc.view %a[64] : tensor<1x8x16xf32> -> tensor<1x4x16xf32>
  %r = dlc.launch @k2(%v) : (tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  return %r : tensor<1x4x16xf32>
}
)",
                                   error);
  ASSERT_TRUE(w) << error;
  ASSERT_EQ(w->launchBindings.size(), 2u);
  const dlcx_tensor_t &a = w->tensors[w->launchBindings[0][1]];
  const dlcx_tensor_t &v = w->tensors[w->launchBindings[1][0]];
  const dlcx_tensor_t &r = w->tensors[w->launchBindings[1][1]];
  EXPECT_EQ(v.storage, DLCX_STORAGE_ARENA);
  EXPECT_EQ(v.offset, a.offset + 64 * sizeof(float));
  EXPECT_EQ(v.size, 64 * sizeof(float));
  // r is written while v (inside a) is read: not over a.
  EXPECT_TRUE(r.offset + r.size <= a.offset || a.offset + a.size <= r.offset);
}

TEST_F(ArtifactWriterTest, ViewOfAConstantIsAnError) {
  std::string error;
  std::optional<Written> w = write(hostProgram(R"(
  %c = arith.constant dense<1.0> : tensor<1x8x16xf32>
  %v = dlc.view %c[0] : tensor<1x8x16xf32> -> tensor<1x4x16xf32>
  %r = dlc.launch @k1(%v) : (tensor<1x4x16xf32>) -> tensor<1x4x16xf32>
  return %r : tensor<1x4x16xf32>)",
                                               "tensor<1x4x16xf32>"),
                                   error);
  EXPECT_FALSE(w);
  EXPECT_NE(error.find("the operand of a view is not in the arena"),
            std::string::npos)
      << error;
}

} // namespace

TEST_F(ArtifactWriterTest, NibbleInputsAndOutputsArePacked) {
  // An int4 input arrives as 3 packed bytes for 5 elements, is unpacked
  // into one byte per element, and leaves packed again as uint4.
  std::string error;
  std::optional<Written> w = write(R"(
func.func private @k1(tensor<3xi8>) -> tensor<5xi4> attributes {dlc.kernel}
func.func private @k2(tensor<5xi4>) -> tensor<3xi8> attributes {dlc.kernel}
func.func @main(%x: tensor<3xi8> {dlc.element_type = i4, dlc.packed_shape = array<i64: 5>})
    -> (tensor<3xi8> {dlc.element_type = ui4, dlc.packed_shape = array<i64: 5>}) {
  %u = dlc.launch @k1(%x) : (tensor<3xi8>) -> tensor<5xi4>
  %p = dlc.launch @k2(%u) : (tensor<5xi4>) -> tensor<3xi8>
  return %p : tensor<3xi8>
})",
                                   error);
  ASSERT_TRUE(w) << error;
  ASSERT_EQ(w->launchBindings.size(), 2u);
  const dlcx_tensor_t &in = w->tensors[w->launchBindings[0][0]];
  const dlcx_tensor_t &mid = w->tensors[w->launchBindings[0][1]];
  const dlcx_tensor_t &out = w->tensors[w->launchBindings[1][1]];
  EXPECT_EQ(in.dtype, DLCX_DTYPE_I4);
  EXPECT_EQ(in.rank, 1u);
  EXPECT_EQ(in.dims[0], 5);
  EXPECT_EQ(in.size, 3u);
  // Between kernels: a byte per element, described as such.
  EXPECT_EQ(mid.dtype, DLCX_DTYPE_I8);
  EXPECT_EQ(mid.dims[0], 5);
  EXPECT_EQ(mid.size, 5u);
  EXPECT_EQ(out.dtype, DLCX_DTYPE_U4);
  EXPECT_EQ(out.dims[0], 5);
  EXPECT_EQ(out.size, 3u);
}

TEST_F(ArtifactWriterTest, SmallFloatsKeepTheirFormat) {
  // Kernels hold 8- and 4-bit floats as bits (i8, i4); the artifact names
  // each input's and output's format, and FLOAT4E2M1 travels packed.
  std::string error;
  std::optional<Written> w = write(R"(
func.func private @k1(tensor<4xi8>) -> tensor<4xi8> attributes {dlc.kernel}
func.func private @k2(tensor<2xi8>) -> tensor<4xi8> attributes {dlc.kernel}
func.func @main(%x: tensor<4xi8> {dlc.element_type = f8E4M3FN},
                %y: tensor<2xi8> {dlc.element_type = f4E2M1FN, dlc.packed_shape = array<i64: 3>})
    -> (tensor<4xi8> {dlc.element_type = f8E5M2FNUZ}, tensor<4xi8>) {
  %r = dlc.launch @k1(%x) : (tensor<4xi8>) -> tensor<4xi8>
  %s = dlc.launch @k2(%y) : (tensor<2xi8>) -> tensor<4xi8>
  return %r, %s : tensor<4xi8>, tensor<4xi8>
})",
                                   error);
  ASSERT_TRUE(w) << error;
  ASSERT_EQ(w->launchBindings.size(), 2u);
  const dlcx_tensor_t &x = w->tensors[w->launchBindings[0][0]];
  const dlcx_tensor_t &r = w->tensors[w->launchBindings[0][1]];
  const dlcx_tensor_t &y = w->tensors[w->launchBindings[1][0]];
  EXPECT_EQ(x.dtype, DLCX_DTYPE_F8E4M3FN);
  EXPECT_EQ(x.size, 4u);
  EXPECT_EQ(y.dtype, DLCX_DTYPE_F4E2M1);
  EXPECT_EQ(y.dims[0], 3);
  EXPECT_EQ(y.size, 2u);
  EXPECT_EQ(r.dtype, DLCX_DTYPE_F8E5M2FNUZ);
}

namespace {

// The format's one table of element types numbers them as ONNX's
// TensorProto.DataType does (the ONNX dialect's table is the other side).
TEST(ArtifactFormat, DtypesAreNumberedAsOnnxNumbersThem) {
  size_t count;
  const dlcx_dtype_info_t *table = dlcx_dtype_table(&count);
  EXPECT_EQ(count, 21u);
  for (const dlcx_dtype_info_t &e : llvm::ArrayRef(table, count)) {
    std::string expected = e.long_name;
    if (expected == "float32")
      expected = "float";
    else if (expected == "float64")
      expected = "double";
    // ml_dtypes' names of the small floats: float8_e4m3fn is ONNX's
    // FLOAT8E4M3FN, float4_e2m1fn its FLOAT4E2M1, float8_e8m0fnu its
    // FLOAT8E8M0.
    if (dlcx_dtype_is_minifloat(e.number)) {
      llvm::erase(expected, '_');
      if (e.bits == 4)
        expected.resize(expected.size() - 2);
      if (e.number == DLCX_DTYPE_F8E8M0)
        expected.resize(expected.size() - 3);
    }
    for (char &c : expected)
      c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    EXPECT_EQ(onnx::getDataTypeName(e.number), expected)
        << "dtype " << e.number;
    EXPECT_EQ(dlcx_dtype_info(e.number), &e);
    EXPECT_EQ(dlcx_dtype_bits(e.number), e.bits);
  }
  // Lookups by kind and width find IEEE types only.
  EXPECT_EQ(dlcx_dtype_find('f', 8), 0u);
  EXPECT_EQ(dlcx_dtype_find('f', 4), 0u);
  EXPECT_EQ(dlcx_dtype_find('f', 16), static_cast<uint32_t>(DLCX_DTYPE_F16));
  EXPECT_EQ(dlcx_dtype_info(8), nullptr); // ONNX's STRING: not in artifacts
  EXPECT_EQ(dlcx_dtype_bits(8), 0u);
}

} // namespace

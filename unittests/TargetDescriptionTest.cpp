//===- TargetDescriptionTest.cpp - target specs ---------------------------===//

#include "dlc/Target/TargetDescription.h"

#include <gtest/gtest.h>

using namespace dlc;

namespace {

TargetDescription parseOk(llvm::StringRef spec) {
  llvm::Expected<TargetDescription> t = TargetDescription::parse(spec);
  EXPECT_TRUE(static_cast<bool>(t)) << spec.str();
  if (!t) {
    llvm::consumeError(t.takeError());
    return {};
  }
  return *t;
}

std::string parseError(llvm::StringRef spec) {
  llvm::Expected<TargetDescription> t = TargetDescription::parse(spec);
  EXPECT_FALSE(static_cast<bool>(t)) << spec.str();
  return t ? "" : llvm::toString(t.takeError());
}

TEST(TargetDescription, Host) {
  TargetDescription t = parseOk("cpu");
  EXPECT_EQ(t.kind, TargetKind::CPU);
  EXPECT_FALSE(t.triple.empty());
  EXPECT_TRUE(t.isHosted);
}

TEST(TargetDescription, CrossCPU) {
  TargetDescription t = parseOk("cpu:aarch64-linux-gnu");
  EXPECT_EQ(t.triple, "aarch64-unknown-linux-gnu");
  EXPECT_EQ(t.cpu, "generic");
  EXPECT_EQ(parseOk("cpu:riscv64-linux-gnu").str(),
            "cpu:riscv64-unknown-linux-gnu");
  EXPECT_NE(parseError("cpu:mips-linux-gnu").find("unsupported CPU target"),
            std::string::npos);
}

TEST(TargetDescription, Microcontroller) {
  // No OS: no loader, no threads, a Cortex-M4 unless --cpu says otherwise,
  // and little memory: scratch and stack budgets that hosted CPUs lack.
  TargetDescription m4 = parseOk("cpu:thumbv7em-none-eabihf");
  EXPECT_FALSE(m4.isHosted);
  EXPECT_EQ(m4.cpu, "cortex-m4");
  EXPECT_EQ(m4.vectorRegisters, 8u);
  EXPECT_EQ(m4.scratchBudget, 8192u);
  EXPECT_EQ(m4.stackTemporaryLimit, 512u);
  TargetDescription host = parseOk("cpu:x86_64-linux-gnu");
  EXPECT_TRUE(host.isHosted);
  EXPECT_EQ(host.scratchBudget, 0u);
  EXPECT_EQ(host.stackTemporaryLimit, 16384u);
  llvm::Expected<TargetDescription> m7 =
      TargetDescription::parse("cpu:thumbv7em-none-eabihf", "cortex-m7");
  ASSERT_TRUE(static_cast<bool>(m7));
  EXPECT_EQ(m7->cpu, "cortex-m7");
  llvm::Expected<TargetDescription> a53 =
      TargetDescription::parse("cpu:thumbv7em-none-eabihf", "cortex-a53");
  ASSERT_FALSE(static_cast<bool>(a53));
  EXPECT_NE(llvm::toString(a53.takeError()).find("not a Cortex-M with an FPU"),
            std::string::npos);
}

TEST(TargetDescription, VulkanFeatures) {
  TargetDescription base = parseOk("vulkan");
  EXPECT_FALSE(base.hasFloat16);
  EXPECT_FALSE(base.hasInt64);
  TargetDescription t = parseOk("vulkan:+fp16,+dot8");
  EXPECT_TRUE(t.hasFloat16);
  EXPECT_TRUE(t.hasInt8DotProduct);
  EXPECT_TRUE(t.hasInt8Storage) << "dot8 implies 8-bit storage";
  EXPECT_EQ(t.str(), "vulkan:+fp16,+int8,+dot8");
  EXPECT_FALSE(base.hasFloat64) << "mobile GPUs lack Float64";
  EXPECT_TRUE(parseOk("vulkan:+fp64").hasFloat64);
  EXPECT_EQ(parseOk("vulkan:+fp64,+fp16").str(), "vulkan:+fp16,+fp64");
  EXPECT_TRUE(parseOk("cpu").hasFloat64);
  EXPECT_TRUE(parseOk("cuda:sm_87").hasFloat64);
  EXPECT_NE(parseError("vulkan:+fp32").find("unknown Vulkan target feature"),
            std::string::npos);
}

TEST(TargetDescription, CUDA) {
  EXPECT_EQ(parseOk("cuda:sm_87").sm, 87u);
  EXPECT_NE(parseError("cuda:sm_70").find("unsupported CUDA architecture"),
            std::string::npos);
  EXPECT_NE(parseError("cuda").find("cuda:sm_XX"), std::string::npos);
  EXPECT_NE(parseError("tpu").find("unknown target"), std::string::npos);
}

// A CPU's integer dot products follow its features: VNNI's vpdpbusd, or
// on x86 without it two pmaddwd (exact) where the vectors have 16-bit
// integer lanes (not AVX alone); a byte shuffle across the vector only
// where one instruction does it.
TEST(TargetDescription, CPUInt8DotProducts) {
  TargetDescription vnni =
      parseOk("cpu:x86_64-linux-gnu:+avx512f,+avx512bw,+avx512vnni");
  EXPECT_TRUE(vnni.hasInt8DotProduct);
  EXPECT_FALSE(vnni.int8DotFromPairs);
  EXPECT_FALSE(vnni.hasBytePermute) << "no VBMI";
  EXPECT_TRUE(parseOk("cpu:x86_64-linux-gnu:+avx512f,+avx512bw,+avx512vbmi")
                  .hasBytePermute);

  TargetDescription avx2 = parseOk("cpu:x86_64-linux-gnu:+avx2,+fma");
  EXPECT_TRUE(avx2.hasInt8DotProduct);
  EXPECT_TRUE(avx2.int8DotFromPairs);
  EXPECT_FALSE(avx2.hasBytePermute);
  TargetDescription avxvnni = parseOk("cpu:x86_64-linux-gnu:+avx2,+avxvnni");
  EXPECT_TRUE(avxvnni.hasInt8DotProduct);
  EXPECT_FALSE(avxvnni.int8DotFromPairs);

  TargetDescription sse2 = parseOk("cpu:x86_64-linux-gnu");
  EXPECT_EQ(sse2.vectorBits, 128u);
  EXPECT_TRUE(sse2.int8DotFromPairs);

  // The even lanes of two vectors in one instruction: everywhere but AVX's
  // 256-bit shuffles, which stay within 128-bit halves.
  EXPECT_FALSE(avx2.hasTwoVectorPermute);
  EXPECT_FALSE(parseOk("cpu:x86_64-linux-gnu:+avx").hasTwoVectorPermute);
  EXPECT_TRUE(vnni.hasTwoVectorPermute) << "vpermt2ps";
  EXPECT_TRUE(sse2.hasTwoVectorPermute) << "shufps on 128 bits";
  EXPECT_TRUE(parseOk("cpu:aarch64-linux-gnu").hasTwoVectorPermute) << "uzp1";
  EXPECT_FALSE(parseOk("cpu:x86_64-linux-gnu:+avx").hasInt8DotProduct)
      << "AVX alone has no 256-bit integer vectors";

  TargetDescription a64 = parseOk("cpu:aarch64-linux-gnu");
  EXPECT_FALSE(a64.hasInt8DotProduct);
  EXPECT_FALSE(a64.int8DotFromPairs);
  EXPECT_TRUE(parseOk("cpu:aarch64-linux-gnu:+dotprod").hasInt8DotProduct);
}

// What codegen asks a target for instead of which target it is: a device
// profile is these values.
TEST(TargetDescription, CodegenCapabilities) {
  TargetDescription cpu = parseOk("cpu:aarch64-linux-gnu");
  EXPECT_FALSE(cpu.isGPU());
  EXPECT_EQ(cpu.bufferAlignment(), 64u);
  EXPECT_TRUE(cpu.privateMemorySpace.empty());

  TargetDescription vk = parseOk("vulkan");
  EXPECT_TRUE(vk.isGPU());
  EXPECT_EQ(vk.bufferAlignment(), 256u);
  EXPECT_EQ(vk.stagingBytes, 12288u);
  EXPECT_EQ(vk.privateMemorySpace, "#spirv.storage_class<Function>");
  EXPECT_EQ(vk.workgroupMemorySpace, "#spirv.storage_class<Workgroup>");
  EXPECT_FALSE(vk.hasSubgroupRowReductions);
  EXPECT_TRUE(parseOk("vulkan:+subgroup").hasSubgroupRowReductions);

  TargetDescription cuda = parseOk("cuda:sm_90");
  EXPECT_TRUE(cuda.isGPU());
  EXPECT_EQ(cuda.bufferAlignment(), 64u);
  EXPECT_EQ(cuda.stagingBytes, 32768u);
  EXPECT_LE(cuda.stagingBytes, cuda.sharedMemoryBytes);
  EXPECT_TRUE(cuda.privateMemorySpace.empty());
  EXPECT_EQ(cuda.workgroupMemorySpace, "#gpu.address_space<workgroup>");
  EXPECT_FALSE(cuda.hasSubgroupRowReductions);
}

} // namespace

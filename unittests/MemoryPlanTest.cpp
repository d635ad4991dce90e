//===- MemoryPlanTest.cpp - arena planning --------------------------------===//

#include "dlc/Target/Artifact.h"

#include <gtest/gtest.h>

#include <random>

using namespace dlc;

namespace {

bool overlapInTime(const BufferLifetime &a, const BufferLifetime &b) {
  return !(a.last < b.first || b.last < a.first);
}

/// No two buffers that are live at the same time share bytes.
void expectValid(const std::vector<BufferLifetime> &buffers,
                 const MemoryPlan &plan, uint64_t alignment) {
  ASSERT_EQ(plan.offsets.size(), buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    EXPECT_EQ(plan.offsets[i] % alignment, 0u);
    EXPECT_LE(plan.offsets[i] + buffers[i].size, plan.arenaSize);
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      if (!overlapInTime(buffers[i], buffers[j]))
        continue;
      bool disjoint = plan.offsets[i] + buffers[i].size <= plan.offsets[j] ||
                      plan.offsets[j] + buffers[j].size <= plan.offsets[i];
      EXPECT_TRUE(disjoint) << "buffers " << i << " and " << j;
    }
  }
  EXPECT_GE(plan.arenaSize, plan.lowerBound);
  EXPECT_LE(plan.arenaSize, plan.noReuseSize);
}

TEST(MemoryPlan, ChainReusesMemory) {
  // a -> b -> c -> d: only two buffers are ever live together.
  std::vector<BufferLifetime> buffers = {
      {1024, -1, 0}, {1024, 0, 1}, {1024, 1, 2}, {1024, 2, 3}};
  MemoryPlan plan = planMemory(buffers, 64);
  expectValid(buffers, plan, 64);
  EXPECT_EQ(plan.lowerBound, 2048u);
  EXPECT_EQ(plan.arenaSize, 2048u);
  EXPECT_EQ(plan.noReuseSize, 4096u);
}

TEST(MemoryPlan, SizesAreAligned) {
  std::vector<BufferLifetime> buffers = {{1, 0, 0}, {3, 0, 0}, {0, 0, 0}};
  MemoryPlan plan = planMemory(buffers, 64);
  expectValid(buffers, plan, 64);
  EXPECT_EQ(plan.arenaSize, 192u);
}

TEST(MemoryPlan, RandomLifetimesStayValid) {
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<BufferLifetime> buffers;
    int n = 1 + rng() % 40;
    for (int i = 0; i < n; ++i) {
      int64_t first = rng() % 30;
      buffers.push_back({static_cast<uint64_t>(1 + rng() % 100000), first,
                         first + static_cast<int64_t>(rng() % 10)});
    }
    MemoryPlan plan = planMemory(buffers, 64);
    expectValid(buffers, plan, 64);
  }
}

} // namespace

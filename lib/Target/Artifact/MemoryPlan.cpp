//===- MemoryPlan.cpp - arena offsets from buffer lifetimes ---------------===//

#include "dlc/Target/Artifact.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <map>
#include <numeric>

using namespace dlc;

static uint64_t alignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

MemoryPlan dlc::planMemory(const std::vector<BufferLifetime> &buffers,
                           uint64_t alignment) {
  MemoryPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  // Largest first; ties by earlier start, then index (deterministic).
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (buffers[a].size != buffers[b].size)
      return buffers[a].size > buffers[b].size;
    if (buffers[a].first != buffers[b].first)
      return buffers[a].first < buffers[b].first;
    return a < b;
  });
  std::vector<size_t> placed;
  for (size_t i : order) {
    const BufferLifetime &buf = buffers[i];
    uint64_t size = alignUp(std::max<uint64_t>(buf.size, 1), alignment);
    // Ranges already taken by buffers live at the same time, by offset.
    std::vector<std::pair<uint64_t, uint64_t>> taken;
    for (size_t j : placed) {
      const BufferLifetime &other = buffers[j];
      if (other.last < buf.first || buf.last < other.first)
        continue;
      taken.emplace_back(
          plan.offsets[j],
          plan.offsets[j] +
              alignUp(std::max<uint64_t>(other.size, 1), alignment));
    }
    llvm::sort(taken);
    // Best fit: the smallest gap that holds the buffer, else the end.
    uint64_t best = UINT64_MAX, bestGap = UINT64_MAX, cursor = 0;
    for (auto [begin, end] : taken) {
      if (begin > cursor && begin - cursor >= size &&
          begin - cursor < bestGap) {
        best = cursor;
        bestGap = begin - cursor;
      }
      cursor = std::max(cursor, end);
    }
    if (best == UINT64_MAX)
      best = cursor;
    plan.offsets[i] = best;
    plan.arenaSize = std::max(plan.arenaSize, best + size);
    placed.push_back(i);
  }
  // The lower bound: the most bytes live at any one launch.
  std::map<int64_t, int64_t> delta;
  for (const BufferLifetime &b : buffers) {
    int64_t size =
        static_cast<int64_t>(alignUp(std::max<uint64_t>(b.size, 1), alignment));
    delta[b.first] += size;
    delta[b.last + 1] -= size;
    plan.noReuseSize += size;
  }
  int64_t live = 0;
  for (auto [t, d] : delta) {
    live += d;
    plan.lowerBound = std::max<uint64_t>(plan.lowerBound, live);
  }
  return plan;
}

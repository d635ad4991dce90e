//===- RegisterTilePlanTest.cpp - dlc-cpu-register-tile's tile plan ------===//

#include "dlc/Codegen/RegisterTilePlan.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace dlc::codegen;
using namespace mlir;

namespace {

/// out[m][n] += A[m][k] * B[k][n] with loops (m, n, k): the vector
/// operand `a` is B (columns n), the broadcast one `b` is A (rows m).
struct Matmul {
  MLIRContext ctx;
  Contraction k;
  SmallVector<AffineMap> maps;
  Matmul() {
    AffineExpr m = getAffineDimExpr(0, &ctx), n = getAffineDimExpr(1, &ctx),
               r = getAffineDimExpr(2, &ctx);
    maps = {AffineMap::get(3, 0, {m, r}, &ctx),
            AffineMap::get(3, 0, {r, n}, &ctx),
            AffineMap::get(3, 0, {m, n}, &ctx)};
    k.a = 1;
    k.b = 0;
    k.f = 0;
    k.p = 1;
    k.reductions = {2};
  }
};

RegisterTileTarget avx512() {
  RegisterTileTarget t;
  t.vectorBits = 512;
  return t;
}

TEST(RegisterTilePlan, MatmulOnAVX512) {
  Matmul mm;
  std::optional<RegisterTilePlan> plan =
      planRegisterTile(mm.k, {16, 32, 64}, mm.maps, avx512(), true);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->lanes, 16);
  EXPECT_EQ(plan->vectors, 2);
  EXPECT_EQ(plan->block, 32);
  // 32 vector registers: 8 rows x 2 vectors of accumulators.
  EXPECT_EQ(plan->rows, 8);
  EXPECT_EQ(plan->fullRows, 16);
  EXPECT_EQ(plan->fullCols, 32);
  // A block reads (32 + 8) floats per step: 64 steps fit 64 KiB.
  EXPECT_EQ(plan->chunk, 64);
  // B (64 x 32) once and A (16 x 64) per column block (1), against A once
  // and B per row block (2): columns outermost.
  EXPECT_TRUE(plan->columnsOuter);
  EXPECT_FALSE(plan->splitPhases);
}

TEST(RegisterTilePlan, RowsFollowTheRegisterFile) {
  Matmul mm;
  RegisterTileTarget avx2; // 256 bits, 16 registers
  std::optional<RegisterTilePlan> plan =
      planRegisterTile(mm.k, {16, 32, 64}, mm.maps, avx2, true);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->lanes, 8);
  EXPECT_EQ(plan->rows, 4);
  EXPECT_EQ(plan->block, 16);
  // AArch64: 128-bit vectors, but 32 registers.
  RegisterTileTarget neon;
  neon.vectorBits = 128;
  neon.vectorRegisters = 32;
  plan = planRegisterTile(mm.k, {16, 32, 64}, mm.maps, neon, true);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->lanes, 4);
  EXPECT_EQ(plan->rows, 8);
}

TEST(RegisterTilePlan, Remainders) {
  Matmul mm;
  // 12 rows: 6 divides them (no remainder block); 13: none in (4, 8] does,
  // so blocks of 8 and one of 5. 112 columns: three full blocks of 32.
  std::optional<RegisterTilePlan> plan =
      planRegisterTile(mm.k, {12, 112, 64}, mm.maps, avx512(), true);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->rows, 6);
  EXPECT_EQ(plan->fullRows, 12);
  EXPECT_EQ(plan->fullCols, 96);
  plan = planRegisterTile(mm.k, {13, 112, 64}, mm.maps, avx512(), true);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->rows, 8);
  EXPECT_EQ(plan->fullRows, 8);
  // Fewer rows than a block: all of them.
  plan = planRegisterTile(mm.k, {3, 112, 64}, mm.maps, avx512(), true);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->rows, 3);
  EXPECT_EQ(plan->fullRows, 3);
}

TEST(RegisterTilePlan, AFewVectorsAreOneBlock) {
  Matmul mm;
  // 80 columns are 5 vectors: blocks of two would end in a block of one;
  // one block of five with 4 rows (20 accumulators) instead.
  std::optional<RegisterTilePlan> plan =
      planRegisterTile(mm.k, {192, 80, 64}, mm.maps, avx512(), true);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->vectors, 5);
  EXPECT_EQ(plan->rows, 4);
  EXPECT_EQ(plan->block, 80);
  EXPECT_EQ(plan->fullCols, 80);
  // 48 columns (3 vectors): 3 x 8.
  plan = planRegisterTile(mm.k, {192, 48, 64}, mm.maps, avx512(), true);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->vectors, 3);
  EXPECT_EQ(plan->rows, 8);
  // 7 vectors are too many for one block; 96 columns (6 vectors) end in a
  // whole block of two: both keep blocks of two.
  plan = planRegisterTile(mm.k, {192, 112, 64}, mm.maps, avx512(), true);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->vectors, 2);
  plan = planRegisterTile(mm.k, {192, 96, 64}, mm.maps, avx512(), true);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->vectors, 2);
  // AVX2 (16 registers of 8 lanes) keeps blocks of two (not measured).
  RegisterTileTarget avx2;
  plan = planRegisterTile(mm.k, {192, 40, 64}, mm.maps, avx2, true);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->vectors, 2);
  // Integer contractions keep their blocks.
  Matmul im;
  im.k.integer = true;
  plan = planRegisterTile(im.k, {192, 80, 64}, im.maps, avx512(), true);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->vectors, 2);
}

TEST(RegisterTilePlan, OneRowTakesUpToEightVectors) {
  Matmul mm;
  // A matrix-vector product (one row) of 128 columns: one block of 8
  // vectors, 8 independent accumulators, rather than 4 blocks of 2.
  std::optional<RegisterTilePlan> plan =
      planRegisterTile(mm.k, {1, 128, 512}, mm.maps, avx512(), true);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->rows, 1);
  EXPECT_EQ(plan->vectors, 8);
  EXPECT_EQ(plan->block, 128);
  EXPECT_EQ(plan->fullCols, 128);
  // 200 columns (13 vectors): two blocks as even as they come (7 + 6).
  plan = planRegisterTile(mm.k, {1, 200, 512}, mm.maps, avx512(), true);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->vectors, 7);
  EXPECT_EQ(plan->fullCols, 112);
  // The same on AVX2's 16 registers (x86 multiply-adds read the loaded
  // operand from memory): 64 columns, 8 vectors of 8.
  RegisterTileTarget avx2;
  plan = planRegisterTile(mm.k, {1, 64, 512}, mm.maps, avx2, true);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->vectors, 8);
  // A Cortex-M FPU's 8 registers of 4 lanes: 4 vectors.
  RegisterTileTarget m4;
  m4.vectorBits = 128;
  m4.vectorRegisters = 8;
  plan = planRegisterTile(mm.k, {1, 64, 512}, mm.maps, m4, true);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->vectors, 4);
  // Several rows keep blocks of two; so do integer products.
  plan = planRegisterTile(mm.k, {2, 128, 512}, mm.maps, avx512(), true);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->vectors, 2);
  Matmul im;
  im.k.integer = true;
  plan = planRegisterTile(im.k, {1, 128, 512}, im.maps, avx512(), true);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->vectors, 2);
}

TEST(RegisterTilePlan, BlockFactorsHalveTheTile) {
  // out[m][n] += A[m][kb][j] * dequant(Q[kb][j][n]), loops (m, n, kb, j),
  // the scale per block kb: a block's own sums sit beside the
  // accumulators, so a tile holds half as many of each.
  MLIRContext ctx;
  auto d = [&](unsigned i) { return getAffineDimExpr(i, &ctx); };
  SmallVector<AffineMap> maps = {AffineMap::get(4, 0, {d(0), d(2), d(3)}, &ctx),
                                 AffineMap::get(4, 0, {d(2), d(3), d(1)}, &ctx),
                                 AffineMap::get(4, 0, {d(0), d(1)}, &ctx)};
  Contraction k;
  k.a = 1;
  k.b = 0;
  k.f = 0;
  k.p = 1;
  k.reductions = {2, 3};
  k.dequant = true;
  k.aInputs = {1};
  k.blockInner = 1;
  RegisterTileTarget avx2;
  std::optional<RegisterTilePlan> plan =
      planRegisterTile(k, {1, 256, 8, 16}, maps, avx512(), true);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->vectors, 8); // 16 of 32 registers
  plan = planRegisterTile(k, {1, 256, 8, 16}, maps, avx2, true);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->vectors, 4); // 8 of 16
  plan = planRegisterTile(k, {8, 256, 8, 16}, maps, avx512(), true);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->rows, 4);
  EXPECT_EQ(plan->vectors, 2);
  // Without block factors, the one-row tile of any matrix-vector product.
  k.blockInner = 0;
  plan = planRegisterTile(k, {1, 256, 8, 16}, maps, avx2, true);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->vectors, 8);
}

TEST(RegisterTilePlan, LongReductionsRunInChunks) {
  Matmul mm;
  // 4096 steps of 160 bytes exceed 64 KiB: 409 would fit, 256 divides.
  std::optional<RegisterTilePlan> plan =
      planRegisterTile(mm.k, {16, 32, 4096}, mm.maps, avx512(), true);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->chunk, 256);
  RegisterTileTarget small = avx512();
  small.chunkBytes = 1; // at least one step per chunk
  plan = planRegisterTile(mm.k, {16, 32, 4096}, mm.maps, small, true);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->chunk, 1);
}

TEST(RegisterTilePlan, NoTripsNoPlan) {
  Matmul mm;
  EXPECT_FALSE(planRegisterTile(mm.k, {16, 0, 64}, mm.maps, avx512(), true));
}

/// out[f][oh][ow] += x[c][2 oh + kh][2 ow + kw] * w[f][c][kh][kw], loops
/// (f, oh, ow, c, kh, kw): rows f, columns ow, `a` = x at stride 2.
TEST(RegisterTilePlan, StrideTwoWindowsSplitPhases) {
  MLIRContext ctx;
  auto d = [&](unsigned i) { return getAffineDimExpr(i, &ctx); };
  SmallVector<AffineMap> maps = {
      AffineMap::get(6, 0, {d(3), d(1) * 2 + d(4), d(2) * 2 + d(5)}, &ctx),
      AffineMap::get(6, 0, {d(0), d(3), d(4), d(5)}, &ctx),
      AffineMap::get(6, 0, {d(0), d(1), d(2)}, &ctx)};
  Contraction k;
  k.a = 0;
  k.b = 1;
  k.f = 0;
  k.p = 2;
  k.outer = {1};
  k.reductions = {3, 4, 5};
  k.stride = 2;
  SmallVector<int64_t> trips = {64, 28, 28, 32, 3, 3};
  std::optional<RegisterTilePlan> plan =
      planRegisterTile(k, trips, maps, avx512(), true);
  ASSERT_TRUE(plan);
  EXPECT_TRUE(plan->splitPhases);
  // `a` reads through the outer loop (oh): rows stay outermost.
  EXPECT_FALSE(plan->columnsOuter);
  // Not without a static `a`, nor when the rows are a's (depthwise) and
  // one instruction takes the even lanes of two vectors; without that
  // instruction (AVX2) a depthwise `a` splits too.
  plan = planRegisterTile(k, trips, maps, avx512(), false);
  EXPECT_FALSE(plan->splitPhases);
  k.rowsInA = true;
  plan = planRegisterTile(k, trips, maps, avx512(), true);
  EXPECT_FALSE(plan->splitPhases);
  RegisterTileTarget inLaneShuffles;
  inLaneShuffles.twoVectorPermute = false;
  plan = planRegisterTile(k, trips, maps, inLaneShuffles, true);
  EXPECT_TRUE(plan->splitPhases);
  // A depthwise `a` that is a padded tile splits on AVX-512 too (the split
  // replaces the tile's copy); its blocks then keep a quarter of the
  // registers in accumulators, half that when the shuffles stay.
  plan = planRegisterTile(k, trips, maps, avx512(), true, /*aPadded=*/true);
  EXPECT_TRUE(plan->splitPhases);
  EXPECT_EQ(plan->rows * plan->vectors, 8);
  plan = planRegisterTile(k, trips, maps, avx512(), true, /*aPadded=*/false);
  EXPECT_EQ(plan->rows * plan->vectors, 4);
  // Nor for integer contractions.
  k.rowsInA = false;
  k.integer = true;
  plan = planRegisterTile(k, trips, maps, avx512(), true);
  EXPECT_FALSE(plan->splitPhases);
}

} // namespace

// Split and coarsen (spec §3.2): values are extensive, the totals are kept, and coarsening the
// 8 children of a split restores the parent.
#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>

#include "stencil/block.hpp"
#include "stencil/block_pool.hpp"
#include "stencil/exact_sum.hpp"
#include "stencil/init_values.hpp"
#include "stencil/split_coarsen.hpp"
#include "stencil/stencil_kernels.hpp"

namespace miniamr::stencil {
namespace {

const BlockShape kShape{4, 2, 6, 2};

// Interior cell value coding variable and position, with ghosts set to a sentinel.
Block coded_block(double tag) {
  Block b(kShape);
  std::fill_n(b.data(), kShape.doubles(), -1.0);
  for (int v = 0; v < kShape.num_vars; ++v)
    for (int i = 1; i <= kShape.nx; ++i)
      for (int j = 1; j <= kShape.ny; ++j)
        for (int k = 1; k <= kShape.nz; ++k)
          b.var(v)[kShape.at(i, j, k)] = tag + 1000.0 * v + 100.0 * i + 10.0 * j + k;
  return b;
}

double at(const Block& b, int v, int i, int j, int k) {
  return b.var(v)[b.shape().at(i, j, k)];
}

TEST(StencilSplit, ChildCellsAreParentEighths) {
  const Block parent = coded_block(0);
  // Hand-checked: octant 5 = (ox,oy,oz) = (1,0,1) covers parent i 3..4, j 1, k 4..6.
  const Block c5 = split_child(parent, 5);
  EXPECT_EQ(at(c5, 0, 1, 1, 1), at(parent, 0, 3, 1, 4) / 8.0);
  EXPECT_EQ(at(c5, 0, 2, 2, 2), at(parent, 0, 3, 1, 4) / 8.0);
  EXPECT_EQ(at(c5, 1, 3, 1, 6), at(parent, 1, 4, 1, 6) / 8.0);
  EXPECT_EQ(at(c5, 1, 4, 2, 5), at(parent, 1, 4, 1, 6) / 8.0);
  for (int octant = 0; octant < 8; ++octant) {
    const Block c = split_child(parent, octant);
    const int ox = (octant & 1) * 2, oy = (octant >> 1 & 1) * 1, oz = (octant >> 2 & 1) * 3;
    for (int v = 0; v < 2; ++v)
      for (int i = 0; i <= 5; ++i)
        for (int j = 0; j <= 3; ++j)
          for (int k = 0; k <= 7; ++k) {
            const bool ghost = i == 0 || j == 0 || k == 0 || i == 5 || j == 3 || k == 7;
            const double want =
                ghost ? 0.0
                      : at(parent, v, ox + (i + 1) / 2, oy + (j + 1) / 2, oz + (k + 1) / 2) / 8;
            ASSERT_EQ(at(c, v, i, j, k), want) << octant << " " << v << " " << i << j << k;
          }
  }
}

TEST(StencilSplit, CoarsenSumsChildrenInOrder) {
  std::array<Block, 8> kids;
  for (int o = 0; o < 8; ++o) kids[o] = coded_block(10000.0 * o);
  // Make the addition order visible in one cell: parent (1,1,1) of octant 0 sums child cells
  // (1,1,1),(2,1,1),(1,2,1),(2,2,1),(1,1,2),(2,1,2),(1,2,2),(2,2,2); with huge values only the
  // stated left-to-right order gives this result.
  Block& k0 = kids[0];
  const double vals[8] = {1e16, 1.0, -1e16, 1.0, 3.0, 1e-3, 7.0, 0.5};
  const int idx[8][3] = {{1, 1, 1}, {2, 1, 1}, {1, 2, 1}, {2, 2, 1},
                         {1, 1, 2}, {2, 1, 2}, {1, 2, 2}, {2, 2, 2}};
  for (int n = 0; n < 8; ++n) k0.var(0)[kShape.at(idx[n][0], idx[n][1], idx[n][2])] = vals[n];
  double want = vals[0];
  for (int n = 1; n < 8; ++n) want += vals[n];
  double reversed = vals[7];
  for (int n = 6; n >= 0; --n) reversed += vals[n];
  ASSERT_NE(want, reversed);  // the order is observable
  std::array<const Block*, 8> ptrs;
  for (int o = 0; o < 8; ++o) ptrs[o] = &kids[o];
  const Block p = coarsen(ptrs);
  EXPECT_EQ(at(p, 0, 1, 1, 1), want);
  // Another cell: parent (4,2,6) is octant 7's child cells (3..4, 1..2, 5..6).
  double s = 0;
  bool first = true;
  for (int dk = 0; dk < 2; ++dk)
    for (int dj = 0; dj < 2; ++dj)
      for (int di = 0; di < 2; ++di) {
        const double x = at(kids[7], 1, 3 + di, 1 + dj, 5 + dk);
        s = first ? x : s + x;
        first = false;
      }
  EXPECT_EQ(at(p, 1, 4, 2, 6), s);
  for (int v = 0; v < 2; ++v) {  // ghosts are zero
    EXPECT_EQ(at(p, v, 0, 1, 1), 0.0);
    EXPECT_EQ(at(p, v, 5, 3, 7), 0.0);
  }
}

TEST(StencilSplit, RoundTripConservesAndRestores) {
  Block parent(kShape);
  fill_initial(parent, {4, 2, 6}, 0, 99);
  std::array<Block, 8> kids;
  std::array<const Block*, 8> ptrs;
  for (int o = 0; o < 8; ++o) {
    kids[o] = split_child(parent, o);
    ptrs[o] = &kids[o];
  }
  for (int v = 0; v < kShape.num_vars; ++v) {
    ExactSum children;
    for (const Block& c : kids) children.add(interior_sum(c, v));
    const double total = interior_sum(parent, v);
    EXPECT_NEAR(children.value(), total, 1e-13 * total);
  }
  const Block back = coarsen(ptrs);
  for (int v = 0; v < kShape.num_vars; ++v)
    for (int i = 1; i <= kShape.nx; ++i)
      for (int j = 1; j <= kShape.ny; ++j)
        for (int k = 1; k <= kShape.nz; ++k) {
          const double want = at(parent, v, i, j, k);
          ASSERT_NEAR(at(back, v, i, j, k), want, 4e-16 * want);
        }
  // With values that are exact in 8ths the round trip is exact.
  const Block coded = coded_block(0);
  std::array<Block, 8> ck;
  for (int o = 0; o < 8; ++o) {
    ck[o] = split_child(coded, o);
    ptrs[o] = &ck[o];
  }
  const Block cb = coarsen(ptrs);
  for (int v = 0; v < 2; ++v)
    for (int i = 1; i <= kShape.nx; ++i)
      for (int j = 1; j <= kShape.ny; ++j)
        for (int k = 1; k <= kShape.nz; ++k) ASSERT_EQ(at(cb, v, i, j, k), at(coded, v, i, j, k));
}

// Every cell of a and b, compared as bits (a NaN left behind would compare unequal as a value).
void expect_same_bits(const Block& a, const Block& b) {
  ASSERT_EQ(a.shape(), b.shape());
  for (std::size_t n = 0; n < a.shape().doubles(); ++n)
    ASSERT_EQ(std::bit_cast<std::uint64_t>(a.data()[n]), std::bit_cast<std::uint64_t>(b.data()[n]))
        << n;
}

TEST(StencilSplit, RecycledStorageGivesTheSameBlocks) {
  // Storage from the pool holds the last block's values: splitting and coarsening into it must
  // overwrite every cell, ghosts included, and match blocks made in fresh storage.
  BlockPool pool;
  Block used(kShape);
  std::fill_n(used.data(), kShape.doubles(), std::nan(""));
  const double* storage = used.data();
  pool.give(used);
  EXPECT_TRUE(used.empty());
  const Block parent = coded_block(0);
  Block child = pool.take(kShape);
  EXPECT_EQ(child.data(), storage);  // the spare storage, not a new allocation
  EXPECT_EQ(pool.size(), 0u);
  split_child_into(parent, 6, child);
  expect_same_bits(child, split_child(parent, 6));

  std::array<Block, 8> kids;
  std::array<const Block*, 8> ptrs;
  for (int o = 0; o < 8; ++o) {
    kids[o] = coded_block(100.0 * o);
    ptrs[o] = &kids[o];
  }
  pool.give(child);
  Block merged = pool.take(kShape);
  std::fill_n(merged.data(), kShape.doubles(), std::nan(""));
  coarsen_into(ptrs, merged);
  expect_same_bits(merged, coarsen(ptrs));
}

TEST(StencilSplit, PoolFreesStorageOfAnotherShape) {
  BlockPool pool;
  Block other(BlockShape{2, 2, 2, 1});
  pool.give(other);
  const Block b = pool.take(kShape);
  EXPECT_EQ(b.shape(), kShape);
  EXPECT_EQ(pool.size(), 0u);
  Block empty;
  pool.give(empty);  // nothing to keep
  EXPECT_EQ(pool.size(), 0u);
}

TEST(StencilSplit, PoolMapsAheadWhatTheLastStepDrew) {
  BlockPool pool;
  EXPECT_FALSE(pool.map_ahead(kShape, 0));  // nothing expected yet
  // A step that draws three blocks, none spare: all three fresh.
  std::array<Block, 3> made{pool.take(kShape), pool.take(kShape), pool.take(kShape)};
  EXPECT_EQ(pool.drawn(), 3u);
  EXPECT_EQ(pool.mapped_on_take(), 3u);
  pool.give(made[0]);  // one left the mesh again
  pool.expect(pool.drawn());
  EXPECT_EQ(pool.drawn(), 0u);
  // One spare block is held, so two more are mapped, one per call.
  EXPECT_TRUE(pool.wants_more(2));
  EXPECT_TRUE(pool.map_ahead(kShape, 2));
  // A block taken between two mappings (one arriving by migration) is part of the draw.
  Block arrived = pool.take(kShape);
  EXPECT_EQ(pool.drawn(), 1u);
  EXPECT_TRUE(pool.map_ahead(kShape, 3));
  EXPECT_TRUE(pool.map_ahead(kShape, 3));
  EXPECT_FALSE(pool.wants_more(3));
  EXPECT_FALSE(pool.map_ahead(kShape, 3));
  EXPECT_EQ(pool.size(), 3u);
  EXPECT_EQ(pool.mapped_ahead(), 3u);
  // The next step takes them without mapping anything.
  const Block a = pool.take(kShape);
  Block b = pool.take(kShape);
  pool.give(b);  // the draw is the deepest point, not the takes counted
  const Block c = pool.take(kShape);
  const Block d = pool.take(kShape);
  EXPECT_EQ(pool.size(), 0u);
  EXPECT_EQ(pool.mapped_on_take(), 3u);
  EXPECT_EQ(pool.drawn(), 4u);
  const Block e = pool.take(kShape);  // one more than was spare
  EXPECT_EQ(pool.mapped_on_take(), 4u);
  EXPECT_EQ(pool.drawn(), 5u);
  pool.expect(0);
  EXPECT_FALSE(pool.map_ahead(kShape, 0));
}

TEST(StencilSplit, PoolMapsAheadWithinItsCapAndStopsWhenMemoryRunsOut) {
  BlockPool pool;
  pool.expect(5, /*cap=*/4);  // the budget holds 4 blocks, 2 of them in the mesh
  EXPECT_TRUE(pool.map_ahead(kShape, 2));
  EXPECT_TRUE(pool.map_ahead(kShape, 2));
  EXPECT_FALSE(pool.map_ahead(kShape, 2));
  EXPECT_EQ(pool.size(), 2u);
  // Storage no system can map (8e18 bytes): no error, and no more asking.
  const BlockShape huge{100000, 100000, 100000, 1000};
  pool.expect(3);
  EXPECT_TRUE(pool.wants_more(0));
  EXPECT_FALSE(pool.map_ahead(huge, 0));
  EXPECT_FALSE(pool.wants_more(0));
  EXPECT_FALSE(pool.map_ahead(kShape, 0));
  EXPECT_EQ(pool.size(), 2u);
  EXPECT_EQ(pool.mapped_ahead(), 2u);
}

// Storage of the test's own: one static arena, counted, standing for storage shared elsewhere.
struct ArenaStorage {
  static inline int made = 0;
  static inline int freed = 0;
  static void free(double*) { ++freed; }
  static Block make(const BlockShape& shape) {
    alignas(64) static double arena[16384];
    EXPECT_LE(shape.doubles(), std::size(arena));
    ++made;
    return Block::adopt(shape, arena, &ArenaStorage::free);
  }
};

TEST(StencilSplit, PoolGivenAMakerTakesItsStorageFromItAndMapsNoneAhead) {
  ArenaStorage::made = ArenaStorage::freed = 0;
  {
    BlockPool pool(&ArenaStorage::make);
    const Block first = pool.make(kShape);  // the mesh's first blocks: not counted as drawn
    EXPECT_EQ(pool.drawn(), 0u);
    Block a = pool.take(kShape);
    Block b = pool.take(kShape);
    EXPECT_EQ(ArenaStorage::made, 3);
    EXPECT_EQ(a.data(), b.data());  // both from the maker's one arena
    EXPECT_EQ(pool.mapped_on_take(), 2u);
    pool.give(b);
    EXPECT_EQ(pool.take(kShape).data(), a.data());  // a spare one is still recycled
    EXPECT_EQ(ArenaStorage::made, 3);
    pool.expect(4);
    EXPECT_FALSE(pool.wants_more(0));
    EXPECT_FALSE(pool.map_ahead(kShape, 0));
    EXPECT_EQ(pool.mapped_ahead(), 0u);
  }
  EXPECT_EQ(ArenaStorage::freed, 3);  // each block gave its storage back the maker's way
}

TEST(StencilSplit, PoolMapsALargeBlockPieceByPiece) {
  // 8^3 cells x 40 variables: 320 KB, mapped 64 KiB a call so that a poller stays responsive.
  const BlockShape large{8, 8, 8, 40};
  BlockPool pool;
  pool.expect(1);
  int calls = 0;
  while (pool.map_ahead(large, 0)) ++calls;
  EXPECT_GE(calls, 5);
  EXPECT_LE(calls, 7);
  EXPECT_EQ(pool.size(), 1u);
  EXPECT_EQ(pool.mapped_ahead(), 1u);
  // A block started is finished even when no more are wanted.
  pool.expect(2);
  EXPECT_TRUE(pool.map_ahead(large, 0));
  pool.expect(0);
  EXPECT_TRUE(pool.wants_more(0));
  while (pool.map_ahead(large, 0)) {
  }
  EXPECT_EQ(pool.size(), 2u);
  const Block b = pool.take(large);
  EXPECT_EQ(b.shape(), large);
  EXPECT_EQ(pool.mapped_on_take(), 0u);
}

}  // namespace
}  // namespace miniamr::stencil

// Block storage in huge-page slabs (stencil/block_arena.hpp): where blocks' storage comes from,
// that it is reused and returned, and that blocks never share it.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <thread>
#include <vector>

#include "stencil/block.hpp"
#include "stencil/block_arena.hpp"

namespace miniamr::stencil {
namespace {

std::uintptr_t address(const Block& b) {
  return reinterpret_cast<std::uintptr_t>(b.data());
}

// Each test below takes a slot size no other test uses, so that it starts with no slab of that
// size.

TEST(SlabLayout, SlotsFitTheirSlabAndWasteLittleOfIt) {
  for (const std::size_t bytes :
       {std::size_t(64) << 10, std::size_t(100000), std::size_t(320000), std::size_t(1) << 20,
        std::size_t(1500000), std::size_t(2097216), std::size_t(3) << 20, std::size_t(40) << 20}) {
    const SlabLayout l = slab_layout(bytes);
    EXPECT_GE(l.slot, bytes);
    EXPECT_EQ(l.slot % 64, 0u) << bytes;
    EXPECT_EQ(l.slab % kHugePageBytes, 0u) << bytes;
    ASSERT_GE(l.slots, 1u) << bytes;
    EXPECT_LE(l.slots * l.slot, l.slab) << bytes;
    const std::size_t waste = l.slab - l.slots * l.slot;
    EXPECT_TRUE(waste * 16 <= l.slab || (l.slots == 1 && waste < kHugePageBytes))
        << bytes << " bytes: " << l.slots << " slots of " << l.slot << " waste " << waste;
  }
  // The block of the two-sphere deck (8^3 cells, 40 variables, 320,000 bytes): six to one huge
  // page would waste 8%, thirteen to two waste 1%.
  const SlabLayout deck = slab_layout(BlockShape{8, 8, 8, 40}.doubles() * sizeof(double));
  EXPECT_EQ(deck.slab, 2 * kHugePageBytes);
  EXPECT_EQ(deck.slots, 13u);
}

TEST(BlockArena, LargeBlocksComeFromHugePageAlignedSlabs) {
  if (!kBlockArena) GTEST_SKIP() << "blocks stay on the heap under AddressSanitizer";
  const BlockShape shape{8, 8, 8, 37};
  ASSERT_GE(shape.doubles() * sizeof(double), kSlabMinBytes);
  const SlabUsage before = slab_usage();
  Block b(shape);
  const SlabUsage after = slab_usage();
  EXPECT_EQ(after.blocks, before.blocks + 1);
  EXPECT_EQ(after.slabs, before.slabs + 1);
  // The first slot of a new slab is its start, on a huge page boundary.
  EXPECT_EQ(address(b) % kHugePageBytes, 0u);
  b = Block();
  EXPECT_EQ(slab_usage().blocks, before.blocks);
}

TEST(BlockArena, StorageMappedAheadHasSlabsOfItsOwn) {
  if (!kBlockArena) GTEST_SKIP() << "blocks stay on the heap under AddressSanitizer";
  const BlockShape shape{8, 8, 8, 29};
  const SlabUsage before = slab_usage();
  const Block made(shape);
  const std::optional<Block> ahead = Block::reserved(shape);
  ASSERT_TRUE(ahead.has_value());
  // Two slabs of one slot size: small pages for what is mapped while waiting for messages.
  EXPECT_EQ(slab_usage().blocks, before.blocks + 2);
  EXPECT_EQ(slab_usage().slabs, before.slabs + 2);
  EXPECT_EQ(address(made) % kHugePageBytes, 0u);
  EXPECT_EQ(address(*ahead) % kHugePageBytes, 0u);
}

TEST(BlockArena, BlocksOfOneVariableComeFromSlabs) {
  if (!kBlockArena) GTEST_SKIP() << "blocks stay on the heap under AddressSanitizer";
  // The -ci decks' block: 10^3 cells of one variable, 8,000 bytes, two pages.
  const BlockShape shape{8, 8, 8, 1};
  const SlabUsage before = slab_usage();
  const Block b(shape);
  EXPECT_EQ(slab_usage().blocks, before.blocks + 1);
  EXPECT_EQ(address(b) % 64, 0u);
}

TEST(BlockArena, SmallBlocksStayOnTheHeap) {
  const SlabUsage before = slab_usage();
  const Block b(BlockShape{4, 4, 4, 1});
  EXPECT_EQ(slab_usage().blocks, before.blocks);
  EXPECT_EQ(address(b) % 64, 0u);
}

TEST(BlockArena, FreedStorageIsReusedAndEmptySlabsReturned) {
  if (!kBlockArena) GTEST_SKIP() << "blocks stay on the heap under AddressSanitizer";
  const BlockShape shape{8, 8, 8, 35};
  const SlabLayout layout = slab_layout(shape.doubles() * sizeof(double));
  const SlabUsage before = slab_usage();
  {
    Block a(shape);
    const std::uintptr_t at = address(a);
    a = Block();
    const Block again(shape);
    EXPECT_EQ(address(again), at) << "the freed slot is taken again";
  }
  // Two slabs and a block: freed, all but one empty slab go back to the system.
  std::vector<Block> blocks;
  for (std::size_t i = 0; i < 2 * layout.slots + 1; ++i) blocks.emplace_back(shape);
  EXPECT_EQ(slab_usage().slabs, before.slabs + 3);
  EXPECT_EQ(slab_usage().bytes, before.bytes + 3 * layout.slab);
  blocks.clear();
  const SlabUsage after = slab_usage();
  EXPECT_EQ(after.blocks, before.blocks);
  EXPECT_EQ(after.slabs, before.slabs + 1) << "one empty slab of the size is kept";
}

TEST(BlockArena, BlocksNeverShareStorage) {
  const BlockShape shape{8, 8, 8, 33};
  std::vector<Block> blocks;
  for (int i = 0; i < 20; ++i) {
    blocks.emplace_back(shape);
    if (i % 3 == 2) blocks.erase(blocks.begin() + i / 2);  // free some in between
  }
  for (std::size_t i = 0; i < blocks.size(); ++i)
    std::fill_n(blocks[i].data(), shape.doubles(), double(i));
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    EXPECT_EQ(address(blocks[i]) % 64, 0u);
    for (std::size_t d = 0; d < shape.doubles(); d += 97) ASSERT_EQ(blocks[i].data()[d], double(i));
    EXPECT_EQ(blocks[i].data()[shape.doubles() - 1], double(i));
  }
}

TEST(BlockArena, ThreadsMakeAndFreeBlocksAtOnce) {
  const BlockShape shape{8, 8, 8, 31};
  const SlabUsage before = slab_usage();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      std::vector<Block> mine;
      for (int i = 0; i < 50; ++i) {
        mine.emplace_back(shape);
        mine.back().data()[0] = t;
        if (i % 2 == 1) mine.erase(mine.begin());
      }
      for (const Block& b : mine) EXPECT_EQ(b.data()[0], t);
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(slab_usage().blocks, before.blocks);
}

}  // namespace
}  // namespace miniamr::stencil

// Storage for values nobody reads: one buffer per process, which grows and never moves what
// it handed out; outside the simulation build the blocks keep storage of their own.
#include <gtest/gtest.h>

#include <cstdint>

#include "comm/shared_storage.hpp"

using miniamr::comm::shared_block_storage;
using miniamr::comm::shared_doubles;

TEST(SharedStorage, EveryCallerGetsTheSameBufferUntilOneNeedsMore) {
  double* a = shared_doubles(100);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % 64, 0u);
  EXPECT_EQ(shared_doubles(100), a);
  EXPECT_EQ(shared_doubles(1), a);
  EXPECT_EQ(shared_doubles(0), a);
  a[99] = 1.5;  // the whole request is there to write
  double* b = shared_doubles(1 << 20);
  EXPECT_NE(b, a);  // a larger buffer...
  b[(1 << 20) - 1] = 2.5;
  EXPECT_EQ(a[99], 1.5);  // ...and the older one stays for those pointing into it
  EXPECT_EQ(shared_doubles(100), b);
}

TEST(SharedStorage, BlocksAreSharedOnlyInTheSimulationBuild) {
#ifdef MINIAMR_SIMGRID
  EXPECT_NE(shared_block_storage(), nullptr);
#else
  EXPECT_EQ(shared_block_storage(), nullptr);  // each rank a process with blocks of its own
#endif
}

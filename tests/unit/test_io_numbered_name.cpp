#include <gtest/gtest.h>

#include "io/numbered_name.hpp"

namespace {

using miniamr::io::numbered_name;

TEST(NumberedName, TakesTheNumberBetweenHeadAndTail) {
  EXPECT_EQ(numbered_name("checkpoint.000120.h5", "checkpoint.", ".h5", 6), 120);
  EXPECT_EQ(numbered_name("checkpoint.1234567.h5", "checkpoint.", ".h5", 6), 1234567);
  EXPECT_EQ(numbered_name("plot.5.xmf", "plot.", ".xmf"), 5);
  EXPECT_EQ(numbered_name("plot.0000.vtkhdf", "plot.", ".vtkhdf"), 0);
}

TEST(NumberedName, RefusesEveryOtherName) {
  EXPECT_FALSE(numbered_name("checkpoint.00120.h5", "checkpoint.", ".h5", 6));  // too few digits
  EXPECT_FALSE(numbered_name("checkpoint.000120.h5.tmp", "checkpoint.", ".h5", 6));
  EXPECT_FALSE(numbered_name(".checkpoint.000120.h5", "checkpoint.", ".h5", 6));
  EXPECT_FALSE(numbered_name("checkpoint.0001x0.h5", "checkpoint.", ".h5", 6));
  EXPECT_FALSE(numbered_name("checkpoint.-00120.h5", "checkpoint.", ".h5", 6));
  EXPECT_FALSE(numbered_name("checkpoint.99999999999.h5", "checkpoint.", ".h5", 6));  // > int
  EXPECT_FALSE(numbered_name("plot..xmf", "plot.", ".xmf"));                          // no digit
  EXPECT_FALSE(numbered_name("plot.5.xmfx", "plot.", ".xmf"));
  EXPECT_FALSE(numbered_name("plot.xmf", "plot.", ".xmf"));
}

}  // namespace

// Text that a YAML reader would take for a number, a truth value or null is written quoted.
#include <gtest/gtest.h>

#include "io/yaml_text.hpp"

namespace {

using miniamr::io::yaml_plain_misreads;

TEST(YamlText, NumbersTruthValuesAndNullAreMisread) {
  // Git revisions of decimal digits (one abbreviated hash in about 27), with a leading zero
  // (octal in YAML 1.1) or an exponent.
  EXPECT_TRUE(yaml_plain_misreads("5514524"));
  EXPECT_TRUE(yaml_plain_misreads("0597512"));
  EXPECT_TRUE(yaml_plain_misreads("1e52343"));
  EXPECT_TRUE(yaml_plain_misreads("-12.5"));
  EXPECT_TRUE(yaml_plain_misreads("123456789012345678901234567890"));
  EXPECT_TRUE(yaml_plain_misreads("0x1f"));
  EXPECT_TRUE(yaml_plain_misreads("Yes"));
  EXPECT_TRUE(yaml_plain_misreads("off"));
  EXPECT_TRUE(yaml_plain_misreads("NULL"));
  EXPECT_TRUE(yaml_plain_misreads("~"));
  EXPECT_TRUE(yaml_plain_misreads(""));
}

TEST(YamlText, TextStaysText) {
  EXPECT_FALSE(yaml_plain_misreads("5514524-dirty"));
  EXPECT_FALSE(yaml_plain_misreads("071fcf2"));
  EXPECT_FALSE(yaml_plain_misreads("abc1234"));
  EXPECT_FALSE(yaml_plain_misreads("miniamr"));
  EXPECT_FALSE(yaml_plain_misreads("0xzz"));
  EXPECT_FALSE(yaml_plain_misreads("-"));
}

}  // namespace

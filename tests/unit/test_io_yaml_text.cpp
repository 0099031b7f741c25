// Text that a YAML reader would take for a number, a truth value or null is written quoted.
#include <gtest/gtest.h>

#include "io/yaml_text.hpp"

namespace {

using miniamr::io::yaml_plain_misreads;

TEST(YamlText, NumbersTruthValuesAndNullAreMisread) {
  // Git revisions of decimal digits (one abbreviated hash in about 27), with a leading zero
  // (octal in YAML 1.1) or an exponent; YAML 1.1's base 60 (a --slow_rank 1:2 read as 62).
  for (const char* text :
       {"5514524", "0597512", "1e52343", "-12.5", "123456789012345678901234567890", "0x1f", "1_000",
        "1:2", "Yes", "off", "NULL", "~", ""})
    EXPECT_TRUE(yaml_plain_misreads(text)) << text;
}

TEST(YamlText, TextStaysText) {
  for (const char* text : {"5514524-dirty", "071fcf2", "abc1234", "miniamr", "0xzz", "-", "0-3:2"})
    EXPECT_FALSE(yaml_plain_misreads(text)) << text;
}

}  // namespace

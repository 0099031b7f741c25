// Reading miniamr-netbench's model.yaml: a good file, and every kind of bad one refused with a
// message naming the file and the problem.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "app/errors.hpp"
#include "app/link_model_file.hpp"

namespace miniamr::app {
namespace {

using ::testing::HasSubstr;

constexpr const char* kGood =
    "# written by miniamr-netbench 0.1.0\n"
    "model: alpha-beta\n"
    "source: {config: 'bench/netbench.yaml', ranks: 4, nodes: 2, date: '2024-01-01T00:00:00Z'}\n"
    "pair_classes:\n"
    "  same_node: {latency_s: 3.1e-07, bandwidth_Bps: 1.8e+09, points: 10, max_rel_residual: 0.2}\n"
    "  other_node: {latency_s: 1.5e-06, bandwidth_Bps: 1.2e+10, points: 9}\n"
    "loggp:\n"
    "  same_node: {L_s: 1e-7, o_s: 1e-7, g_s: 2e-7, G_s_per_byte: 5e-10}\n";

std::string error_of(const std::string& text) {
  try {
    parse_link_models(text, "m.yaml");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

// kGood with the same_node entry replaced.
std::string with_same_node(const std::string& entry) {
  return "model: alpha-beta\npair_classes:\n  same_node: " + entry + "\n";
}

TEST(LinkModelFile, ReadsBothClasses) {
  const LinkModels m = parse_link_models(kGood, "m.yaml");
  ASSERT_TRUE(m.same_node && m.other_node);
  EXPECT_DOUBLE_EQ(m.same_node->latency_s, 3.1e-7);
  EXPECT_DOUBLE_EQ(m.same_node->bandwidth_Bps, 1.8e9);
  EXPECT_DOUBLE_EQ(m.other_node->latency_s, 1.5e-6);
  EXPECT_DOUBLE_EQ(m.other_node->bandwidth_Bps, 1.2e10);
}

TEST(LinkModelFile, AClassMayBeAbsent) {
  const LinkModels m = parse_link_models(with_same_node("{latency_s: 0, bandwidth_Bps: 1e9}"), "m");
  ASSERT_TRUE(m.same_node);
  EXPECT_EQ(m.same_node->latency_s, 0);
  EXPECT_FALSE(m.other_node);
}

TEST(LinkModelFile, MissingKeys) {
  EXPECT_THAT(error_of("pair_classes: {same_node: {latency_s: 1, bandwidth_Bps: 1}}\n"),
              HasSubstr("m.yaml: the key 'model' is missing"));
  EXPECT_THAT(error_of("model: alpha-beta\n"),
              HasSubstr("m.yaml: the key 'pair_classes' is missing"));
  EXPECT_THAT(error_of(with_same_node("{bandwidth_Bps: 1e9}")),
              HasSubstr("pair_classes.same_node: the key 'latency_s' is missing"));
  EXPECT_THAT(error_of(with_same_node("{latency_s: 1e-6}")),
              HasSubstr("the key 'bandwidth_Bps' is missing"));
  EXPECT_THAT(error_of("model: alpha-beta\npair_classes: {}\n"),
              HasSubstr("pair_classes must map same_node and/or other_node"));
}

TEST(LinkModelFile, ValuesOutOfRange) {
  EXPECT_THAT(error_of(with_same_node("{latency_s: -1e-6, bandwidth_Bps: 1e9}")),
              HasSubstr("m.yaml:3: pair_classes.same_node.latency_s must be a finite number >= 0, "
                        "got '-1e-6'"));
  EXPECT_THAT(error_of(with_same_node("{latency_s: 1e-6, bandwidth_Bps: 0}")),
              HasSubstr("bandwidth_Bps must be a finite number > 0, got '0'"));
  EXPECT_THAT(error_of(with_same_node("{latency_s: 1e-6, bandwidth_Bps: -5}")),
              HasSubstr("bandwidth_Bps must be a finite number > 0"));
  EXPECT_THAT(error_of(with_same_node("{latency_s: .inf, bandwidth_Bps: 1e9}")),
              HasSubstr("latency_s must be a finite number"));
  EXPECT_THAT(error_of(with_same_node("{latency_s: .nan, bandwidth_Bps: 1e9}")),
              HasSubstr("latency_s must be a finite number"));
  EXPECT_THAT(error_of(with_same_node("{latency_s: 1e-6, bandwidth_Bps: fast}")),
              HasSubstr("got 'fast'"));
}

TEST(LinkModelFile, WrongKindOrClass) {
  EXPECT_THAT(error_of("model: loggp\npair_classes: {}\n"),
              HasSubstr("m.yaml: model 'loggp' is not supported (expected alpha-beta)"));
  EXPECT_THAT(error_of("model: alpha-beta\npair_classes:\n  same_rack: {latency_s: 1, "
                       "bandwidth_Bps: 1}\n"),
              HasSubstr("unknown pair class 'same_rack' (expected same_node or other_node)"));
  EXPECT_THAT(error_of(with_same_node("3")), HasSubstr("pair_classes.same_node must be a map"));
}

TEST(LinkModelFile, NotYaml) {
  EXPECT_THAT(error_of("model: [alpha\n"), HasSubstr("m.yaml:"));
  EXPECT_THAT(error_of("model: [alpha\n"), HasSubstr("not valid YAML"));
  EXPECT_THAT(error_of(""), HasSubstr("not a miniamr-netbench model file"));
  EXPECT_THAT(error_of("\x01\x02 garbage"), HasSubstr("not a miniamr-netbench model file"));
}

}  // namespace
}  // namespace miniamr::app

// miniamr-netbench's config: a good file, the message sizes of a range, and every kind of bad
// input with a message naming the file, the line, the test and the problem.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "app/errors.hpp"
#include "netbench/cli.hpp"
#include "netbench/config.hpp"
#include "netbench/config_file.hpp"

namespace miniamr::netbench {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The message of the UsageError that parsing `text` throws ("" if none is thrown).
std::string error_of(const std::string& text) {
  try {
    parse_config(text, "nb.yaml");
  } catch (const app::UsageError& e) {
    return e.what();
  }
  return "";
}

// A one-test config with `entry` as its test.
std::string one(const std::string& entry) {
  return "tests:\n  - " + entry + "\n";
}

TEST(NetbenchConfig, ReadsEveryTestAndItsDefaults) {
  const BenchConfig c = parse_config(
      "# comment\n"
      "tests:\n"
      "  - {name: pingpong, sizes: {min: 8, max: 1024, factor: 4}, reps: 5, warmup: 1}\n"
      "  - {name: stream, sizes: {min: 8, max: 64, factor: 2}, reps: 3, window: 4}\n"
      "  - name: bidirectional\n"
      "    sizes: {min: 1, max: 1, factor: 2}\n"
      "    reps: 2\n"
      "  - {name: allreduce, sizes: {min: 8, max: 8, factor: 2}, reps: 1}\n"
      "  - {name: neighbour_exchange, sizes: {min: 8, max: 8, factor: 2}, reps: 1, "
      "neighbours: 3}\n",
      "nb.yaml");
  ASSERT_EQ(c.tests.size(), 5u);
  EXPECT_EQ(c.tests[0].kind, TestKind::kPingPong);
  EXPECT_EQ(c.tests[0].sizes.min_bytes, 8);
  EXPECT_EQ(c.tests[0].sizes.max_bytes, 1024);
  EXPECT_EQ(c.tests[0].sizes.factor, 4);
  EXPECT_EQ(c.tests[0].reps, 5);
  EXPECT_EQ(c.tests[0].warmup, 1);
  EXPECT_EQ(c.tests[1].kind, TestKind::kStream);
  EXPECT_EQ(c.tests[1].window, 4);
  EXPECT_EQ(c.tests[1].warmup, 0);
  EXPECT_EQ(c.tests[2].kind, TestKind::kBidirectional);
  EXPECT_EQ(c.tests[2].window, 16);
  EXPECT_EQ(c.tests[3].kind, TestKind::kAllreduce);
  EXPECT_EQ(c.tests[4].kind, TestKind::kNeighbourExchange);
  EXPECT_EQ(c.tests[4].neighbours, 3);
}

TEST(NetbenchConfig, TheShippedConfigParses) {
  // The file the regression test and the README run: every test, once.
  const std::string path = std::string(MINIAMR_INPUTS) + "/../bench/netbench.yaml";
  const BenchConfig c = parse_config(read_config_text(path), path);
  EXPECT_EQ(c.tests.size(), 5u);
}

TEST(NetbenchConfig, SizesGrowByTheFactorUpToMax) {
  EXPECT_THAT(message_sizes({8, 1024, 4}), ElementsAre(8, 32, 128, 512));
  EXPECT_THAT(message_sizes({8, 8, 2}), ElementsAre(8));
  // A factor near 1 still moves on by at least a byte.
  EXPECT_THAT(message_sizes({1, 4, 1.1}), ElementsAre(1, 2, 3, 4));
  EXPECT_THAT(message_sizes({10, 40, 1.5}), ElementsAre(10, 15, 23, 35));
}

TEST(NetbenchConfig, SyntaxErrorsNameTheLine) {
  const std::string e = error_of("tests:\n  - {name: pingpong, sizes: {min: 8\n");
  EXPECT_THAT(e, HasSubstr("nb.yaml:"));
  EXPECT_THAT(e, HasSubstr("not valid YAML"));
}

TEST(NetbenchConfig, TopLevelProblems) {
  EXPECT_THAT(error_of(""), HasSubstr("nb.yaml: expected a map with the key 'tests'"));
  EXPECT_THAT(error_of("- 1\n"), HasSubstr("expected a map with the key 'tests'"));
  EXPECT_THAT(error_of("test: []\n"), HasSubstr("nb.yaml:1: unknown key 'test' at the top level"));
  EXPECT_THAT(error_of("tests: []\n"), HasSubstr("'tests' must be a non-empty list"));
  EXPECT_THAT(error_of("tests:\n"), HasSubstr("the key 'tests' is missing"));
}

TEST(NetbenchConfig, UnknownTestsAndKeys) {
  EXPECT_THAT(error_of(one("{name: pingpoing, sizes: {min: 8, max: 8, factor: 2}, reps: 1}")),
              HasSubstr("nb.yaml:2: tests[0]: unknown test 'pingpoing' (expected pingpong"));
  EXPECT_THAT(
      error_of(one("{name: pingpong, sizes: {min: 8, max: 8, factor: 2}, reps: 1, repz: 2}")),
      HasSubstr("tests[0] (pingpong): unknown key 'repz' (expected name, sizes, reps, warmup)"));
  EXPECT_THAT(
      error_of(one("{name: pingpong, sizes: {min: 8, max: 8, factor: 2}, reps: 1, window: 2}")),
      HasSubstr("unknown key 'window'"));
  EXPECT_THAT(error_of(one("{name: stream, sizes: {min: 8, max: 8, factor: 2, step: 1}, reps: 1}")),
              HasSubstr("tests[0] (stream): unknown key 'sizes.step' (expected min, max, factor)"));
  EXPECT_THAT(error_of("tests:\n"
                       "  - {name: allreduce, sizes: {min: 8, max: 8, factor: 2}, reps: 1}\n"
                       "  - {name: allreduce, sizes: {min: 8, max: 8, factor: 2}, reps: 1}\n"),
              HasSubstr("nb.yaml:3: tests[1] (allreduce): this test is already tests[0]"));
  EXPECT_THAT(error_of("tests:\n  - 3\n"), HasSubstr("tests[0]: a test is a map"));
}

TEST(NetbenchConfig, MissingKeys) {
  EXPECT_THAT(error_of(one("{sizes: {min: 8, max: 8, factor: 2}, reps: 1}")),
              HasSubstr("tests[0]: the key 'name' is missing"));
  EXPECT_THAT(error_of(one("{name: stream, reps: 1}")),
              HasSubstr("tests[0] (stream): the key 'sizes' is missing"));
  EXPECT_THAT(error_of(one("{name: stream, sizes: {min: 8, max: 8, factor: 2}}")),
              HasSubstr("the key 'reps' is missing"));
  EXPECT_THAT(error_of(one("{name: stream, sizes: {min: 8, factor: 2}, reps: 1}")),
              HasSubstr("the key 'sizes.max' is missing"));
  EXPECT_THAT(error_of(one("{name: stream, sizes: {min: 8, max: 8}, reps: 1}")),
              HasSubstr("the key 'sizes.factor' is missing"));
}

TEST(NetbenchConfig, ValuesOutOfRange) {
  EXPECT_THAT(
      error_of(one("{name: pingpong, sizes: {min: -8, max: 8, factor: 2}, reps: 1}")),
      HasSubstr("tests[0] (pingpong): 'sizes.min' must be between 1 and 268435456, got -8"));
  EXPECT_THAT(error_of(one("{name: pingpong, sizes: {min: 0, max: 8, factor: 2}, reps: 1}")),
              HasSubstr("'sizes.min' must be between 1"));
  EXPECT_THAT(error_of(one("{name: pingpong, sizes: {min: 16, max: 8, factor: 2}, reps: 1}")),
              HasSubstr("sizes.min 16 is larger than sizes.max 8"));
  EXPECT_THAT(error_of(one("{name: pingpong, sizes: {min: 8, max: 16, factor: 1}, reps: 1}")),
              HasSubstr("'sizes.factor' must be above 1 and at most 1024, got 1"));
  EXPECT_THAT(error_of(one("{name: pingpong, sizes: {min: 8, max: 16, factor: -2}, reps: 1}")),
              HasSubstr("'sizes.factor' must be above 1"));
  EXPECT_THAT(error_of(one("{name: pingpong, sizes: {min: 8, max: 16, factor: 2}, reps: 0}")),
              HasSubstr("'reps' must be at least 1, got 0"));
  // Too many is said as such, not as "at least 1".
  EXPECT_THAT(error_of(one("{name: pingpong, sizes: {min: 8, max: 16, factor: 2}, reps: 1000001}")),
              HasSubstr("'reps' must be at most 1000000, got 1000001"));
  EXPECT_THAT(
      error_of(one("{name: pingpong, sizes: {min: 8, max: 16, factor: 2}, reps: 1, warmup: -1}")),
      HasSubstr("'warmup' must be at least 0, got -1"));
  EXPECT_THAT(
      error_of(one("{name: stream, sizes: {min: 8, max: 16, factor: 2}, reps: 1, window: 0}")),
      HasSubstr("'window' must be between 1 and 1024, got 0"));
  EXPECT_THAT(error_of(one("{name: stream, sizes: {min: 8, max: 268435456, factor: 2}, reps: 1, "
                           "window: 1024}")),
              HasSubstr("need more than the 1024 MiB of buffers"));
}

TEST(NetbenchConfig, ValuesThatAreNotNumbers) {
  EXPECT_THAT(error_of(one("{name: pingpong, sizes: {min: 8.5, max: 16, factor: 2}, reps: 1}")),
              HasSubstr("'sizes.min' expects an integer, got '8.5'"));
  EXPECT_THAT(error_of(one("{name: pingpong, sizes: {min: 8, max: 16, factor: x}, reps: 1}")),
              HasSubstr("'sizes.factor' expects a number, got 'x'"));
  EXPECT_THAT(error_of(one("{name: pingpong, sizes: {min: 8, max: 16, factor: 2}, reps: [1]}")),
              HasSubstr("'reps' expects an integer, got a list"));
  EXPECT_THAT(error_of(one("{name: pingpong, sizes: 8, reps: 1}")),
              HasSubstr("'sizes' expects a map"));
}

TEST(NetbenchCommandLine, OptionsAndTheirErrors) {
  const auto parse = [](std::vector<std::string> args) { return parse_command_line(args); };
  const CommandLine cl = parse({"--config", "a.yaml", "--out", "o", "--no-plots"});
  EXPECT_EQ(cl.config_path, "a.yaml");
  EXPECT_EQ(cl.out_dir, "o");
  EXPECT_FALSE(cl.plots);
  EXPECT_TRUE(parse({"--help"}).help);
  EXPECT_TRUE(parse({"--version"}).version);
  const auto error = [&](std::vector<std::string> args) -> std::string {
    try {
      parse(args);
    } catch (const app::UsageError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(error({"--config", "a", "--out", "o", "--bogus"}), "unknown option '--bogus'");
  EXPECT_EQ(error({"--config", "a", "--out", "o", "extra"}), "unknown argument 'extra'");
  EXPECT_EQ(error({"--out", "o"}), "--config FILE is required");
  EXPECT_EQ(error({"--config", "a"}), "--out DIR is required");
  EXPECT_EQ(error({"--config"}), "missing value for --config");
  EXPECT_EQ(error({"--config", "a", "--config", "b", "--out", "o"}), "--config is given twice");
}

}  // namespace
}  // namespace miniamr::netbench

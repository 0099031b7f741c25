// Reading a compute calibration for --compute model: one size or several, the cost a rank is
// charged at its own working set, and bad files refused with a message naming the problem.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "app/calibration_file.hpp"
#include "app/errors.hpp"

namespace miniamr::app {
namespace {

using ::testing::DoubleNear;
using ::testing::HasSubstr;

constexpr const char* kOneSize =
    "seconds_per_update:\n"
    "  static: {stencil7: 2.0e-9, stencil27: 4.0e-9, variable: 3.0e-9}\n"
    "  dynamic: {stencil7: 2.5e-9, stencil27: 4.5e-9, variable: 3.5e-9}\n";

// Two sizes a hundred times apart: 1 ns per update from cache, 3 ns from memory.
constexpr const char* kTwoSizes =
    "seconds_per_update:\n"
    "  static: {stencil7: 2.0e-9, stencil27: 4.0e-9, variable: 3.0e-9}\n"
    "  dynamic: {stencil7: 2.5e-9, stencil27: 4.5e-9, variable: 3.5e-9}\n"
    "working_sets:\n"
    "  - bytes: 1.0e6\n"
    "    seconds_per_update:\n"
    "      static: {stencil7: 1.0e-9, stencil27: 2.0e-9, variable: 1.5e-9}\n"
    "      dynamic: {stencil7: 1.0e-9, stencil27: 2.0e-9, variable: 1.5e-9}\n"
    "  - bytes: 1.0e8\n"
    "    seconds_per_update:\n"
    "      static: {stencil7: 3.0e-9, stencil27: 6.0e-9, variable: 4.5e-9}\n"
    "      dynamic: {stencil7: 3.0e-9, stencil27: 6.0e-9, variable: 4.5e-9}\n";

std::string error_of(const std::string& text) {
  try {
    parse_calibration(text, "c.yaml", "static");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(CalibrationFile, OneSizeChargesTheSameAtEveryWorkingSet) {
  const auto model = parse_calibration(kOneSize, "c.yaml", "dynamic");
  for (const double bytes : {0.0, 1e3, 1e12}) {
    EXPECT_DOUBLE_EQ(model.at(bytes).per_update(7), 2.5e-9);
    EXPECT_DOUBLE_EQ(model.at(bytes).per_update(27), 4.5e-9);
    EXPECT_DOUBLE_EQ(model.at(bytes).per_update(0), 3.5e-9);
  }
  EXPECT_DOUBLE_EQ(runtime::sweep_seconds(model.at(0), 7, 512, 40), 2.5e-9 * 512 * 40);
}

TEST(CalibrationFile, WorkingSetsInterpolateInTheLogarithmOfTheSizeAndHoldAtTheEnds) {
  const auto model = parse_calibration(kTwoSizes, "c.yaml", "static");
  ASSERT_EQ(model.points.size(), 2u);
  EXPECT_DOUBLE_EQ(model.at(1e3).per_update(7), 1.0e-9);  // below the smallest: held
  EXPECT_DOUBLE_EQ(model.at(1e6).per_update(7), 1.0e-9);
  EXPECT_THAT(model.at(1e7).per_update(7), DoubleNear(2.0e-9, 1e-18));  // halfway in log
  EXPECT_THAT(model.at(1e7).per_update(27), DoubleNear(4.0e-9, 1e-18));
  EXPECT_DOUBLE_EQ(model.at(1e8).per_update(0), 4.5e-9);
  EXPECT_DOUBLE_EQ(model.at(1e11).per_update(7), 3.0e-9);  // above the largest: held
}

TEST(CalibrationFile, BadFilesAreRefusedWithTheProblemNamed) {
  EXPECT_THAT(error_of("seconds_per_update: [1, 2\n"), HasSubstr("c.yaml:"));
  EXPECT_THAT(error_of("machine: x\n"), HasSubstr("not a miniamr compute calibration"));
  EXPECT_THAT(error_of("seconds_per_update:\n  dynamic: {stencil7: 1, stencil27: 1, "
                       "variable: 1}\n"),
              HasSubstr("seconds_per_update has no map for the static runtime"));
  EXPECT_THAT(error_of("seconds_per_update:\n  static: {stencil7: 1e-9, stencil27: -1, "
                       "variable: 1e-9}\n"),
              HasSubstr("seconds_per_update.static.stencil27 must be a finite number > 0"));
  EXPECT_THAT(error_of(std::string(kOneSize) + "working_sets: 3\n"),
              HasSubstr("working_sets must be a list"));
  EXPECT_THAT(error_of(std::string(kOneSize) + "working_sets:\n  - seconds_per_update: {}\n"),
              HasSubstr("working_sets[0].bytes must be a finite number > 0"));
  std::string unsorted = kTwoSizes;
  unsorted.replace(unsorted.find("1.0e8"), 5, "1.0e5");
  EXPECT_THAT(error_of(unsorted), HasSubstr("working_sets[1].bytes must be larger"));
  std::string missing = kTwoSizes;
  missing.replace(missing.find("stencil27: 6.0e-9"), 17, "stencil9: 6.0e-9");
  EXPECT_THAT(error_of(missing),
              HasSubstr("working_sets[1].seconds_per_update.static: the key 'stencil27' is "
                        "missing"));
}

}  // namespace
}  // namespace miniamr::app

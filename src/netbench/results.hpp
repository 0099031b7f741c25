// What a measurement leaves: one row per test, pair and message size, as results.csv holds it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "netbench/config.hpp"

namespace miniamr::netbench {

struct ResultRow {
  TestKind test = TestKind::kPingPong;
  std::string pair_class;        // "same_node", "other_node", or "all" for collective tests
  int rank_a = -1, rank_b = -1;  // the pair (-1 for collective tests)
  int ranks = 0;                 // ranks taking part
  std::int64_t bytes = 0;        // one message
  int messages = 1;              // per repetition on one rank (window, neighbours)
  int reps = 0;
  double t_min_s = 0, t_median_s = 0, t_max_s = 0;  // per repetition
  double bandwidth_Bps = 0;                         // bytes * messages / t_median_s
  double send_overhead_s = -1;                      // stream: median time in one MPI_Isend
};

// The row of one size's repetition times (not empty).
ResultRow summarise(TestKind test, std::int64_t bytes, int messages,
                    std::span<const double> seconds, std::span<const double> send_overhead_s);

// The median of non-empty values.
double median(std::vector<double> values);

// The CSV text, with a header line; times and bandwidths to 7 significant digits.
std::string results_csv(std::span<const ResultRow> rows);

}  // namespace miniamr::netbench

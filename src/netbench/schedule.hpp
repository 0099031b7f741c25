// The scheduler's plan: which test runs between which ranks, in which order. Rank 0 makes it
// from the config and the topology it gathered, and every rank follows the copy it broadcasts.
#pragma once

#include <string>
#include <vector>

#include <mpi.h>

#include "netbench/config.hpp"
#include "netbench/topology.hpp"

namespace miniamr::netbench {

struct Step {
  int test = 0;   // index into BenchConfig::tests
  int pair = -1;  // index into Schedule::pairs, or -1: every rank (collective tests)
};

struct Schedule {
  int ranks = 1, nodes = 1;
  std::vector<RankPair> pairs;
  // One test at a time, every other rank waiting: no step's messages share a link with
  // another's.
  std::vector<Step> steps;
  std::vector<std::string> notes;  // what is skipped and why, for rank 0 to print
};

// Each point-to-point test once per representative pair (same node first), collective tests on
// every rank, in the config's order.
Schedule make_schedule(const BenchConfig& config, const Topology& topology);

// Collective: rank 0's schedule on every rank (`schedule` matters on rank 0 only; notes stay
// there).
Schedule broadcast_schedule(const Schedule& schedule, MPI_Comm comm);

}  // namespace miniamr::netbench

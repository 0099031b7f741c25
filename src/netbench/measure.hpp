// Running a schedule: every rank walks the same steps; the ranks of a step measure, the others
// wait at the step's closing barrier, and rank 0 collects the times.
#pragma once

#include <cstdio>
#include <vector>

#include <mpi.h>

#include "netbench/config.hpp"
#include "netbench/results.hpp"
#include "netbench/schedule.hpp"

namespace miniamr::netbench {

// Collective over comm. The rows on rank 0, in the schedule's order and by size (empty
// elsewhere). Rank 0 prints one line per step to `progress` (null: nothing).
std::vector<ResultRow> run_schedule(const BenchConfig& config, const Schedule& schedule,
                                    MPI_Comm comm, std::FILE* progress);

}  // namespace miniamr::netbench

// Checkpoints: the whole state a run needs to continue, in one parallel HDF5 file per checkpoint
// (every rank writes its blocks at once, collective MPI-IO), and the restart from one on any
// rank count and either runtime, bitwise equal to the run that was never interrupted.
//
// A checkpoint is written to a temporary name, synced, and renamed to
// DIR/checkpoint.<timestep>.h5; only the last --checkpoint_keep stay. A run killed while
// writing leaves at most a temporary file, and the previous checkpoint intact.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "app/config.hpp"
#include "app/run_stats.hpp"
#include "runtime/domain.hpp"
#include "runtime/mpi.hpp"
#include "sfc/curve.hpp"

namespace miniamr::app {

// Where the time loop stands after a timestep, besides the blocks.
struct RunPoint {
  int timestep = 0;  // the last timestep done
  double sim_time = 0, delta = 0;
  std::int64_t calc_stage = 0;  // stages run since the start (the variable-work kernels read it)
  std::vector<Object> objects;  // where the objects are now
  std::vector<double> previous_sums;
  RunStats stats;  // global counters, mesh history, initial checksums
};

// The options that define the numbers a run computes, as (name, value) with exact values; a
// restart must give the same. The others only say how to run (ranks, runtime, threads, output,
// balancing) and may change, and --num_tsteps may extend the run.
std::vector<std::pair<std::string, std::string>> numerics_of(const Config& config);

// The file name of the checkpoint after timestep `ts`, inside `dir`.
std::string checkpoint_path(const std::string& dir, int ts);

// Collective. Writes the checkpoint after `point.timestep` into config.checkpoint_dir and keeps
// the newest config.checkpoint_keep. Throws RunError on every rank when any part fails.
void write_checkpoint(const Config& config, const runtime::Communicator& comm,
                      const runtime::Domain& domain, const RunPoint& point);

// Collective. The file --restart names: the file itself, or the newest checkpoint in a
// directory. Throws UsageError on every rank when there is none.
std::string find_checkpoint(const std::string& spec, MPI_Comm comm);

// Collective. Reads the checkpoint at `path`: this rank's share of the blocks (an even cut of
// the `ownership` curve) into `domain` (grid, shape, leaves, blocks, cost) and the rest into the
// result. Throws UsageError on every rank for a file that is not a complete miniamr checkpoint
// of this version, whose contents fail their checksum, or whose numerics differ from `config`'s
// (naming the options).
RunPoint read_checkpoint(const std::string& path, const Config& config,
                         const runtime::Communicator& comm, sfc::Curve ownership,
                         runtime::Domain& domain);

}  // namespace miniamr::app

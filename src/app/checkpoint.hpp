// Checkpoints: the whole state a run needs to continue, in one parallel HDF5 file per checkpoint
// (every rank writes its blocks at once, collective MPI-IO), and the restart from one on any
// rank count and either runtime, bitwise equal to the run that was never interrupted.
//
// A checkpoint is written to a fresh temporary name of its own (io::create_temporary), synced,
// and renamed to DIR/checkpoint.<timestep>.h5; of the checkpoints this run wrote, the last
// --checkpoint_keep stay (other runs' files in the folder are never removed). One run at a time
// writes into a folder (a lock taken at start-up). A run killed while writing leaves at most a
// temporary file, and the previous checkpoint intact. Every attribute and every value is covered
// by the file's digest, so a damaged file is refused before any of it is used.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "app/config.hpp"
#include "app/run_stats.hpp"
#include "comm/mpi.hpp"
#include "io/folder_lock.hpp"
#include "mesh/domain.hpp"
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

// Collective. With --checkpoint_freq, rank 0 locks config.checkpoint_dir for this run (an empty
// lock otherwise, and on the other ranks); hold it for as long as the run writes checkpoints.
// Throws UsageError on every rank when another run holds the folder.
io::FolderLock lock_checkpoint_dir(const Config& config, MPI_Comm comm);

// Collective. Writes the checkpoint after `point.timestep` into config.checkpoint_dir and keeps
// the newest config.checkpoint_keep. Throws RunError on every rank when any part fails.
void write_checkpoint(const Config& config, const comm::Communicator& comm,
                      const mesh::Domain& domain, const RunPoint& point);

// Collective. Reads the checkpoint at `path`: this rank's share of the blocks (an even cut of
// the `ownership` curve) into `domain` (grid, shape, leaves, blocks, cost) and the rest into the
// result. Throws UsageError on every rank for a file that is not a complete miniamr checkpoint
// of this version, whose contents fail their checksum, whose mesh is not this run's kind of mesh,
// whose numerics differ from `config`'s (naming the options), or that is at or past the end of
// the run `config` asks for.
RunPoint read_checkpoint(const std::string& path, const Config& config,
                         const comm::Communicator& comm, sfc::Curve ownership,
                         mesh::Domain& domain);

// Collective. The restart --restart asks for: its file, or in a folder the newest checkpoint
// that can be used; a newer one that cannot (damaged, incomplete, another run's numerics) is
// named with its reason on stderr, and the older one is tried. Rank 0 says on `out` (when not
// null and not --quiet) which file the run resumes. Throws UsageError on every rank when no
// file can be used (with the newest one's reason).
RunPoint restart(const Config& config, const comm::Communicator& comm, sfc::Curve ownership,
                 mesh::Domain& domain, std::FILE* out);

}  // namespace miniamr::app

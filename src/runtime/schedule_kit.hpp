// What both mappers share to run a batch of stages over a schedule (schedule.hpp): a chunk of the
// batch's variables at a time, each chunk's lanes (a stage for one variable group) as unit steps.
// ChunkRun is the public context a mapper drives: run_step() fills, sweeps and packs one unit
// with the chunk's storage (unit_storage.hpp) and tells the halo exchange (halo_exchange.hpp)
// what it packed and read; the mapper decides only which unit step runs where and when, and
// when to drive the messages. The checksums of a stage go into per-block sums (StageSums) and one
// reduction per checksum stage, started in stage order.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <list>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "comm/mpi.hpp"
#include "mesh/domain.hpp"
#include "runtime/halo_exchange.hpp"
#include "runtime/schedule.hpp"
#include "runtime/slowdown.hpp"
#include "runtime/stage_kernels.hpp"
#include "runtime/sum_reduction.hpp"
#include "runtime/unit_storage.hpp"
#include "stencil/compact_stencil.hpp"
#include "stencil/exact_sum.hpp"

namespace miniamr::runtime {

class Trace;

// The checksums of a batch: each block's new sums per checksum stage, and each stage's
// reduction, started in stage order on every rank and left in flight while later stages run.
class StageSums {
 public:
  void begin(std::span<const StageWork> stages, std::size_t blocks);
  // Block b's sums of variables `vars` in stage s (empty when the stage has none).
  std::span<double> block(std::size_t s, std::size_t b, stencil::VarRange vars);
  // Every sweep of stage s is done: its reduction may start (called in any order, any thread).
  void stage_done(std::size_t s) { ready_[s].store(true, std::memory_order_release); }
  // With the MPI token: starts the reductions of the stages done so far, in stage order, and
  // completes those that have finished. Returns whether any did.
  bool progress(const comm::Communicator& comm);
  // Whether every reduction has started and completed.
  bool finished() const { return next_ == stages_.size() && in_flight_.empty(); }
  // Waits for the reductions in flight; returns each stage's totals (empty: no checksum).
  std::vector<std::vector<double>> finish(const comm::Communicator& comm);

 private:
  std::span<const StageWork> stages_;
  std::size_t blocks_ = 0;
  std::vector<std::vector<double>> sums_;  // per stage: block x variable
  std::unique_ptr<std::atomic<bool>[]> ready_;
  std::size_t next_ = 0;  // the next stage whose reduction starts
  std::list<std::pair<std::size_t, SumReduction>> in_flight_;
  std::vector<std::vector<double>> totals_;
};

// A chunk's variables in lanes: stage s of the batch for variable group g, lane = s * VG + g.
// The groups are the stage's comm groups (StageWork::group) cut to the chunk.
struct Lanes {
  std::size_t stages = 0;
  stencil::VarRange chunk;
  std::vector<stencil::VarRange> groups;

  std::size_t count() const { return stages * groups.size(); }
  std::size_t stage(std::size_t lane) const { return lane / groups.size(); }
  stencil::VarRange vars(std::size_t lane) const { return groups[lane % groups.size()]; }
  // The lane of the next stage, same group.
  std::size_t next(std::size_t lane) const { return lane + groups.size(); }
};

// The kit's face buffers: the deferred faces of a unit, and the local face buffers (faces
// packed for another unit: two for the next stage's faces, by stage parity, and one for each
// later axis group), each holding the chunk's variables.
struct FaceBuffers {
  std::vector<double> deferred;
  std::array<std::vector<double>, 4> local;  // axis group 0 by parity, then groups 1 and 2
  void fit(const Schedule& s, std::size_t vars);
};

// Seconds of one worker, alone in its cache line: each worker adds to its own after every step,
// and a line shared with another's would move between their caches at each.
struct alignas(64) WorkerSeconds {
  double seconds = 0;
};

// How a chunk's unit steps went, for the cost records and the accounting.
struct StepMeter {
  std::vector<WorkerSeconds> busy;    // per worker: seconds in unit steps
  std::vector<double> block_seconds;  // per block: seconds in its stages, all lanes
};

class ChunkRun {
 public:
  struct Setup {
    mesh::Domain& domain;
    const StageGraph& graph;
    const Schedule& schedule;
    std::span<const StageWork> stages;
    const StageKernels& kernels;
    const Slowdown& slowdown;
    Trace* trace = nullptr;
    HaloExchange& halo;
    StageSums& sums;
    FaceBuffers& buffers;
    // Compact storage of the chunk's variables (loaded), or null for the padded blocks.
    stencil::CompactVars* compact = nullptr;
    DenseGhostLayers* ghost_layers = nullptr;
    std::vector<std::vector<double>>& scratch;  // per worker
    StepMeter& meter;
    int sweep_vars = 0;  // padded face-only sweeps: variables per pass (0: all)
  };
  // Whether this chunk is the batch's last: its sweeps complete each stage's sums.
  ChunkRun(Setup setup, Lanes lanes, bool last_chunk);

  const Lanes& lanes() const { return lanes_; }
  mesh::Domain& domain() { return x_.domain; }
  // Seconds of `worker` spent on the chunk's work outside its steps (driving messages).
  void count_busy(int worker, double seconds) {
    x_.meter.busy[std::size_t(worker)].seconds += seconds;
  }
  const Schedule& schedule() const { return s_; }
  HaloExchange& halo() { return halo_; }
  StageSums& sums() { return sums_; }
  // The messages the chunk's lanes send and receive (call before any step).
  void begin(MPI_Comm comm, bool blocking_send);
  // Packs the faces of variable group g for the batch's first stage from the values as they
  // are (the faces a sweep would have packed after the stage before).
  void prime(std::size_t group);
  // Runs step `step` of `unit` in `lane` on `worker`: its ghost tasks, sweeps and packs; tells
  // the halo exchange which messages it packed and read, and the sums when a stage is done.
  // With `lanes` > 1, the same step of the lanes from `lane` on (variable groups of one stage)
  // as one, each block's variables of all of them at once: the unit's step must be
  // message_free(), as messages are laid out by variable group.
  void run_step(std::size_t lane, std::size_t unit, int step, int worker, std::size_t lanes = 1);
  // Whether step `step` of `unit` neither packs into nor reads a message.
  bool message_free(std::size_t unit, int step) const {
    const std::size_t node = s_.node(unit, step);
    return s_.produces[node].empty() && s_.consumes[node].empty();
  }

 private:
  class Faces;
  template <class Storage>
  void step_with(Storage& st, std::size_t lane, std::size_t lanes, std::size_t unit, int step,
                 int worker);
  // Packs the faces block `position` makes in `step` (those for the next stage only when
  // `next_stage`).
  template <class Storage>
  void pack_outs(Storage& st, std::size_t position, int step, stencil::VarRange vars,
                 bool next_stage, Faces& faces);
  void note_done(std::size_t unit, double seconds, int worker);

  Setup x_;
  const Schedule& s_;
  HaloExchange& halo_;
  StageSums& sums_;
  Lanes lanes_;
  bool last_chunk_;
  PaddedStorage padded_;
  std::optional<CompactStorage> compact_;
  // Per stage: the unit steps left before its sums are complete (the last chunk only).
  std::unique_ptr<std::atomic<int>[]> sweeps_left_;
};

}  // namespace miniamr::runtime

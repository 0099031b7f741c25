#include "runtime/schedule_kit.hpp"

#include <algorithm>
#include <cassert>
#include <chrono>

#include "runtime/clock.hpp"
#include "runtime/trace.hpp"

namespace miniamr::runtime {

// ---------------------------------------------------------------------------------------------
// StageSums

void StageSums::begin(std::span<const StageWork> stages, std::size_t blocks) {
  stages_ = stages;
  blocks_ = blocks;
  sums_.resize(stages.size());
  for (std::size_t s = 0; s < stages.size(); ++s)
    if (stages[s].checksum)
      sums_[s].assign(blocks * std::size_t(stages[s].vars.count()), 0.0);
    else
      sums_[s].clear();
  ready_ = std::make_unique<std::atomic<bool>[]>(stages.size());
  for (std::size_t s = 0; s < stages.size(); ++s)
    ready_[s].store(!stages[s].checksum, std::memory_order_relaxed);
  next_ = 0;
  in_flight_.clear();
  totals_.assign(stages.size(), {});
}

std::span<double> StageSums::block(std::size_t s, std::size_t b, stencil::VarRange vars) {
  if (!stages_[s].checksum) return {};
  const auto nv = std::size_t(stages_[s].vars.count());
  return std::span(sums_[s]).subspan(b * nv + std::size_t(vars.v0 - stages_[s].vars.v0),
                                     std::size_t(vars.count()));
}

bool StageSums::progress(const comm::Communicator& comm) {
  bool any = false;
  while (next_ < stages_.size() && ready_[next_].load(std::memory_order_acquire)) {
    const std::size_t s = next_++;
    if (!stages_[s].checksum) continue;
    // Exact sums, so the order of the blocks does not matter; block order all the same.
    const auto nv = std::size_t(stages_[s].vars.count());
    std::vector<stencil::ExactSum> sums(nv);
    for (std::size_t i = 0; i < sums_[s].size(); ++i) sums[i % nv].add(sums_[s][i]);
    in_flight_.emplace_back(s, SumReduction(comm, sums));
    any = true;
  }
  for (auto it = in_flight_.begin(); it != in_flight_.end();) {
    if (!it->second.test()) {
      ++it;
      continue;
    }
    totals_[it->first] = it->second.wait();
    it = in_flight_.erase(it);
    any = true;
  }
  return any;
}

std::vector<std::vector<double>> StageSums::finish(const comm::Communicator& comm) {
  for (std::size_t s = next_; s < stages_.size(); ++s) ready_[s].store(true);
  progress(comm);
  for (auto& [s, reduction] : in_flight_) totals_[s] = reduction.wait();
  in_flight_.clear();
  return std::move(totals_);
}

// ---------------------------------------------------------------------------------------------
// FaceBuffers

void FaceBuffers::fit(const Schedule& s, std::size_t vars) {
  deferred.resize(s.deferred_per_var * vars);
  local[0].resize(s.local_per_var[0] * vars);
  local[1].resize(s.local_per_var[0] * vars);
  local[2].resize(s.local_per_var[1] * vars);
  local[3].resize(s.local_per_var[2] * vars);
}

// ---------------------------------------------------------------------------------------------
// Faces: where a unit step of one lane finds and puts the variables of one pass.

class ChunkRun::Faces {
 public:
  // `primed`: the faces go to the lane's own stage (packed before the batch's first stage).
  Faces(ChunkRun& run, std::size_t lane, stencil::VarRange pass, bool primed = false)
      : run_(run),
        lane_(lane),
        stage_(run.lanes_.stage(lane)),
        pass_(pass),
        lane_vars_(run.lanes_.vars(lane)),
        chunk_(run.lanes_.chunk),
        primed_(primed) {}

  // A face read by a face-only sweep (axis group 0).
  PackedLayer read(const FaceRead& r) const {
    if (r.kind == FaceRead::Kind::kDeferred) return {copy_to(r.slot), std::ptrdiff_t(r.slot.size)};
    return {in(r.at, 0).data(), std::ptrdiff_t(r.at.per_var)};
  }
  double* copy_to(const FaceSlot& c) const { return deferred(c).data(); }
  std::span<double> deferred(const FaceSlot& c) const {
    return in_chunk(run_.x_.buffers.deferred, c.slot, c.size);
  }
  // A packed face this lane reads in axis group `group`.
  std::span<const double> in(const PackedAt& at, int group) const {
    if (at.in == PackedAt::In::kLocal) return in_chunk(local(group, stage_), at.offset, at.per_var);
    return in_lane(run_.halo_.recv_data(lane_, at.message), at);
  }
  // Where a face packed after this lane's step goes.
  std::span<double> out(const OutFace& o) const {
    const bool next = o.group == 0 && !primed_;
    if (o.at.in == PackedAt::In::kLocal)
      return in_chunk(local(o.group, next ? stage_ + 1 : stage_), o.at.offset, o.at.per_var);
    return in_lane(run_.halo_.send_data(next ? run_.lanes_.next(lane_) : lane_, o.at.message),
                   o.at);
  }

 private:
  std::vector<double>& local(int group, std::size_t stage) const {
    return run_.x_.buffers.local[group == 0 ? stage % 2 : std::size_t(1 + group)];
  }
  // Buffers of the chunk's variables and messages of the lane's: face at offset * nv, its
  // variables one after another.
  std::span<double> in_chunk(std::vector<double>& buf, std::size_t offset,
                             std::size_t per_var) const {
    return std::span(buf).subspan(
        offset * std::size_t(chunk_.count()) + std::size_t(pass_.v0 - chunk_.v0) * per_var,
        per_var * std::size_t(pass_.count()));
  }
  template <class T>
  std::span<T> in_lane(std::span<T> message, const PackedAt& at) const {
    return message.subspan(at.offset * std::size_t(lane_vars_.count()) +
                               std::size_t(pass_.v0 - lane_vars_.v0) * at.per_var,
                           at.per_var * std::size_t(pass_.count()));
  }

  ChunkRun& run_;
  std::size_t lane_, stage_;
  stencil::VarRange pass_, lane_vars_, chunk_;
  bool primed_;
};

// ---------------------------------------------------------------------------------------------
// ChunkRun

ChunkRun::ChunkRun(Setup setup, Lanes lanes, bool last_chunk)
    : x_(setup),
      s_(setup.schedule),
      halo_(setup.halo),
      sums_(setup.sums),
      lanes_(std::move(lanes)),
      last_chunk_(last_chunk),
      padded_(setup.domain, setup.kernels) {
  if (x_.compact != nullptr) compact_.emplace(x_.domain, x_.kernels, *x_.compact, *x_.ghost_layers);
  // Priced kernels read and pack no face.
  if (!x_.kernels.modelled()) x_.buffers.fit(s_, std::size_t(lanes_.chunk.count()));
  // A stage's sums are complete once every unit has swept it; on a rank without blocks (no
  // units), at once.
  sweeps_left_ = std::make_unique<std::atomic<int>[]>(lanes_.stages);
  for (std::size_t st = 0; st < lanes_.stages; ++st) {
    sweeps_left_[st].store(int(s_.units() * lanes_.groups.size()), std::memory_order_relaxed);
    if (last_chunk_ && s_.units() == 0) sums_.stage_done(st);
  }
}

void ChunkRun::begin(MPI_Comm comm, bool blocking_send) {
  halo_.begin(comm, x_.graph, s_, lanes_.stages, lanes_.groups, blocking_send,
              x_.domain.spare.values_unread(), x_.trace);
}

void ChunkRun::prime(std::size_t group) {
  const int sweep = s_.steps - 1;
  const auto pack = [&](auto& st) {
    Faces faces(*this, group, lanes_.vars(group), /*primed=*/true);
    for (std::size_t p = 0; p < s_.order.size(); ++p)
      pack_outs(st, p, sweep, lanes_.vars(group), true, faces);
  };
  if (!x_.kernels.modelled()) {
    if (compact_)
      pack(*compact_);
    else
      pack(padded_);
  }
  for (std::size_t u = 0; u < s_.units(); ++u)
    for (const std::uint32_t m : s_.produces[s_.node(u, sweep)]) halo_.packed(group, m);
}

template <class Storage>
void ChunkRun::pack_outs(Storage& st, std::size_t position, int step, stencil::VarRange vars,
                         bool next_stage, Faces& faces) {
  const std::size_t b = s_.order[position];
  for (const OutFace& o : s_.outs[position * std::size_t(s_.steps) + std::size_t(step)])
    if (o.group != 0 || next_stage) st.pack(b, o.link, vars, s_.edges, faces.out(o));
}

template <class Storage>
void ChunkRun::step_with(Storage& st, std::size_t lane, std::size_t lanes, std::size_t unit,
                         int step, int worker) {
  const std::size_t stage = lanes_.stage(lane);
  const StageWork& work = x_.stages[stage];
  // The lanes' variables, consecutive in the chunk (the local buffers, deferred faces and dense
  // layers hold the chunk's variables one after another, whatever their groups).
  const stencil::VarRange lv{lanes_.vars(lane).v0, lanes_.vars(lane + lanes - 1).v1};
  const bool sweep = step == s_.steps - 1;
  const bool next_stage = stage + 1 < lanes_.stages;
  const bool modelled = x_.kernels.modelled();
  // Priced kernels sweep the lane's variables in one pass: the cost is charged at the working set
  // a real sweep streams through, the lane's variables of the rank's blocks, however a padded
  // sweep would take them.
  const bool passes = sweep && !s_.edges && !compact_ && !modelled && x_.sweep_vars > 0;
  const int per_pass = passes ? x_.sweep_vars : lv.count();
  const int group = s_.edges ? std::min(step, s_.groups - 1) : 0;  // of the step's fills
  const bool traced = x_.trace != nullptr && x_.trace->enabled();
  std::vector<double>& scratch = x_.scratch[std::size_t(worker)];
  const std::size_t first = s_.unit_begin[unit], last = s_.unit_begin[unit + 1];
  for (int v0 = lv.v0; v0 < lv.v1; v0 += per_pass) {
    const stencil::VarRange pass{v0, std::min(lv.v1, v0 + per_pass)};
    const double t0 = traced ? x_.trace->now_us() : 0.0;
    Faces faces(*this, lane, pass);
    for (std::size_t p = first; p < last; ++p) {
      const std::size_t b = s_.order[p];
      if (!modelled)
        for (const GhostTask& t : s_.tasks[p * std::size_t(s_.steps) + std::size_t(step)]) {
          switch (t.kind) {
            case GhostTask::Kind::kDirect:
              st.direct(t, pass, s_.edges);
              break;
            case GhostTask::Kind::kBoundary:
              st.boundary(t, pass, s_.edges);
              break;
            case GhostTask::Kind::kDefer:
              st.pack(t.src, t.link, pass, false, faces.deferred(t.slot));
              break;
            case GhostTask::Kind::kUndefer:
              st.unpack(t.dst, t.link, pass, false, faces.deferred(t.slot));
              break;
            case GhostTask::Kind::kUnpack:
              st.unpack(t.dst, t.link, pass, s_.edges, faces.in(t.at, group));
              break;
          }
        }
      if (sweep) {
        const std::span<double> sums = sums_.block(stage, b, pass);
        if (s_.edges || modelled)
          st.sweep_ghosts(b, work, pass, scratch, sums);
        else
          st.sweep(b, work, pass, s_.reads[b], s_.copies[b], faces, scratch, sums);
      }
      if (!modelled) pack_outs(st, p, step, pass, !sweep || next_stage, faces);
    }
    if (sweep) st.count(std::int64_t(last - first) * pass.count());
    if (traced && first < last)
      x_.trace->record({sweep ? "sweep" : "fill",
                        "task",
                        t0,
                        x_.trace->now_us() - t0,
                        worker,
                        {{{"stage", work.calc_stage},
                          {"blocks", std::int64_t(last - first)},
                          {"var", pass.v0},
                          {"vars", pass.count()}}},
                        "block",
                        octree::to_string(x_.domain.leaves[s_.order[first]])});
  }
}

void ChunkRun::run_step(std::size_t lane, std::size_t unit, int step, int worker,
                        std::size_t lanes) {
  assert(lanes == 1 ||
         (message_free(unit, step) && lanes_.stage(lane + lanes - 1) == lanes_.stage(lane)));
  const auto t0 = Clock::now();
  const std::size_t node = s_.node(unit, step), stage = lanes_.stage(lane);
  const bool sweep = step == s_.steps - 1;
  // The messages this step packs into: the next stage's (after a sweep) or this stage's.
  const auto target = [&](std::uint32_t m) {
    return x_.graph.sends[m].group == 0 ? lanes_.next(lane) : lane;
  };
  const bool packs = !sweep || stage + 1 < lanes_.stages;
  // Waiting for a message buffer to be free again is waiting, not work (nor slowed down).
  double waited = 0;
  if (packs)
    for (const std::uint32_t m : s_.produces[node])
      waited += halo_.claim_send(target(m), m, worker);
  if (compact_)
    step_with(*compact_, lane, lanes, unit, step, worker);
  else
    step_with(padded_, lane, lanes, unit, step, worker);
  double dt = seconds_since(t0) - waited;
  if (x_.slowdown.active()) {
    const std::uint64_t id = (std::uint64_t(x_.stages[stage].calc_stage) << 32) ^
                             (std::uint64_t(lanes_.vars(lane).v0) << 24) ^ node;
    x_.slowdown.after(dt, id);
    dt = seconds_since(t0) - waited;
  }
  note_done(unit, dt, worker);
  if (packs)
    for (const std::uint32_t m : s_.produces[node]) halo_.packed(target(m), m);
  for (const std::uint32_t m : s_.consumes[node]) halo_.consumed(lane, m);
  // Stages without a checksum have no reduction to start (and their counter, shared by the
  // workers, would move between their caches at every step).
  if (sweep && last_chunk_ && x_.stages[stage].checksum &&
      sweeps_left_[stage].fetch_sub(int(lanes), std::memory_order_acq_rel) == int(lanes))
    sums_.stage_done(stage);
}

void ChunkRun::note_done(std::size_t unit, double seconds, int worker) {
  x_.meter.busy[std::size_t(worker)].seconds += seconds;
  const std::size_t n = s_.blocks_in(unit);
  if (n == 0) return;
  const double each = seconds / double(n);
  for (std::size_t p = s_.unit_begin[unit]; p < s_.unit_begin[unit + 1]; ++p)
    x_.meter.block_seconds[s_.order[p]] += each;
}

}  // namespace miniamr::runtime

#include "runtime/static_runtime.hpp"

#include <algorithm>
#include <cassert>
#include <chrono>

#include "runtime/halo_messages.hpp"
#include "runtime/sum_reduction.hpp"
#include "runtime/trace.hpp"
#include "stencil/plane_sweep.hpp"

namespace miniamr::runtime {

namespace {

constexpr int kHaloTag = 201;

// Names a block's sweep of some variables in a stage, for reproducible noise.
std::uint64_t work_id(const StageWork& work, stencil::VarRange vars, std::size_t block) {
  return (std::uint64_t(work.calc_stage) << 40) ^ (std::uint64_t(vars.v0) << 28) ^ block;
}

// Runs body(t) on each thread t of a team of `threads`, or in line when there is one: a
// parallel region that its if clause serialises still has libgomp build a team of one (an
// allocation and about 250 ns), and a stage enters two regions per comm group and variable pass.
template <class Body>
void on_team(int threads, Body&& body) {
  if (threads <= 1) {
    body(std::size_t{0});
    return;
  }
#pragma omp parallel num_threads(threads)
  body(std::size_t(thread_index()));
}

// body(i, t) for every i in [0, n), t the running thread: in line with one thread, else shared
// out two at a time among a team of `threads` (blocks differ in cost).
template <class Body>
void for_each_index(int threads, std::ptrdiff_t n, Body&& body) {
  on_team(threads, [&](const std::size_t t) {
    if (threads <= 1) {
      for (std::ptrdiff_t i = 0; i < n; ++i) body(std::size_t(i), t);
      return;
    }
#pragma omp for schedule(dynamic, 2)
    for (std::ptrdiff_t i = 0; i < n; ++i) body(std::size_t(i), t);
  });
}

}  // namespace

StaticRuntime::StaticRuntime(MPI_Comm parent, RuntimeOptions options)
    : MeshRuntime(parent, options) {}

void StaticRuntime::plans_changed(const Domain&) {
  // Built when the next stages run: a refinement step changes the mesh several times (each
  // iteration, family gathering, rebalancing) before any stage needs a schedule.
  schedule_stale_ = true;
}

void StaticRuntime::fit_threads(const Domain& domain) {
  scratch_.resize(std::size_t(threads()));
  for (auto& s : scratch_) s.resize(stencil::stencil_scratch_size(domain.shape));
  schedule_ = build_sweep_schedule(graph(domain, false), domain.shape, threads());
  // A compact sweep reads the faces it does not read elsewhere (level changes) from dense
  // ghost layers of their own.
  ghost_layers_.number(schedule_.reads);
  schedule_stale_ = false;
}

void StaticRuntime::sweep_block(Domain& domain, const StageWork& work, stencil::VarRange vars,
                                std::size_t i, std::vector<double>& scratch,
                                stencil::GhostLayers* layers) {
  const bool traced = trace_ != nullptr && trace_->enabled();
  const auto t0 = work.measure_cost || traced ? Clock::now() : Clock::time_point{};
  const auto nv = std::size_t(vars.count());
  const std::span<double> sums =
      work.checksum ? std::span(block_sums_).subspan(i * nv, nv) : std::span<double>();
  if (compact_.loaded() && layers != nullptr)
    kernels_.sweep_compact(compact_.var(i, vars.v0), work, vars, scratch, sums, *layers);
  else
    kernels_.sweep(domain.blocks[i], work, vars, scratch, sums, layers);
  if (traced) {
    const double end = trace_->now_us();
    const double dur = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    trace_->record({"sweep",
                    "task",
                    end - dur,
                    dur,
                    thread_index(),
                    {{{"stage", work.calc_stage}, {"var", vars.v0}, {"vars", vars.count()}, {}}},
                    "block",
                    octree::to_string(domain.leaves[i])});
  }
  if (work.measure_cost)  // the block's seconds in this stage, over all its variables
    stage_cost_[stage_slot_ * domain.blocks.size() + i] +=
        std::chrono::duration<double>(Clock::now() - t0).count();
}

stencil::GhostLayers StaticRuntime::pass_layers(const Domain& domain, std::size_t i,
                                                stencil::VarRange pass, stencil::VarRange group,
                                                const Halo& h) {
  // The deferred-face buffer holds the pass's variables; a message the whole group's.
  const auto nv = std::size_t(pass.count());
  const auto packed = [&](const FaceRead& r) {
    const auto size = std::ptrdiff_t(r.size);
    if (r.kind == FaceRead::Kind::kDeferred)
      return PackedLayer{deferred_.data() + r.from * nv, size};
    return PackedLayer{h.recv[r.from].data() + r.at * std::size_t(group.count()) +
                           std::size_t(pass.v0 - group.v0) * r.size,
                       size};
  };
  const auto& reads = schedule_.reads[i];
  // Swept compact, a face filled across a level change is in its dense ghost layer.
  stencil::GhostLayers layers =
      compact_.loaded() ? compact_read_layers(compact_, ghost_layers_, 0, i, reads, pass.v0, packed)
                        : read_layers(domain.blocks, i, reads, pass.v0, packed);
  for (std::size_t f = 0; f < 6; ++f)
    if (const FaceSlot& c = schedule_.copies[i][f]; c.size > 0)
      layers.copy[f] = {deferred_.data() + c.slot * nv, std::ptrdiff_t(c.size)};
  return layers;
}

void StaticRuntime::add_block_sums(std::span<const std::size_t> blocks, const StageWork& work,
                                   stencil::VarRange vars, std::span<stencil::ExactSum> sums) {
  if (!work.checksum) return;
  const auto nv = std::size_t(vars.count());
  for (const std::size_t i : blocks)
    for (std::size_t v = 0; v < nv; ++v)
      sums[std::size_t(vars.v0 - work.vars.v0) + v].add(block_sums_[i * nv + v]);
}

void StaticRuntime::sweep_all(Domain& domain, const StageWork& work, stencil::VarRange vars,
                              std::span<stencil::ExactSum> sums) {
  MINIAMR_TIMED(timers_, kCompute);
  assert(!compact_.loaded());  // stencils reading edges sweep the padded blocks
  if (work.checksum) block_sums_.resize(domain.blocks.size() * std::size_t(vars.count()));
  // Each block's sums go to its own slot and are added in block order afterwards (exact sums
  // would not mind the order anyway): bitwise the same for any thread count.
  for_each_index(schedule_.threads, std::ptrdiff_t(domain.blocks.size()),
                 [&](const std::size_t i, const std::size_t t) {
                   const auto t0 = slowdown_.active() ? Clock::now() : Clock::time_point{};
                   sweep_block(domain, work, vars, i, scratch_[t]);
                   if (slowdown_.active())
                     slowdown_.after(std::chrono::duration<double>(Clock::now() - t0).count(),
                                     work_id(work, vars, i));
                 });
  add_block_sums(schedule_.order, work, vars, sums);
}

void StaticRuntime::run_tasks(Domain& domain, std::span<const GhostTask> tasks,
                              stencil::VarRange vars) {
  // Modelled compute: the calibrated cost per update covers the ghost copies too.
  if (kernels_.modelled()) return;
  const stencil::KernelSet& k = kernels_.native();
  const auto nv = std::size_t(vars.count());
  const auto face = [&](const GhostTask& t) {
    return std::span(deferred_).subspan(t.slot * nv, t.size * nv);
  };
  if (compact_.loaded()) {  // senders stored compact, ghosts into dense layers
    const auto next = std::ptrdiff_t(stencil::kCompactCells);
    const auto layer_next = std::ptrdiff_t(stencil::kCompactFaceCells);
    for (const GhostTask& t : tasks) {
      switch (t.kind) {
        case GhostTask::Kind::kDirect:
          kernels_.native().fill_layer(ghost_layers_.layer(t.dst, t.link.face), layer_next,
                                       compact_.var(t.src, vars.v0), next, domain.shape, t.link,
                                       vars);
          break;
        case GhostTask::Kind::kPack:
          kernels_.native().pack_compact(compact_.var(t.src, vars.v0), next, domain.shape, t.link,
                                         vars, face(t));
          break;
        case GhostTask::Kind::kUnpack:
          kernels_.native().unpack_layer(ghost_layers_.layer(t.dst, t.link.face), layer_next,
                                         domain.shape, t.link, vars, face(t));
          break;
      }
    }
    return;
  }
  for (const GhostTask& t : tasks) {
    switch (t.kind) {
      case GhostTask::Kind::kDirect:
        k.fill_direct(domain.blocks[t.dst], domain.blocks[t.src], t.link, vars, false);
        break;
      case GhostTask::Kind::kPack:
        k.pack(domain.blocks[t.src], t.link, vars, false, face(t));
        break;
      case GhostTask::Kind::kUnpack:
        k.unpack(domain.blocks[t.dst], t.link, vars, false, face(t));
        break;
    }
  }
}

void StaticRuntime::sweep_phase(Domain& domain, const StageWork& work, stencil::VarRange vars,
                                std::span<stencil::ExactSum> sums, int phase,
                                stencil::VarRange group, const Halo& h) {
  MINIAMR_TIMED(timers_, kCompute);
  const SweepSchedule& s = schedule_;
  if (work.checksum) block_sums_.resize(domain.blocks.size() * std::size_t(vars.count()));
  const std::size_t begin = phase == 0 ? 0 : s.first_remote;
  const std::size_t end = phase == 0 ? s.first_remote : s.order.size();
  deferred_.resize(s.deferred_per_var * std::size_t(vars.count()));
  if (compact_.loaded()) ghost_layers_.resize(std::size_t(vars.count()));
  on_team(s.threads, [&](const std::size_t t) {
    const std::size_t first =
        s.threads == 1 ? begin : s.bounds[std::size_t(phase) * std::size_t(s.threads) + t];
    const std::size_t last =
        s.threads == 1 ? end : s.bounds[std::size_t(phase) * std::size_t(s.threads) + t + 1];
    std::vector<double>& scratch = scratch_[t];
    for (std::size_t p = first; p < last; ++p) {
      const auto t0 = slowdown_.active() ? Clock::now() : Clock::time_point{};
      run_tasks(domain,
                std::span(s.tasks).subspan(s.task_begin[p], s.task_begin[p + 1] - s.task_begin[p]),
                vars);
      stencil::GhostLayers layers = pass_layers(domain, s.order[p], vars, group, h);
      sweep_block(domain, work, vars, s.order[p], scratch, &layers);
      if (slowdown_.active())
        slowdown_.after(std::chrono::duration<double>(Clock::now() - t0).count(),
                        work_id(work, vars, s.order[p]));
    }
  });
  // Every block of the phase swept compact (sweep_block), counted once rather than per block.
  if (compact_.loaded())
    kernels_.count_compact(std::int64_t(end - begin) * std::int64_t(vars.count()));
  add_block_sums(std::span(s.order).subspan(begin, end - begin), work, vars, sums);
}

void StaticRuntime::fill_axis(Domain& domain, const StageGraph& graph, int axis,
                              stencil::VarRange vars) {
  MINIAMR_TIMED(timers_, kCommunicate);
  assert(!compact_.loaded());
  if (kernels_.modelled()) return;
  // Fill(b, axis) writes b's ghosts only, so blocks are independent; remote faces were
  // unpacked before (they are the receives of this axis).
  for_each_index(schedule_.threads, std::ptrdiff_t(graph.blocks),
                 [&](const std::size_t b, std::size_t) {
                   for (const GhostFill& f : graph.fills[graph.node(b, axis)]) {
                     if (f.kind == GhostFill::Kind::kLocal)
                       kernels_.native().fill_direct(domain.blocks[b], domain.blocks[f.src], f.link,
                                                     vars, true);
                     else if (f.kind == GhostFill::Kind::kBoundary)
                       kernels_.native().fill_boundary(domain.blocks[b], f.link.face, vars, true);
                   }
                 });
}

void StaticRuntime::begin_halo(const Domain& domain, const StageGraph& graph, int group_index,
                               stencil::VarRange vars, Halo& h) {
  MINIAMR_TIMED(timers_, kCommunicate);
  const int nv = vars.count();
  h.recv.resize(graph.recvs.size());
  h.send.resize(graph.sends.size());
  h.recvs.clear();
  h.sends.clear();
  // Receives first, so every message finds its buffer.
  for (std::size_t m = 0; m < graph.recvs.size(); ++m) {
    const MessageLayout& msg = graph.recvs[m];
    if (msg.group != group_index) continue;
    h.recv[m].resize(msg.size(nv));
    h.recvs.emplace_back();
    MPI_Irecv(h.recv[m].data(), int(msg.size(nv)), MPI_DOUBLE, msg.peer, kHaloTag, comm_.get(),
              &h.recvs.back());
  }
  // One aggregated message per neighbour rank, faces in the order both sides derive from keys.
  for (std::size_t m = 0; m < graph.sends.size(); ++m) {
    const MessageLayout& msg = graph.sends[m];
    if (msg.group != group_index) continue;
    auto& buf = h.send[m];
    const double t0 = trace_ != nullptr ? trace_->now_us() : 0.0;
    buf.resize(msg.size(nv));  // the real size, even when nothing is packed into it
    if (!kernels_.modelled())
      for (const FaceSlice& f : msg.faces) {
        if (compact_.loaded()) {
          assert(!graph.edges);
          kernels_.native().pack_compact(compact_.var(f.block, vars.v0),
                                         std::ptrdiff_t(stencil::kCompactCells), domain.shape,
                                         f.link, vars, face_slice(f, vars, vars, std::span(buf)));
        } else {
          pack_face(kernels_.native(), domain, f, vars, graph.edges, buf);
        }
      }
    if (trace_ != nullptr && trace_->enabled())
      trace_->record({"send",
                      "message",
                      t0,
                      trace_->now_us() - t0,
                      thread_index(),
                      {{{"peer", msg.peer},
                        {"bytes", std::int64_t(buf.size() * sizeof(double))},
                        {"var", vars.v0},
                        {"axis_group", group_index}}},
                      {},
                      {}});
    if (options_.blocking_send) {
      MPI_Send(buf.data(), int(buf.size()), MPI_DOUBLE, msg.peer, kHaloTag, comm_.get());
    } else {
      h.sends.emplace_back();
      MPI_Isend(buf.data(), int(buf.size()), MPI_DOUBLE, msg.peer, kHaloTag, comm_.get(),
                &h.sends.back());
    }
  }
}

void StaticRuntime::wait_for(std::vector<MPI_Request>& requests, Domain& domain) {
  // A growing mesh's next blocks are mapped while the messages are not there yet, instead of
  // by the refinement step that makes them (block_pool.hpp). The simulation build maps nothing
  // ahead, and polling is what slows SMPI down (dynamic_runtime.cpp), so it only waits.
#ifndef MINIAMR_SIMGRID
  int done = 0;
  while (domain.spare.wants_more(domain.blocks.size())) {
    MPI_Testall(int(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE);
    if (done != 0) return;
    domain.spare.map_ahead(domain.shape, domain.blocks.size());
  }
#endif
  MPI_Waitall(int(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
}

void StaticRuntime::wait_receives(Domain& domain, Halo& h) {
  MINIAMR_TIMED(timers_, kCommunicate);
  const double t0 = trace_ != nullptr ? trace_->now_us() : 0.0;
  wait_for(h.recvs, domain);
  if (trace_ != nullptr && trace_->enabled() && !h.recvs.empty())
    trace_->record({"recv",
                    "message",
                    t0,
                    trace_->now_us() - t0,
                    thread_index(),
                    {{{"messages", std::int64_t(h.recvs.size())}, {}, {}, {}}},
                    {},
                    {}});
  h.recvs.clear();
}

void StaticRuntime::unpack(Domain& domain, const StageGraph& graph, int group_index,
                           stencil::VarRange group, stencil::VarRange vars, const Halo& h,
                           bool scheduled) {
  MINIAMR_TIMED(timers_, kCommunicate);
  if (kernels_.modelled()) return;
  for (std::size_t m = 0; m < graph.recvs.size(); ++m) {
    const MessageLayout& msg = graph.recvs[m];
    if (msg.group != group_index) continue;
    const auto face = [&](const std::size_t i) {
      const FaceSlice& f = msg.faces[i];
      if (compact_.loaded()) {  // a level change, into its dense ghost layer
        assert(scheduled && !graph.edges);
        kernels_.native().unpack_layer(
            ghost_layers_.layer(f.block, f.link.face), std::ptrdiff_t(stencil::kCompactFaceCells),
            domain.shape, f.link, vars,
            face_slice(f, group, vars, std::span<const double>(h.recv[m])));
        return;
      }
      unpack_face(kernels_.native(), domain, f, group, vars, graph.edges, h.recv[m]);
    };
    if (scheduled) {
      for (const std::size_t i : schedule_.unpacks[m]) face(i);
    } else {
      for (std::size_t i = 0; i < msg.faces.size(); ++i) face(i);
    }
  }
}

void StaticRuntime::end_halo(Domain& domain, Halo& h) {
  MINIAMR_TIMED(timers_, kCommunicate);
  wait_for(h.sends, domain);
  h.sends.clear();
}

void StaticRuntime::stage(Domain& domain, const StageWork& work, stencil::VarRange part,
                          std::span<stencil::ExactSum> sums) {
  // The comm groups of the stage within `part`: one message per neighbour rank and group.
  std::vector<stencil::VarRange> groups;
  const int size = work.group > 0 ? work.group : work.vars.count();
  for (int v0 = work.vars.v0; v0 < work.vars.v1; v0 += size) {
    const stencil::VarRange g{std::max(v0, part.v0), std::min({work.vars.v1, v0 + size, part.v1})};
    if (g.v0 < g.v1) groups.push_back(g);
  }
  halos_.resize(groups.size());

  if (!work.reads_edges()) {
    // Face ghosts only. The groups' variables are independent, so every group's messages are
    // posted at once and waited for only when that group is swept. Then a few variables at a
    // time (sweep_vars): each on-rank face reaches its receiver's ghosts right before the
    // receiver is swept (the schedule), so the data are swept while in cache; the
    // self-contained blocks are swept before the group's messages are waited for.
    const StageGraph& g = graph(domain, false);
    for (std::size_t k = 0; k < groups.size(); ++k) begin_halo(domain, g, 0, groups[k], halos_[k]);
    for (std::size_t k = 0; k < groups.size(); ++k) {
      const int step = std::max(1, options_.sweep_vars);
      for (int v = groups[k].v0; v < groups[k].v1; v += step) {
        const stencil::VarRange pass{v, std::min(v + step, groups[k].v1)};
        if (!schedule_.early.empty()) {  // none with one thread
          MINIAMR_TIMED(timers_, kCommunicate);
          const auto& early = schedule_.early;
          for_each_index(schedule_.threads, std::ptrdiff_t(early.size()),
                         [&](const std::size_t e, std::size_t) {
                           run_tasks(domain, std::span(&early[e], 1), pass);
                         });
        }
        sweep_phase(domain, work, pass, sums, 0, groups[k], halos_[k]);
        if (v == groups[k].v0) wait_receives(domain, halos_[k]);
        unpack(domain, g, 0, groups[k], pass, halos_[k], true);
        sweep_phase(domain, work, pass, sums, 1, groups[k], halos_[k]);
      }
    }
    for (Halo& h : halos_) end_halo(domain, h);
    return;
  }
  // Edges and corners fill in sequence x -> y -> z, so each axis completes before the next.
  const StageGraph& g = graph(domain, true);
  for (const stencil::VarRange& group : groups) {
    Halo& h = halos_.front();
    for (int a = 0; a < 3; ++a) {
      begin_halo(domain, g, a, group, h);
      fill_axis(domain, g, a, group);
      wait_receives(domain, h);
      unpack(domain, g, a, group, group, h, false);
      end_halo(domain, h);
    }
    sweep_all(domain, work, group, sums);
  }
}

std::vector<std::vector<double>> StaticRuntime::run_stages(Domain& domain,
                                                           std::span<const StageWork> stages) {
  // The host may change the thread count between two mesh changes.
  if (schedule_stale_ || int(scratch_.size()) != threads()) fit_threads(domain);
  const std::size_t nb = domain.blocks.size();
  const bool measure =
      std::any_of(stages.begin(), stages.end(), [](const StageWork& w) { return w.measure_cost; });
  if (measure) stage_cost_.assign(stages.size() * nb, 0.0);
  std::vector<std::vector<stencil::ExactSum>> sums(stages.size());
  for (std::size_t s = 0; s < stages.size(); ++s)
    if (stages[s].checksum) sums[s].resize(std::size_t(stages[s].vars.count()));
  std::vector<std::vector<double>> totals(stages.size());
  // A stage's checksum reduction stays in flight while the next stage runs.
  std::optional<SumReduction> pending;
  std::size_t pending_stage = 0;
  const auto finish = [&] {
    if (!pending) return;
    MINIAMR_TIMED(timers_, kChecksum);
    totals[pending_stage] = pending->wait();
    pending.reset();
  };
  // Each chunk of variables goes through every stage before the next chunk starts: the stages
  // of a variable follow each other in the same order as stage by stage, so values and sums are
  // bitwise the same, but a chunk that fits in cache is read from memory once per batch instead
  // of once per stage.
  const stencil::VarRange all = stages.front().vars;
  const int chunk = chunk_vars(domain, stages.front());
  // 7-point stages on one thread sweep the chunk's variables stored compact: copied in before
  // its stages and back after them.
  const bool compact = threads() == 1 && kernels_.compact(domain.shape) &&
                       std::none_of(stages.begin(), stages.end(),
                                    [](const StageWork& w) { return w.reads_edges(); });
  for (int v0 = all.v0; v0 < all.v1; v0 += chunk) {
    const stencil::VarRange part{v0, std::min(all.v1, v0 + chunk)};
    // Back into the blocks when the chunk's stages end, by an error too.
    const stencil::StoredOnExit chunk_store{compact_, domain.blocks};
    if (compact) compact_.load(domain.blocks, part);
    for (std::size_t s = 0; s < stages.size(); ++s) {
      stage_slot_ = s;
      stage(domain, stages[s], part, sums[s]);
      if (part.v1 < all.v1) continue;  // the stage's sums are complete after the last chunk
      finish();
      if (stages[s].checksum) {
        MINIAMR_TIMED(timers_, kChecksum);
        pending.emplace(comm_, sums[s]);
        pending_stage = s;
      }
    }
  }
  finish();
  for (std::size_t s = 0; s < stages.size() && measure; ++s)
    for (std::size_t i = 0; i < nb; ++i)
      domain.cost[i] = blend_cost(domain.cost[i], stage_cost_[s * nb + i]);
  return totals;
}

}  // namespace miniamr::runtime

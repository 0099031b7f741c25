#include "runtime/mapper.hpp"

#include <algorithm>
#include <chrono>

#include "runtime/clock.hpp"
#include "runtime/trace.hpp"
#include "stencil/plane_sweep.hpp"

namespace miniamr::runtime {

namespace {

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Stages that can share one schedule and one set of lanes: the same variables, comm groups and
// stencil.
bool alike(const StageWork& a, const StageWork& b) {
  return a.vars.v0 == b.vars.v0 && a.vars.v1 == b.vars.v1 && a.group == b.group &&
         a.stencil == b.stencil;
}

// The comm groups of stages like `work` within the chunk `part`. The variable-work kernels mix a
// block's variables, so their stages run all of them at once.
std::vector<stencil::VarRange> lane_groups(const StageWork& work, stencil::VarRange part) {
  const int size = work.stencil != 0 && work.group > 0 ? work.group : work.vars.count();
  std::vector<stencil::VarRange> groups;
  for (int v0 = work.vars.v0; v0 < work.vars.v1; v0 += size) {
    const stencil::VarRange g{std::max(v0, part.v0), std::min({work.vars.v1, v0 + size, part.v1})};
    if (g.v0 < g.v1) groups.push_back(g);
  }
  return groups;
}

}  // namespace

Mapper::Mapper(MPI_Comm parent, RuntimeOptions options) : MeshRuntime(parent, options) {}

void Mapper::plans_changed(const mesh::Domain&) {
  // Built when the next stages run: a refinement step changes the mesh several times (each
  // iteration, family gathering, rebalancing) before any stage needs a schedule.
  for (auto& s : schedules_) s.reset();
}

const Schedule* Mapper::schedule(bool edges) const {
  const auto& s = schedules_[edges ? 1 : 0];
  return s ? &s->schedule : nullptr;
}

const SchedulePolicy* Mapper::last_policy(bool edges) const {
  const auto& s = schedules_[edges ? 1 : 0];
  return s ? &s->policy : nullptr;
}

bool Mapper::map_ahead(mesh::Domain& domain) {
  // The simulation build maps nothing ahead: its waits are simulated, not spent.
#ifdef MINIAMR_SIMGRID
  (void)domain;
  return false;
#else
  return domain.spare.map_ahead(domain.shape, domain.blocks.size());
#endif
}

std::vector<std::vector<double>> Mapper::run_stages(mesh::Domain& domain,
                                                    std::span<const StageWork> stages) {
  // Runs of alike stages, one after the other (a driver's batch is one run).
  std::vector<std::vector<double>> totals;
  for (std::size_t s = 0; s < stages.size();) {
    std::size_t e = s + 1;
    while (e < stages.size() && alike(stages[s], stages[e])) ++e;
    for (auto& t : run_uniform(domain, stages.subspan(s, e - s))) totals.push_back(std::move(t));
    s = e;
  }
  return totals;
}

std::vector<std::vector<double>> Mapper::run_uniform(mesh::Domain& domain,
                                                     std::span<const StageWork> stages) {
  const auto wall0 = Clock::now();
  const StageWork& first = stages.front();
  const bool edges = first.reads_edges();
  const StageGraph& g = graph(domain, edges);
  const int chunk = chunk_vars(domain, first);  // collective
  const SchedulePolicy wanted = policy(g, first, chunk);
  auto& cached = schedules_[edges ? 1 : 0];
  if (!cached || !(cached->policy == wanted)) {
    cached.emplace(Cached{wanted, build_schedule(g, domain.shape, wanted)});
    if (!edges) ghost_layers_.number(cached->schedule.reads);
  }
  const auto T = std::size_t(threads());
  if (trace_ != nullptr) trace_->set_threads(int(T));
  scratch_.resize(T);
  for (auto& s : scratch_) s.resize(stencil::stencil_scratch_size(domain.shape));
  const std::size_t nb = domain.blocks.size();
  meter_.busy.assign(T, 0.0);
  meter_.block_seconds.assign(nb, 0.0);
  sums_.begin(stages, nb);

  double copies = 0;  // seconds copying variables in and out of compact storage
  run_chunks(domain, stages, g, cached->schedule, chunk, copies);
  const auto reduce0 = Clock::now();
  auto totals = sums_.finish(comm_);
  const double reducing = seconds_since(reduce0);

  // Accounting: compute is the workers' mean time in unit steps (their fills, sweeps and packs)
  // and the compact copies; checksum the wait for the last reductions; communicate the rest.
  double busy = 0, steps = 0;
  for (const double b : meter_.busy) busy += b;
  for (const double b : meter_.block_seconds) steps += b;
  const double compute = busy / double(T) + copies;
  const double wall = seconds_since(wall0);
  timers_.add(Phase::kCompute, compute);
  timers_.add_steps(steps / double(T));
  timers_.add(Phase::kChecksum, reducing);
  timers_.add(Phase::kCommunicate, std::max(0.0, wall - compute - reducing));
  const double S = double(stages.size());
  if (domain.cost.size() != nb) domain.cost.resize(nb, 0.0);
  for (std::size_t b = 0; b < nb; ++b)
    domain.cost[b] = blend_cost(domain.cost[b], meter_.block_seconds[b] / S);
  if (nb > 0 && !kernels_.modelled()) {
    const double per_block = busy / (double(nb) * S);
    block_seconds_ = block_seconds_ == 0 ? per_block : 0.5 * block_seconds_ + 0.5 * per_block;
  }
  return totals;
}

void Mapper::run_chunks(mesh::Domain& domain, std::span<const StageWork> stages,
                        const StageGraph& graph, const Schedule& schedule, int chunk,
                        double& copy_seconds) {
  const StageWork& first = stages.front();
  const stencil::VarRange all = first.vars;
  const bool compact = !schedule.edges && first.stencil == 7 && kernels_.compact(domain.shape);
  const std::size_t nb = domain.blocks.size();
  for (int v0 = all.v0; v0 < all.v1; v0 += chunk) {
    const stencil::VarRange part{v0, std::min(all.v1, v0 + chunk)};
    Lanes lanes{stages.size(), part, lane_groups(first, part)};
    // Back into the blocks when the chunk's stages end, by an error too.
    struct Stored {
      stencil::CompactVars& compact;
      std::span<stencil::Block> blocks;
      ~Stored() {
        if (compact.loaded()) compact.store(blocks);
      }
    } stored{compact_, domain.blocks};
    if (compact) {
      const auto t0 = Clock::now();
      compact_.reserve(nb, part);
      for_each(nb, [&](std::size_t b) { compact_.load_block(domain.blocks[b], b); });
      ghost_layers_.resize(std::size_t(part.count()));
      copy_seconds += seconds_since(t0);
    }
    ChunkRun run(
        {domain, graph, schedule, stages, kernels_, slowdown_, trace_, halo_, sums_, buffers_,
         compact ? &compact_ : nullptr, &ghost_layers_, scratch_, meter_, options_.sweep_vars},
        std::move(lanes), part.v1 == all.v1);
    run.begin(comm_.get(), options_.blocking_send);
    for (std::size_t g = 0; g < run.lanes().groups.size(); ++g) run.prime(g);
    run_chunk(run);
    {
      const std::lock_guard lock(halo_.token());
      halo_.finish();
    }
    if (compact) {
      const auto t0 = Clock::now();
      for_each(nb, [&](std::size_t b) { compact_.store_block(domain.blocks[b], b); });
      compact_.forget();
      copy_seconds += seconds_since(t0);
    }
  }
}

}  // namespace miniamr::runtime

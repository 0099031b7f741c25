#include "runtime/mapper.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <string>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "runtime/clock.hpp"
#include "runtime/trace.hpp"
#include "stencil/plane_sweep.hpp"

namespace miniamr::runtime {

namespace {

// Every block's measured cost, or nothing when a block has none yet (a new block inherits its
// parent's record).
std::span<const double> measured_costs(const mesh::Domain& domain) {
  const bool measured =
      domain.cost.size() == domain.blocks.size() &&
      std::all_of(domain.cost.begin(), domain.cost.end(), [](const double c) { return c > 0; });
  return measured ? std::span<const double>(domain.cost) : std::span<const double>();
}

// Names the compact copies' pieces of work to the slowdown's noise, apart from the unit steps'.
constexpr std::uint64_t kCopyId = std::uint64_t(0xc0b1) << 48;

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

Mapper::Mapper(MPI_Comm parent, RuntimeOptions options)
    : mesh_(parent, options.ownership, options.deepest_level),
      options_(options),
      kernels_(options.kernels, options.isa, options.compute_model),
      slowdown_(options.slow_factor, options.noise,
                0x736c6f77ull + std::uint64_t(mesh_.comm().rank())) {}

int thread_count() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

int thread_index() {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

int Mapper::threads() const {
  return options_.threads > 0 ? options_.threads : thread_count();
}

int Mapper::chunk_vars(const mesh::Domain& domain, const StageWork& first) const {
  const int nv = first.vars.count();
  // The variable-work kernels mix variables, so every stage needs all of them. Modelled sweeps
  // have no cache to keep a chunk in, and would only multiply the simulated messages.
  if (first.stencil == 0 || kernels_.modelled()) return nv;
  if (options_.chunk_vars > 0) return std::min(nv, options_.chunk_vars);
  // The rank's threads share its blocks, and each brings its core's cache: a chunk of
  // kCacheChunkBytes per thread keeps a thread's part of it in its cache as a rank's would be,
  // and gives each thread as much work between two of the team's synchronisations.
  // Every rank must choose the same chunks (they shape the messages): the fullest rank's bytes
  // per variable and the fewest threads, in one reduction (the maximum of minus the threads).
  std::array<std::int64_t, 2> most{
      std::int64_t(domain.blocks.size() * domain.shape.var_stride() * sizeof(double)),
      -std::int64_t(std::max(threads(), 1))};
  const comm::Communicator& comm = mesh_.comm();
  comm.note(1);
  MPI_Allreduce(MPI_IN_PLACE, most.data(), 2, MPI_INT64_T, MPI_MAX, comm.get());
  const std::int64_t per_var = most[0], budget = kCacheChunkBytes * -most[1];
  const int fit = int(std::clamp<std::int64_t>(budget / std::max<std::int64_t>(per_var, 1), 1, nv));
  // At least two variables: a lane of one pays a lane's messages, tasks and sweep set-up for
  // half the work (kMinChunkVars). Whole comm groups when a chunk holds one: a chunk that ends
  // inside a group splits it into two lanes of fewer variables each.
  const int group = first.group > 0 ? std::min(first.group, nv) : nv;
  const int vars = std::max(fit, std::min(kMinChunkVars, nv));
  return vars < group ? vars : vars - vars % group;
}

void Mapper::follow_mesh(const mesh::Domain& domain) {
  // A refinement step changes the mesh several times (each iteration, family gathering,
  // rebalancing) before any stage needs a graph, so graphs and schedules are made when stages
  // next run.
  if (generation_ == mesh_.generation()) return;
  generation_ = mesh_.generation();
  for (auto& g : graphs_) g.reset();
  for (auto& s : schedules_) s.reset();
  kernels_.set_working_set(domain);
}

const StageGraph& Mapper::graph(const mesh::Domain& domain, bool edges) {
  follow_mesh(domain);
  auto& g = graphs_[edges ? 1 : 0];
  if (!g) g = build_stage_graph(mesh_.plan(), domain.shape, domain.blocks.size(), edges);
  return *g;
}

std::string Mapper::graph_dot(const mesh::Domain& domain, bool edges, int stages) {
  const comm::Communicator& comm = mesh_.comm();
  const std::string mine =
      stage_graph_dot(graph(domain, edges), domain.leaves, comm.rank(), stages);
  // Gathered as bytes: every rank's cluster in rank order on rank 0.
  int n = int(mine.size());
  std::vector<int> counts(comm.is_root() ? std::size_t(comm.size()) : 0);
  MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm.get());
  const std::vector<int> displs = comm::displacements(counts);
  std::string all(counts.empty() ? 0 : std::size_t(displs.back() + counts.back()), ' ');
  MPI_Gatherv(mine.data(), n, MPI_CHAR, all.data(), counts.data(), displs.data(), MPI_CHAR, 0,
              comm.get());
  if (!comm.is_root()) return {};
  return "digraph stage_graph {\n  rankdir=LR;\n  node [fontsize=10];\n" + all + "}\n";
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
  if (!cached || !(cached->policy == wanted) || cached->recut) {
    const std::span<const double> weights =
        wanted.by_cost ? measured_costs(domain) : std::span<const double>();
    cached.emplace(Cached{wanted, build_schedule(g, domain.shape, wanted, weights)});
    if (!edges) ghost_layers_.number(cached->schedule.reads);
  }
  const auto T = std::size_t(threads());
  if (trace_ != nullptr) trace_->set_threads(int(T));
  scratch_.resize(T);
  for (auto& s : scratch_) s.resize(stencil::stencil_scratch_size(domain.shape));
  const std::size_t nb = domain.blocks.size();
  meter_.busy.assign(T, {});
  meter_.block_seconds.assign(nb, 0.0);
  sums_.begin(stages, nb);

  double copies = 0;  // seconds copying variables in and out of compact storage
  run_chunks(domain, stages, g, cached->schedule, chunk, copies);
  const auto reduce0 = Clock::now();
  auto totals = sums_.finish(mesh_.comm());
  const double reducing = seconds_since(reduce0);

  // Accounting: compute is the workers' mean time in unit steps (their fills, sweeps and packs)
  // and the compact copies; checksum the wait for the last reductions; communicate the rest.
  double busy = 0, steps = 0;
  for (const WorkerSeconds& b : meter_.busy) busy += b.seconds;
  for (const double b : meter_.block_seconds) steps += b;
  const double compute = busy / double(T) + copies;
  // Units cut at equal block counts (or by costs measured on other units) can keep one worker
  // busier than the others, which then wait for it at every stage: the next batch cuts them again
  // by their blocks' measured costs when their times differ by more than noise moves (a new cut
  // moves blocks, and their data, between the workers' caches).
  if (wanted.by_cost)
    cached->recut =
        units_uneven(cached->schedule, meter_.block_seconds, kRecutImbalance * steps / double(T));
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
    // The copies are work on block values too: a slower rank makes them slowly as well.
    const auto copied = [&](Clock::time_point t0, std::uint64_t way) {
      slowdown_.after(
          seconds_since(t0),
          kCopyId ^ (std::uint64_t(first.calc_stage) << 16) ^ (std::uint64_t(v0) << 1) ^ way,
          Slowdown::Work::kCopies);
      copy_seconds += seconds_since(t0);
    };
    if (compact) {
      const auto t0 = Clock::now();
      compact_.reserve(nb, part);
      for_each(nb, [&](std::size_t b) { compact_.load_block(domain.blocks[b], b); });
      ghost_layers_.resize(std::size_t(part.count()));
      copied(t0, 0);
    }
    ChunkRun run(
        {domain, graph, schedule, stages, kernels_, slowdown_, trace_, halo_, sums_, buffers_,
         compact ? &compact_ : nullptr, &ghost_layers_, scratch_, meter_, options_.sweep_vars},
        std::move(lanes), part.v1 == all.v1);
    run.begin(mesh_.comm().get(), options_.blocking_send);
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
      copied(t0, 1);
    }
  }
}

}  // namespace miniamr::runtime

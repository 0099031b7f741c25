#include "app/simulation.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cmath>
#include <functional>
#include <numeric>

#include <fmt/format.h>

#include "app/checkpoint.hpp"
#include "app/collective_error.hpp"
#include "app/errors.hpp"
#include "app/objects.hpp"
#include "app/plot_files.hpp"
#include "app/progress.hpp"
#include "app/root_io.hpp"
#include "comm/shared_storage.hpp"
#include "comm/tally.hpp"
#include "mesh/adapt.hpp"
#include "octree/refine.hpp"
#include "runtime/clock.hpp"
#include "runtime/exact_reduce.hpp"
#include "sfc/partition.hpp"
#include "stencil/block_pool.hpp"
#include "stencil/hash.hpp"
#include "stencil/init_values.hpp"
#include "stencil/stencil_kernels.hpp"

namespace miniamr::app {

namespace {

// The initial data are a pure function of (global cell, variable, this seed).
constexpr std::uint64_t kDataSeed = 0x6d696e69616d72ull;  // "miniamr"
// Names each adaptation's work to the slowdown's noise, apart from the stages' pieces.
constexpr std::uint64_t kAdaptId = std::uint64_t(0xada) << 52;

}  // namespace

Simulation::Simulation(const Config& config, runtime::Runtime& runtime, std::FILE* out,
                       runtime::Trace* trace, MemoryBudget budget)
    : config_(config),
      runtime_(runtime),
      mesh_(runtime.mesh()),
      out_(out),
      trace_(trace),
      budget_(std::move(budget)),
      objects_(config.objects),
      coeffs_(stencil::make_variable_coeffs(config.num_vars, kDataSeed)) {
  // Priced kernels read no value, so a simulation's ranks can all keep theirs in one place.
  if (config_.compute == "model") {
    if (const auto shared = comm::shared_block_storage())
      domain_.spare = stencil::BlockPool(shared);
  }
}

void Simulation::init_mesh() {
  MINIAMR_TIMED(runtime_.timers(), kInit);
  const auto roots = config_.root_blocks();
  domain_.grid = octree::RootGrid{roots};
  domain_.shape = config_.block_shape();
  domain_.leaves = octree::LeafSet(mesh_.initial_roots(domain_.grid));
  global_blocks_ = domain_.grid.count();
  domain_.blocks.clear();
  all_or_none(runtime_.comm().get(), "making the initial blocks", [&] {
    domain_.blocks.reserve(domain_.leaves.size());
    for (const octree::Key& k : domain_.leaves.keys()) {
      stencil::Block b = domain_.spare.make(domain_.shape);
      stencil::fill_initial(
          b,
          {std::int64_t(k.index(0)) * config_.nx, std::int64_t(k.index(1)) * config_.ny,
           std::int64_t(k.index(2)) * config_.nz},
          k.level, kDataSeed);
      domain_.blocks.push_back(std::move(b));
    }
  });
  domain_.cost.assign(domain_.blocks.size(), 0.0);
  stats_.max_blocks_rank = std::int64_t(domain_.blocks.size());
  mesh_.changed(domain_);

  previous_sums_ = current_checksums();
  stats_.initial_checksums = previous_sums_;
}

RunPoint Simulation::restore() {
  MINIAMR_TIMED(runtime_.timers(), kInit);
  const auto& comm = runtime_.comm();
  const sfc::Curve curve = config_.hilbert_ownership() ? sfc::Curve::kHilbert : sfc::Curve::kMorton;
  RunPoint p = restart(config_, comm, curve, domain_, out_);
  objects_ = p.objects;
  previous_sums_ = p.previous_sums;
  calc_stage_ = p.calc_stage;
  stats_ = p.stats;
  stats_.max_blocks_rank = std::int64_t(domain_.blocks.size());
  global_blocks_ = comm.sum(std::int64_t(domain_.blocks.size()));
  mesh_.changed(domain_);
  if (config_.plot_freq > 0 && config_.plot_format != "text") {
    field_plot_ = make_field_plot(config_);
    field_plot_->resume(comm, p.timestep);
  }
  return p;
}

std::vector<double> Simulation::current_checksums() const {
  std::vector<stencil::ExactSum> sums(std::size_t(config_.num_vars));
  for (const stencil::Block& b : domain_.blocks)
    for (int v = 0; v < config_.num_vars; ++v)
      sums[std::size_t(v)].add(stencil::interior_sum(b, v));
  return global_checksums(sums);
}

std::vector<double> Simulation::global_checksums(std::span<stencil::ExactSum> sums) const {
  // Exact accumulators reduced as integers: the totals cannot depend on the rank count or the
  // order of the additions.
  return runtime::global_sums(runtime_.comm(), sums);
}

std::uint64_t Simulation::field_digest() const {
  // A hash of each block's key and interior bits, added modulo 2^64 over all blocks: equal
  // digests mean (with overwhelming probability) the same mesh holding bitwise the same data,
  // whichever ranks hold which blocks.
  // Each block's hash is one chain of dependent steps (four multiplies deep each), so the
  // chains of kLanes blocks advance together, one's latency hidden behind the others': the
  // same hashes in less time (the end of a large run hashes every value it holds).
  const auto& s = domain_.shape;
  const auto digest = [&]<std::size_t kLanes>(std::size_t first) {
    std::array<std::uint64_t, kLanes> h{};
    for (std::size_t l = 0; l < kLanes; ++l) {
      const octree::Key& k = domain_.leaves[first + l];
      h[l] = stencil::hash_combine(std::uint64_t(k.level), k.x[0]);
      h[l] = stencil::hash_combine(stencil::hash_combine(h[l], k.x[1]), k.x[2]);
    }
    for (int v = 0; v < s.num_vars; ++v) {
      std::array<const double*, kLanes> data{};
      for (std::size_t l = 0; l < kLanes; ++l) data[l] = domain_.blocks[first + l].var(v).data();
      for (int i = 1; i <= s.nx; ++i)
        for (int j = 1; j <= s.ny; ++j)
          for (int c = 1; c <= s.nz; ++c)
            for (std::size_t l = 0; l < kLanes; ++l)
              h[l] =
                  stencil::hash_combine(h[l], std::bit_cast<std::uint64_t>(data[l][s.at(i, j, c)]));
    }
    std::uint64_t sum = 0;
    for (const std::uint64_t x : h) sum += x;
    return sum;
  };
  std::uint64_t local = 0;
  const std::size_t n = domain_.blocks.size();
  std::size_t b = 0;
  for (; b + 4 <= n; b += 4) local += digest.template operator()<4>(b);
  for (; b < n; ++b) local += digest.template operator()<1>(b);
  std::uint64_t total = 0;
  MPI_Allreduce(&local, &total, 1, MPI_UINT64_T, MPI_SUM, runtime_.comm().get());
  return total;
}

std::vector<std::int64_t> Simulation::leaves_per_level_then(
    std::span<const octree::Key> keys, std::span<const std::int64_t> more) const {
  const std::size_t levels = std::size_t(config_.num_refine) + 1;
  std::vector<std::int64_t> counts(levels + more.size(), 0);
  for (const octree::Key& k : keys) ++counts[std::size_t(k.level)];
  std::ranges::copy(more, counts.begin() + std::ptrdiff_t(levels));
  return counts;
}

std::vector<std::int64_t> Simulation::level_counts(std::span<std::int64_t> more,
                                                   sfc::LoadSpread* spread) const {
  const std::size_t levels = std::size_t(config_.num_refine) + 1;
  std::vector<std::int64_t> counts = leaves_per_level_then(domain_.leaves.keys(), more);
  // The most and (negated) the fewest blocks of a rank, reduced by maximum.
  const auto blocks = std::int64_t(domain_.leaves.size());
  std::array<std::int64_t, 2> extremes{blocks, -blocks};
  runtime_.comm().sum_and_max_in_place(counts,
                                       spread ? std::span(extremes) : std::span<std::int64_t>());
  if (!more.empty()) std::copy(counts.begin() + std::ptrdiff_t(levels), counts.end(), more.begin());
  counts.resize(levels);
  if (spread) {
    std::int64_t sum = 0;
    for (const auto n : counts) sum += n;
    *spread = {sum, -extremes[1], extremes[0], runtime_.comm().size()};
  }
  return counts;
}

sfc::LoadSpread Simulation::block_spread() const {
  sfc::LoadSpread spread;
  level_counts({}, &spread);
  return spread;
}

void Simulation::print_level_table(int ts, const std::vector<std::int64_t>& counts) {
  if (!out_ || !(config_.report_perf & 8) || config_.verbosity == Verbosity::kQuiet) return;
  // The reference prints the table after every refinement step; a normal run only when the
  // mesh changed.
  const bool changed = counts != printed_counts_;
  printed_counts_ = counts;
  if (config_.verbosity == Verbosity::kNormal && !changed) return;
  std::int64_t total = 0;
  for (std::size_t l = 0; l < counts.size(); ++l) {
    fmt::print(out_, "Number of blocks at level {} at timestep {} is {}\n", l, ts, counts[l]);
    total += counts[l];
  }
  fmt::print(out_, "Total number of blocks at timestep {} is {}\n", ts, total);
}

void Simulation::check_peak(std::int64_t peak) const {
  if (config_.max_blocks_given && peak > config_.max_blocks) {
    throw RunError(fmt::format(
        "refinement at timestep {} needs {} blocks on one rank, more than --max_blocks {}",
        timestep_, peak, config_.max_blocks));
  }
  if (const std::string why =
          does_not_fit(double(peak), domain_.shape, budget_,
                       fmt::format("refinement at timestep {} needs", timestep_));
      !why.empty())
    throw RunError(why);
}

void Simulation::apply_plan(const octree::AdaptPlan& plan, std::int64_t peak) {
  // Splitting and merging involve no other rank, so an allocation failure here can end every
  // rank cleanly. A rank whose peak is over its limits fails before allocating; the others
  // allocate within theirs. The vote rides on the neighbourhood's exchange that follows
  // (Mesh::adapted, collective, and reading only the leaves' keys), and all then stop.
  const LocalAttempt adapting(
      runtime_.comm().get(), fmt::format("refining the mesh at timestep {}", timestep_), [&] {
        check_peak(peak);
        const auto t0 = runtime::Clock::now();
        mesh::adapt_blocks(domain_, plan);
        // Splitting and merging is work on block values: a slower rank does it slowly.
        runtime_.slowdown().after(
            runtime::seconds_since(t0),
            kAdaptId ^ (std::uint64_t(timestep_) << 8) ^ std::uint64_t(++adaptations_),
            runtime::Slowdown::Work::kAdaptation);
      });
  std::array<int, 1> least{adapting.vote()};
  mesh_.adapted(domain_, least);
  adapting.settle(least[0]);
}

std::optional<Simulation::StepTotals> Simulation::refine_iteration(int iterations_left) {
  const int R = config_.num_refine;
  const auto cells = config_.block_cells();
  std::function<int(const octree::Key&)> wanted;
  if (config_.uniform_refine != 0) {
    wanted = [R](const octree::Key& k) { return k.level < R ? 1 : 0; };
  } else {
    wanted = [&](const octree::Key& k) {
      return object_mark(objects_, k, domain_.grid, R, cells, config_.refine_ghost);
    };
  }
  // A family of 8 leaves split between ranks can coarsen only on one rank. The dynamic
  // balancer's cuts split families wherever its shares fall, and the static runtime's keep whole
  // only the families whole on a rank. Such families are marked where they lie, the closure
  // keeps each one's marks alike over its ranks (the sibling rounds it takes only while a family
  // is split), and only the ones that then coarsen come together. Gathering every split family
  // before the marks moves and re-plans families that mostly stay: at 1024 simulated ranks of
  // the weak-scaling deck it gathered 304 blocks where 64 coarsen, and took 7% longer.
  const bool split_may_coarsen = mesh_.families_split();
  std::optional<mesh::Mesh::SplitFamilies> split;
  if (split_may_coarsen) split = mesh_.split_families(domain_);
  auto marks = octree::initial_marks(
      domain_.leaves, R, wanted,
      split ? std::span<const std::uint8_t>(split->complete) : std::span<const std::uint8_t>{});
  const auto closure = octree::close_marks(domain_.leaves, marks, domain_.grid, mesh_.mailbox(),
                                           octree::closure_rounds(R, split_may_coarsen));
  stats_.closure_rounds += closure.rounds;
  step_counts_[1] += closure.changes_sent;
  if (split) {
    std::vector<int>& targets = split->home;
    bool moving = false;
    for (std::size_t i = 0; i < targets.size(); ++i) {
      if (marks[i] != octree::kCoarsen) targets[i] = runtime_.comm().rank();
      moving = moving || targets[i] != runtime_.comm().rank();
    }
    if (runtime_.comm().any(moving)) {
      MINIAMR_TIMED(runtime_.timers(), kLoadBalance);
      step_counts_[0] += mesh_.move_with_marks(domain_, targets, marks);
    }
  }
  octree::AdaptPlan plan = octree::plan_adapt(domain_.leaves, marks);
  // The ranks' counts in one collective (p4est's one count allgather per adaptation, with no
  // array of every rank's): the global changes (which rank holds a leaf changes none of them)
  // and, for the balance before the split, the spread of the adapted leaves over the ranks and
  // the cut's weight along the curve; then the adapted leaves per level and the step's counts,
  // which are the step's totals when nothing changes (the iteration that ends the step).
  const bool cuts = cut_shares_.has_value() && config_.lb_opt >= 1;
  const std::vector<std::int64_t> adapted =
      cuts ? adapted_weights(plan, iterations_left, wanted) : std::vector<std::int64_t>{};
  enum : std::size_t { kSplits, kMerges, kLeaves, kWeight, kLevels };
  const std::size_t levels = std::size_t(R) + 1;
  std::vector<std::int64_t> mine{plan.splits, plan.merges, std::int64_t(plan.keys.size()),
                                 std::accumulate(adapted.begin(), adapted.end(), std::int64_t{0})};
  const std::vector<std::int64_t> per_level = leaves_per_level_then(plan.keys, step_counts_);
  mine.insert(mine.end(), per_level.begin(), per_level.end());
  const comm::Tally counts = comm::tally(runtime_.comm(), mine);
  const std::array<std::int64_t, 2> changed{counts.total[kSplits], counts.total[kMerges]};
  const std::int64_t changes = changed[0] + changed[1];
  if (changes == 0) {
    stats_.max_blocks_rank = std::max(stats_.max_blocks_rank, std::int64_t(domain_.leaves.size()));
    StepTotals totals;
    const auto level_0 = counts.total.begin() + std::ptrdiff_t(kLevels);
    totals.per_level.assign(level_0, level_0 + std::ptrdiff_t(levels));
    totals.spread = {counts.total[kLeaves], counts.min[kLeaves], counts.max[kLeaves],
                     runtime_.comm().size()};
    std::copy_n(level_0 + std::ptrdiff_t(levels), totals.counts.size(), totals.counts.begin());
    return totals;
  }
  // The balance leaves the plans to the adaptation, so it runs only when one follows.
  const sfc::LoadSpread adapted_leaves{counts.total[kLeaves], counts.min[kLeaves],
                                       counts.max[kLeaves], runtime_.comm().size()};
  const CutBeforeAdapt cut =
      cuts ? balance_before_adapt(plan, adapted, adapted_leaves,
                                  {counts.before[kWeight], counts.total[kWeight]}, marks)
           : CutBeforeAdapt::kNone;
  adapted_mesh_cut_ = cut != CutBeforeAdapt::kNone;
  if (cut == CutBeforeAdapt::kMoved) plan = octree::plan_adapt(domain_.leaves, marks);

  // Merges come before splits, and a parent is released after its eighth child is made, so the
  // peak is at most the old blocks plus 7 per split plus the parent being split.
  const std::int64_t peak =
      std::int64_t(domain_.leaves.size()) + 7 * plan.splits + (plan.splits > 0 ? 1 : 0);
  stats_.max_blocks_rank = std::max(stats_.max_blocks_rank, peak);
  stats_.blocks_split += changed[0];
  stats_.blocks_reformed += changed[1];
  apply_plan(plan, peak);  // collective: every rank rebuilds its neighbourhood
  return std::nullopt;
}

std::vector<std::int64_t> Simulation::adapted_weights(
    const octree::AdaptPlan& plan, int iterations_left,
    const std::function<int(const octree::Key&)>& wanted) const {
  // A new leaf weighs what the leaf it comes from weighs (a child its parent: the cost record is
  // copied), a merged parent the mean of its children. A child that the iterations left will
  // split again weighs as the leaves it becomes: cut by the next leaves alone, each iteration of
  // a step would shift the ranks' ranges along the curve towards where the mesh grows, and most
  // ranks would move blocks at every iteration rather than once. (A kept leaf that the marks
  // would split was split: a mark only rises in the closure.) The last iteration that changes
  // the mesh has no split to come, so its cut is still the one the balance after it would make.
  const std::vector<std::int64_t> w = cut_weights();
  std::vector<std::int64_t> adapted(plan.keys.size());
  for (std::size_t j = 0; j < plan.keys.size(); ++j) {
    const octree::Origin& o = plan.origin[j];
    if (o.kind == octree::Origin::kSplit) {
      adapted[j] = w[o.old_index] *
                   octree::leaves_after(plan.keys[j], iterations_left, config_.num_refine, wanted);
      continue;
    }
    if (o.kind == octree::Origin::kKept) {
      adapted[j] = w[o.old_index];
      continue;
    }
    for (std::size_t c = 0; c < 8; ++c) adapted[j] += w[o.old_index + c];
    adapted[j] = std::max<std::int64_t>(1, adapted[j] / 8);
  }
  return adapted;
}

Simulation::CutBeforeAdapt Simulation::balance_before_adapt(const octree::AdaptPlan& plan,
                                                            std::span<const std::int64_t> adapted,
                                                            const sfc::LoadSpread& leaves,
                                                            comm::Communicator::PrefixSum along,
                                                            std::vector<std::int8_t>& marks) {
  if (equal_shares() && !sfc::needs_balance(leaves, config_.inbalance))
    return CutBeforeAdapt::kNone;
  // Cutting the adapted mesh before it exists means that every rank splits its share (no rank
  // waits for the page faults of another's children), that parents travel instead of their
  // children, and that the balance after the step finds the partition already cut.
  runtime::Timers& timers = runtime_.timers();
  mesh::Mesh::AdaptCut cut;
  {
    MINIAMR_TIMED(timers, kLoadBalance);
    cut = mesh_.cut_for_adapt(domain_, plan, adapted, *cut_shares_, along);
  }
  // Merging the families that leave is the adaptation's coarsening, done before they go: it
  // counts as refinement (T_ref), the coarsening of their cells too, which the move does while
  // the receivers take storage for them, and so does the new partition's exchange, which the
  // move makes while the blocks travel and the adaptation's rebuild takes. The move's exchange
  // also says whether any rank moved a block.
  const bool merged = mesh_.merge_leaving(domain_, marks, cut);
  const auto moving = runtime::Clock::now();
  const std::optional<std::int64_t> sent = mesh_.move_for_adapt(domain_, marks, cut, merged);
  timers.add(runtime::Phase::kLoadBalance, runtime::seconds_since(moving) - cut.adapting_seconds);
  if (!sent) return CutBeforeAdapt::kHeld;
  step_counts_[2] += *sent;
  return CutBeforeAdapt::kMoved;
}

void Simulation::refine_step(int ts, int iterations) {
  const double t0 = trace_ != nullptr ? trace_->now_us() : 0.0;
  const std::int64_t moved_before = stats_.blocks_moved_lb;
  const std::int64_t gathered_before = stats_.blocks_moved_coarsen;
  const comm::Communicator::Traffic traffic_before = runtime_.comm().traffic();
  const std::int64_t rounds_before = stats_.closure_rounds;
  const std::uint64_t generation_before = mesh_.generation();
  std::vector<std::int64_t> per_level;
  sfc::LoadSpread spread;
  {
    // T_ref leaves out the balancing inside the step (gathering families, the cut before
    // splitting and its move, lb_opt 2), which T_lb counts, and the wait
    // of the dynamic balancer's summaries for the ranks still in their timesteps, which T_comm
    // counts, so that they add up to the step.
    runtime::Timers& timers = runtime_.timers();
    const auto others = [&] {
      return timers.get(runtime::Phase::kLoadBalance) + timers.get(runtime::Phase::kCommunicate);
    };
    const double others_before = others();
    const auto start = runtime::Clock::now();
    ++stats_.refine_steps;
    cut_shares_ = refinement_shares(ts);
    adapted_mesh_cut_ = false;
    // Marks are recomputed from scratch each iteration with the same objects, so once an
    // iteration changes nothing, the remaining ones cannot either.
    std::optional<StepTotals> totals;
    for (int it = 0; it < iterations && !totals; ++it) {
      totals = refine_iteration(iterations - it - 1);
      if (!totals && config_.lb_opt == 2) maybe_rebalance(/*report=*/false);
    }
    // A step that ended on an unchanged mesh has its totals from that iteration's tally; one
    // that ran out of iterations, in one reduction of the blocks per level with the step's
    // counts and the spread of the ranks' blocks.
    if (totals) {
      per_level = std::move(totals->per_level);
      spread = totals->spread;
      step_counts_ = totals->counts;
    } else {
      per_level = level_counts(step_counts_, &spread);
    }
    stats_.blocks_moved_coarsen += step_counts_[0];
    stats_.closure_changes_sent += step_counts_[1];
    stats_.blocks_moved_lb += step_counts_[2];
    step_counts_ = {0, 0, 0};
    const double step = runtime::seconds_since(start);
    timers.add(runtime::Phase::kRefine, step - (others() - others_before));
  }
  trace_event("refine", t0, ts);
  stats_.mesh_history.push_back({ts, std::move(per_level)});
  const std::int64_t blocks_before = global_blocks_;
  global_blocks_ = 0;
  for (const auto n : stats_.mesh_history.back().blocks_per_level) global_blocks_ += n;
  // The step's cut used speeds measured on the mesh before it: a mesh that more than doubled
  // (a run's first steps: a few blocks become thousands) may get a decision after its first
  // timestep, measured on it, rather than keep a cut of short, noisy intervals until the next
  // refinement step (LoadBalancer::mesh_grew says when). Global counts: every rank alike.
  if (balancer_ && global_blocks_ > 2 * blocks_before) balancer_->mesh_grew(ts);
  print_level_table(ts, stats_.mesh_history.back().blocks_per_level);
  // Unlike the reference, uniform meshes are balanced too: ownership never changes results. A
  // mesh cut as it was adapted is already the balanced one (the same leaves, weights and shares
  // give the same cut, but for the children of a leaf split across a bound, made where most of
  // them belong): checking that would cost three collectives.
  const bool cut = adapted_mesh_cut_ && weights_survive_adaptation();
  if (config_.lb_opt >= 1 && !cut)
    maybe_rebalance(/*report=*/true, spread, mesh_.generation() == generation_before);
  // Global counts, summed at the step's end and by the balance after it: every rank alike.
  const std::int64_t cut_moved = stats_.blocks_moved_lb - moved_before;
  if (balancer_) balancer_->refinement_moved(ts, cut_moved);
  const auto traffic = runtime_.comm().traffic() - traffic_before;
  stats_.refine_traffic.push_back({ts, traffic.collectives, stats_.closure_rounds - rounds_before,
                                   traffic.messages,
                                   cut_moved + stats_.blocks_moved_coarsen - gathered_before});
  print_comm_partners();
  expect_storage(ts);
}

void Simulation::expect_storage(int ts) {
  // The next refinement interval is taken to draw as many blocks from the pool, at its
  // deepest, as this one did. The initial refinement builds the mesh from its roots and says
  // nothing about a later step; the simulation build's waits are simulated, not spent.
#ifdef MINIAMR_SIMGRID
  constexpr bool simulated = true;
#else
  constexpr bool simulated = false;
#endif
  std::size_t wanted = 0;
  if (config_.map_ahead == 1 && ts > 0 && !simulated && refinement_follows(config_, ts))
    wanted = domain_.spare.drawn();
  domain_.spare.expect(wanted, blocks_that_fit(domain_.shape, budget_));
}

std::vector<std::int64_t> Simulation::block_weights() const {
  const std::size_t n = domain_.leaves.size();
  switch (config_.lb_weight) {
    case LbWeight::kBlocks:
      return std::vector<std::int64_t>(n, 1);
    case LbWeight::kModel: {
      // Stencil work on the interior plus ghost work per face: a level change costs about
      // twice a same-level copy (it averages or sums), a domain face half of one.
      const auto& s = domain_.shape;
      const std::int64_t points = config_.stencil == 27 ? 27 : 7;
      std::vector<std::int64_t> w(n);
      for (std::size_t i = 0; i < n; ++i) {
        std::int64_t faces = 0;
        for (const octree::Face f : octree::kFaces) {
          const int a = octree::axis(f);
          const std::int64_t area = std::int64_t(a == 0   ? s.ny * s.nz
                                                 : a == 1 ? s.nx * s.nz
                                                          : s.nx * s.ny);
          const auto n_key = octree::face_neighbour(domain_.leaves[i], f, domain_.grid);
          if (!n_key) {
            faces += area / 2;
          } else {
            const auto across = domain_.leaves.across(domain_.leaves[i], f, domain_.grid);
            faces += across.relation == octree::Relation::kSame ? area : 2 * area;
          }
        }
        w[i] = (std::int64_t(s.interior_cells()) * points + faces) * s.num_vars;
      }
      return w;
    }
    case LbWeight::kMeasured: {
      std::vector<std::int64_t> w(n);
      for (std::size_t i = 0; i < n; ++i) w[i] = 1 + std::int64_t(domain_.cost[i] * 1e9);  // ns
      return w;
    }
  }
  return {};
}

std::optional<sfc::Shares> Simulation::refinement_shares(int ts) {
  if (balancer_) return balancer_->refinement_shares(ts);
  if (runtime_.comm().size() == 1) return std::nullopt;
  return sfc::Shares{};  // none: the count cut, equal shares of the weights
}

bool Simulation::equal_shares() const {
  return cut_shares_->equal();
}

bool Simulation::weights_survive_adaptation() const {
  // The dynamic balancer weighs blocks by their cells unless by the model; the static cut by
  // blocks unless by the model or measured costs.
  return balancer_ ? config_.lb_weight != LbWeight::kModel : config_.lb_weight == LbWeight::kBlocks;
}

std::vector<std::int64_t> Simulation::balance_weights() const {
  if (config_.lb_weight == LbWeight::kModel) return block_weights();
  return std::vector<std::int64_t>(domain_.leaves.size(),
                                   std::int64_t(domain_.shape.interior_cells()) * config_.num_vars);
}

std::vector<std::int64_t> Simulation::cut_weights() const {
  return balancer_ ? balance_weights() : block_weights();
}

double Simulation::balance_horizon(int ts) const {
  int steps = config_.lb_freq;  // with --time alone the run's end is not known
  if (refinement_follows(config_, ts))
    steps = config_.refine_freq - ts % config_.refine_freq;
  else if (config_.num_tsteps_given || !config_.time_given)
    steps = std::max(1, config_.num_tsteps - ts);
  return double(steps) * config_.stages_per_ts;
}

void Simulation::maybe_rebalance(bool report, std::optional<sfc::LoadSpread> known,
                                 bool unchanged) {
  if (!cut_shares_) return;
  const sfc::LoadSpread loads = known ? *known : block_spread();
  if (equal_shares() && !sfc::needs_balance(loads, config_.inbalance)) return;
  // The cut that made this partition of this mesh, by these shares, moves nothing: without this
  // a count cut that cannot even out the counts (families kept whole) would be re-made, two
  // collectives each, after every refinement step that changes nothing. Measured weights change
  // without the mesh: their cuts are always re-made.
  const bool mesh_weights = balancer_ || config_.lb_weight != LbWeight::kMeasured;
  if (mesh_weights && standing_cut_ && standing_cut_->generation == mesh_.generation() &&
      standing_cut_->shares == *cut_shares_)
    return;
  if (unchanged && balancer_ && !balancer_->recut_pays(timestep_, balance_horizon(timestep_)))
    return;
  auto line = [&](const char* when, const sfc::LoadSpread& l) {
    if (!report || !verbose_output()) return;
    fmt::print(out_, "{} ave {} min {} max {}\n", when, l.sum / std::int64_t(l.ranks), l.min,
               l.max);
  };
  line("before", loads);
  const double t0 = trace_ != nullptr ? trace_->now_us() : 0.0;
  std::int64_t sent = 0;
  const std::uint64_t generation = mesh_.generation();
  const auto started = runtime::Clock::now();
  {
    MINIAMR_TIMED(runtime_.timers(), kLoadBalance);
    sent = mesh_.rebalance(domain_, cut_weights(), *cut_shares_);
  }
  if (balancer_ && mesh_.generation() != generation)
    balancer_->migrated(runtime::seconds_since(started), sent);
  trace_event("rebalance", t0, timestep_);
  standing_cut_ = StandingCut{mesh_.generation(), *cut_shares_};
  stats_.blocks_moved_lb += runtime_.comm().sum(sent);
  ++stats_.load_balances;
  stats_.max_blocks_rank = std::max(stats_.max_blocks_rank, std::int64_t(domain_.leaves.size()));
  if (report && verbose_run()) line("after", block_spread());
}

void Simulation::print_comm_partners() const {
  // Fifteen reductions per refinement step, only for these lines.
  if (!verbose_run()) return;
  const mesh::CommPartners mine = mesh_.comm_partners();
  const std::array<double, 5> values{double(mine.axis[0]), double(mine.axis[1]),
                                     double(mine.axis[2]), double(mine.total), double(mine.unique)};
  std::array<comm::Spread, 5> spreads;
  for (std::size_t i = 0; i < 5; ++i) spreads[i] = comm::spread(runtime_.comm(), values[i]);
  if (!verbose_output()) return;
  const char* names[5] = {"x", "y", "z", "total", "unique"};
  for (std::size_t i = 0; i < 5; ++i)
    fmt::print(out_, "comm partners {} ave {:6.2f} min {} max {}\n", names[i], spreads[i].avg,
               int(spreads[i].min), int(spreads[i].max));
  fmt::print(out_, "\n");
}

int Simulation::batch_length(int ts, bool fixed_steps) const {
  // With --time the run ends at a simulated time, known to be reached only when it is.
  if (!fixed_steps) return 1;
  const auto every = [ts](int freq, int k) { return freq > 0 && (ts + k) % freq == 0; };
  int n = 1;
  while (n < config_.batch_tsteps && ts + n <= config_.num_tsteps) {
    const int k = n - 1;  // timestep ts + k ends the batch when it reads or changes the blocks
    if (refines_after(config_, ts + k) || every(config_.plot_freq, k) ||
        every(config_.checkpoint_freq, k) || (balancer_ && balancer_->decides_after(ts + k)))
      break;
    ++n;
  }
  return n;
}

void Simulation::run_batch(int timesteps) {
  const int nv = config_.num_vars;
  const auto per_ts = std::size_t(config_.stages_per_ts);
  std::vector<runtime::StageWork> stages(per_ts * std::size_t(timesteps));
  for (std::size_t s = 0; s < stages.size(); ++s) {
    runtime::StageWork& work = stages[s];
    work.stencil = config_.stencil;
    work.vars = {0, nv};
    work.group = config_.effective_comm_vars();
    work.num_vars = nv;
    work.calc_stage = calc_stage_ + std::int64_t(s);
    work.checksum = checksum_stage(s);
    work.coeffs = &coeffs_;
    work.measure_cost = config_.lb_weight == LbWeight::kMeasured;
  }
  batch_totals_ = runtime_.run_stages(domain_, stages);
  ++stats_.stage_batches;
}

void Simulation::account_timestep(int k) {
  const int nv = config_.num_vars;
  const auto per_ts = std::size_t(config_.stages_per_ts);
  for (std::size_t s = std::size_t(k) * per_ts; s < std::size_t(k + 1) * per_ts; ++s) {
    stats_.block_stage_sum += global_blocks_;
    stats_.cell_var_updates_rank +=
        std::int64_t(domain_.leaves.size()) * std::int64_t(domain_.shape.interior_cells()) * nv;
    ++calc_stage_;
    ++stats_.stages_done;
    if (checksum_stage(s)) check_sums(batch_totals_[s]);
  }
}

void Simulation::trace_event(std::string_view name, double start_us, std::int64_t ts) const {
  if (trace_ == nullptr || !trace_->enabled()) return;
  trace_->record({name,
                  "mesh",
                  start_us,
                  trace_->now_us() - start_us,
                  0,
                  {{{"timestep", ts}, {"blocks", std::int64_t(domain_.leaves.size())}, {}, {}}},
                  {},
                  {}});
}

void Simulation::write_graph() const {
  const std::string dot = runtime_.graph_dot(domain_, config_.stencil != 7, config_.stages_per_ts);
  write_on_root(runtime_.comm().get(), config_.dump_graph_path, dot, "--dump_graph file");
}

void Simulation::check_sums(const std::vector<double>& sums) {
  // Modelled kernels compute no values: their sums are not checked, nor claimed.
  if (config_.compute == "model") return;
  const double tol = std::pow(10.0, -config_.error_tol);
  // With the variable-work stencil only variable 0 conserves its sum.
  const int checked = config_.stencil == 0 ? 1 : config_.num_vars;
  for (int v = 0; v < config_.num_vars; ++v) {
    const double now = sums[std::size_t(v)];
    const double old = previous_sums_[std::size_t(v)];
    const double rel = std::fabs((now - old) / old);
    if (out_ && config_.report_diffusion)
      fmt::print(out_, "{} var {} sum {:f} old {:f} diff {:f} {:f} tol {:f}\n", timestep_, v, now,
                 old, now - old, rel, tol);
    if (v < checked && !(rel <= tol)) {
      const std::string msg =
          fmt::format("Time step {} sum {:f} (old {:f}) variable {} difference too large",
                      timestep_, now, old, v);
      throw RunError(msg);
    }
    previous_sums_[std::size_t(v)] = now;
  }
}

void Simulation::write_plot(int ts, double time) {
  if (config_.plot_format == "text") {
    write_text_plot(ts);
    return;
  }
  if (!field_plot_) field_plot_ = make_field_plot(config_);
  field_plot_->write(domain_, runtime_.comm(), ts, time);
}

void Simulation::write_text_plot(int ts) const {
  // Gather (level, centre) of every block to rank 0, in rank order (the reference's format).
  const int R = config_.num_refine;
  std::vector<std::int64_t> mine;
  mine.reserve(domain_.leaves.size() * 4);
  for (const octree::Key& k : domain_.leaves.keys()) {
    mine.push_back(k.level);
    for (int d = 0; d < 3; ++d) {
      // Reference units: a level-L block's centre is i*2^(R+1-L) + 2^(R-L).
      const std::int64_t i = k.index(d);
      mine.push_back(i * (std::int64_t{1} << (R + 1 - k.level)) +
                     (std::int64_t{1} << (R - k.level)));
    }
  }
  const auto all = runtime_.comm().gather(mine);
  const std::string name = in_plot_dir(config_, plot_file_name(config_, ts));
  std::string text;
  if (runtime_.comm().is_root()) {
    std::int64_t total = 0;
    for (const auto& r : all) total += std::int64_t(r.size() / 4);
    const auto roots = config_.root_blocks();
    text = fmt::format("{} {} {} {} {}\n", total, R, roots[0], roots[1], roots[2]);
    for (const auto& r : all) {
      text += fmt::format("{}\n", r.size() / 4);
      for (std::size_t b = 0; b < r.size(); b += 4)
        text += fmt::format("{} {} {} {}\n", r[b], r[b + 1], r[b + 2], r[b + 3]);
    }
  }
  write_on_root(runtime_.comm().get(), name, text, "plot file");
}

namespace {

// The --time step from the objects' speeds, refused when it cannot advance the run (zero: it
// would loop forever; infinite or NaN: the objects would leave the numbers). The objects are the
// same on every rank, so every rank agrees.
double checked_time_step(const std::vector<Object>& objects, const octree::RootGrid& grid, int R,
                         std::array<int, 3> cells, int ts) {
  const double delta = time_step(objects, grid, R, cells);
  if (!(delta > 0.0) || !std::isfinite(delta)) {
    const std::string what = fmt::format(
        "--time: the objects' speeds give a time step of {} {}(zero, infinite or not a number): "
        "check the objects' move and inc values",
        delta, ts > 0 ? fmt::format("at timestep {} ", ts) : std::string());
    if (ts == 0) throw UsageError(what);
    throw RunError(what);
  }
  return delta;
}

}  // namespace

void Simulation::run() {
  // Time control (reference semantics): --time alone adapts the step to the objects' speed;
  // --time with --num_tsteps uses T/n; otherwise unit steps for num_tsteps steps. A step the
  // objects make impossible is refused before any work.
  const bool use_time = config_.time_given;
  const bool use_steps = config_.num_tsteps_given || !use_time;
  const octree::RootGrid grid{config_.root_blocks()};
  double delta = 1.0;
  if (use_time && use_steps)
    delta = config_.time / config_.num_tsteps;
  else if (use_time)
    delta = checked_time_step(objects_, grid, config_.num_refine, config_.block_cells(), 0);

  // The dynamic runtime moves ownership from measured costs (and measures the network first);
  // the static one balances block counts after refinement, as the reference does.
  if (config_.runtime == "dynamic") balancer_ = std::make_unique<LoadBalancer>(config_, runtime_);
  auto& timers = runtime_.timers();
  const auto t0 = runtime::Clock::now();
  Progress progress(out_, config_);
  const int R = config_.num_refine;

  double t = 0.0;
  int first_ts = 1;
  if (!config_.restart_path.empty()) {
    const RunPoint p = restore();
    t = p.sim_time;
    delta = p.delta;
    first_ts = p.timestep + 1;
  } else {
    init_mesh();
    if (R > 0 || config_.uniform_refine != 0) refine_step(0, R);
    if (config_.plot_freq > 0) write_plot(0, 0.0);
  }

  const double updates_per_block =
      double(domain_.shape.interior_cells()) * config_.num_vars * config_.stages_per_ts;
  progress.start(first_ts, objects_, delta);
  int batch_first = first_ts, batch_end = first_ts - 1;  // the timesteps of the last batch
  for (int ts = first_ts;; ++ts) {
    timestep_ = ts;
    const std::int64_t stage_blocks = global_blocks_;  // refinement comes after the stages
    if (verbose_output()) fmt::print(out_, "Timestep {} time {:f} delta {:f}\n", ts, t, delta);
    if (ts == 1 && !config_.dump_graph_path.empty()) write_graph();
    if (ts > batch_end) {
      const int n = batch_length(ts, !use_time);
      run_batch(n);
      batch_first = ts;
      batch_end = ts + n - 1;
      progress.ran(batch_end, double(stage_blocks) * updates_per_block * n);
      if (balancer_) {
        const std::vector<std::int64_t> w = balance_weights();
        balancer_->ran(std::accumulate(w.begin(), w.end(), std::int64_t{0}), std::int64_t(w.size()),
                       n * config_.stages_per_ts, timers.steps());
      }
    }
    account_timestep(ts - batch_first);
    if (adapting()) move_objects(objects_, delta);
    // A refinement step cuts the adapted mesh by the ranks' speeds; between them, the
    // dynamic runtime's balancer decides from its measurements.
    if (refines_after(config_, ts)) {
      refine_step(ts, config_.effective_block_change());
    } else if (balancer_ && balancer_->decides_after(ts)) {
      const double began = trace_ != nullptr ? trace_->now_us() : 0.0;
      balancer_->decide(ts, domain_, balance_weights(), objects_, delta, balance_horizon(ts));
      trace_event("balance", began, ts);
    }
    // (t is still the time this timestep started from)
    if (config_.plot_freq > 0 && ts % config_.plot_freq == 0) write_plot(ts, t + delta);
    t += delta;
    stats_.timesteps_done = ts;
    stats_.sim_time = t;
    if (use_time && !use_steps)
      delta = checked_time_step(objects_, grid, R, config_.block_cells(), ts);
    if (config_.checkpoint_freq > 0 && ts % config_.checkpoint_freq == 0) {
      const auto began = std::chrono::steady_clock::now();
      write_checkpoint(config_, runtime_.comm(), domain_,
                       RunPoint{ts, t, delta, calc_stage_, objects_, previous_sums_, stats_});
      if (out_ != nullptr && config_.verbosity != Verbosity::kQuiet)
        fmt::print(out_, "checkpoint {} written in {:.2f} s\n",
                   checkpoint_path(config_.checkpoint_dir, ts),
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count());
    }
    progress.step(ts, t, global_blocks_);
    const bool steps_done = use_steps && ts >= config_.num_tsteps;
    const bool time_done = use_time && t >= config_.time;
    if (steps_done || time_done) break;
  }
  if (balancer_) {
    const std::vector<std::int64_t> w = balance_weights();
    balancer_->finish(std::accumulate(w.begin(), w.end(), std::int64_t{0}), std::int64_t(w.size()));
  }
  timers.add(runtime::Phase::kTotal, runtime::seconds_since(t0));
  stats_.final_checksums = current_checksums();
  stats_.field_digest = field_digest();
  stats_.final_level_counts = level_counts();
  stats_.final_blocks = 0;
  for (auto c : stats_.final_level_counts) stats_.final_blocks += c;
}

}  // namespace miniamr::app

#include "app/load_balancer.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <numeric>
#include <string>
#include <type_traits>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/errors.hpp"
#include "app/input_file.hpp"
#include "app/lb_replay.hpp"
#include "app/link_model_file.hpp"
#include "app/objects.hpp"
#include "app/root_io.hpp"
#include "app/timeline.hpp"
#include "io/printable.hpp"
#include "mesh/migrate.hpp"
#include "runtime/clock.hpp"
#include "sfc/partition.hpp"

namespace miniamr::app {

namespace {

using Json = nlohmann::json;
namespace balance = runtime::balance;

std::array<std::uint32_t, 4> key_words(const octree::Key& k) {
  return {std::uint32_t(k.level), k.x[0], k.x[1], k.x[2]};
}

// The balancer's price of moving data: a miniamr-netbench model (--lb_link_model), else a
// start-up measurement. Of a model's classes, the one migrations take: other_node as soon as the
// ranks span nodes. Collective; every rank gets the same model or the same error.
runtime::LinkModel link_model(const Config& config, const comm::Communicator& comm) {
  const std::string& path = config.lb_link_model_path;
  if (path.empty()) return runtime::measure_link_model(comm);
  const LinkModels models = parse_link_models(
      text_from_root(comm.get(), [&] { return read_input_text(path, "link model"); }), path);
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(comm.get(), MPI_COMM_TYPE_SHARED, comm.rank(), MPI_INFO_NULL, &node);
  int node_ranks = 1;
  MPI_Comm_size(node, &node_ranks);
  MPI_Comm_free(&node);
  const bool one_node = comm.all(node_ranks == comm.size());
  const auto& chosen = one_node ? models.same_node : models.other_node;
  if (!chosen)
    throw UsageError(
        fmt::format("--lb_link_model {}: the model has no {} class, and this run's "
                    "ranks {}",
                    io::shown(path, 200), one_node ? "same_node" : "other_node",
                    one_node ? "share one node" : "span several nodes"));
  return *chosen;
}

// This rank's moves as contiguous ranges of the curve, 11 numbers each (from, to, the first
// and the last key, blocks): what the log records and a replay applies.
std::vector<std::int64_t> move_ranges(const mesh::Domain& domain,
                                      std::span<const std::size_t> order,
                                      std::span<const int> targets, int me) {
  std::vector<std::int64_t> out;
  for (std::size_t p = 0; p < targets.size();) {
    std::size_t q = p;
    while (q + 1 < targets.size() && targets[q + 1] == targets[p]) ++q;
    if (targets[p] != me) {
      const auto a = key_words(domain.leaves[order[p]]);
      const auto b = key_words(domain.leaves[order[q]]);
      out.insert(out.end(), {me, targets[p], a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3],
                             std::int64_t(q - p + 1)});
    }
    p = q + 1;
  }
  return out;
}

double imbalance_of(std::span<const double> t) {
  const double mean = std::accumulate(t.begin(), t.end(), 0.0) / double(t.size());
  return mean > 0 ? *std::ranges::max_element(t) / mean : 1.0;
}

// Predicted seconds per stage of every rank: its work over its measured speed.
std::vector<double> rank_times(std::span<const balance::RankSummary> ranks) {
  const std::vector<double> speeds = balance::rank_speeds(ranks);
  std::vector<double> t(ranks.size());
  for (std::size_t r = 0; r < t.size(); ++r) t[r] = double(ranks[r].work) / speeds[r];
  return t;
}

}  // namespace

LoadBalancer::LoadBalancer(const Config& config, runtime::Runtime& runtime)
    : config_(config),
      rt_(runtime),
      link_(link_model(config, runtime.comm())),
      directory_(runtime.comm()),
      strategy_(balance::strategy_named(config.lb).value_or(balance::Strategy::kSfc)),
      rule_{config.lb_threshold, {}} {
  const auto& comm = rt_.comm();
  if (comm.is_root() && !config_.lb_log_path.empty())
    log_ = Json{{"miniamr_lb_log", 1},
                {"ranks", comm.size()},
                {"strategy", config_.lb},
                {"lb_threshold", config_.lb_threshold},
                {"lb_freq", config_.lb_freq},
                {"noise_factor", rule_.noise.factor},
                {"noise_floor", rule_.noise.floor},
                {"link_model", config_.lb_link_model_path.empty() ? std::string("measured")
                                                                  : config_.lb_link_model_path},
                {"link_latency_s", link_.latency_s},
                {"link_bandwidth_Bps", link_.bandwidth_Bps}}
               .dump() +
           "\n";
  if (!config_.lb_replay_path.empty()) replay_ = read_replay_log(config_, comm);
}

void LoadBalancer::ran(std::int64_t work, std::int64_t blocks, int stages, double step_seconds) {
  ++batches_;
  const double dt = step_seconds - last_steps_;
  last_steps_ = step_seconds;
  work_ = work;
  blocks_ = blocks;
  if (work <= 0 || stages <= 0 || !(dt > 0)) return;  // a rank with nothing to do keeps its speed
  window_.add(double(work) * stages / dt, dt);
  seconds_per_stage_ = dt / stages;
}

std::vector<balance::RankSummary> LoadBalancer::summaries(std::int64_t work,
                                                          std::int64_t blocks) const {
  // The first collective after a batch: a rank that ended its timesteps first waits here for
  // the others, and that wait is the timesteps' (communication), not balancing.
  MINIAMR_TIMED(rt_.timers(), kCommunicate);
  static_assert(std::is_trivially_copyable_v<balance::RankSummary>);
  const balance::RankSummary mine{work,
                                  blocks,
                                  window_.speed(),
                                  window_.noise(),
                                  window_.speed_error(),
                                  seconds_per_stage_,
                                  rebuild_s_};
  std::vector<balance::RankSummary> all(rt_.comm().is_root() ? std::size_t(rt_.comm().size()) : 0);
  rt_.comm().gather_bytes(&mine, sizeof mine, all.data());
  return all;
}

LoadBalancer::Placement LoadBalancer::placement(std::span<const balance::RankSummary> ranks) const {
  std::vector<Placement> all;
  if (rt_.comm().is_root()) {
    const std::vector<double> speeds = balance::rank_speeds(ranks);
    std::int64_t offset = 0;
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      all.push_back({offset, speeds[r]});
      offset += ranks[r].work;
    }
  }
  Placement mine;
  rt_.comm().scatter_bytes(all.data(), sizeof mine, &mine);
  return mine;
}

std::optional<sfc::Shares> LoadBalancer::refinement_shares(int ts) {
  const int P = rt_.comm().size();
  cut_needs_check_ = batches_ == 0;
  if (P == 1 || strategy_ == balance::Strategy::kNone) return std::nullopt;
  cut_ranks_ = summaries(work_, blocks_);
  hysteresis_ = {};  // a new mesh: earlier moves say nothing about its boundaries
  if (!config_.lb_replay_path.empty()) {
    MINIAMR_TIMED(rt_.timers(), kLoadBalance);
    const auto it = replay_.shares.find(ts);
    cut_shares_ = sfc::Shares(
        it != replay_.shares.end() ? it->second : std::vector<double>(std::size_t(P), 1.0));
  } else {
    // Rank 0 settles the speeds; the shares go out as the few that differ from the rest (one
    // broadcast of a fixed size while they fit in it).
    std::vector<double> packed;
    if (rt_.comm().is_root()) {
      MINIAMR_TIMED(rt_.timers(), kLoadBalance);
      standing_speeds_ = speeds_;
      speeds_ = balance::settled_speeds(cut_ranks_, speeds_, rule_.noise, rule_.threshold);
      packed = sfc::Shares(balance::shares_of(speeds_)).packed();
    }
    {
      // The other ranks left the summaries' gather at once: here they wait for the ranks still
      // in their timesteps, the timesteps' wait (as rank 0's in the gather), not balancing.
      MINIAMR_TIMED(rt_.timers(), kCommunicate);
      rt_.comm().broadcast_values(packed, kSharesInline);
    }
    cut_shares_ = sfc::Shares::unpacked(packed);
  }
  cut_needs_check_ = cut_needs_check_ || !cut_shares_.equal();
  return cut_shares_;
}

bool LoadBalancer::recut_pays(int ts, double horizon_stages) {
  if (!cut_shares_.given()) return true;
  if (!config_.lb_replay_path.empty()) {
    if (replay_.kept.contains(ts)) recut_declined_ = "replay";
    return recut_declined_.empty();
  }
  MINIAMR_TIMED(rt_.timers(), kLoadBalance);
  std::int64_t pays = 1;
  if (rt_.comm().is_root()) {
    const balance::Price price{link_, block_bytes()};
    const balance::Proposal p = balance::propose(
        cut_ranks_, {balance::Strategy::kSfc, 1.0, speeds_, horizon_stages, price});
    // The step's speeds were settled against the noise already (a rank counts as apart from
    // the median only beyond two standard errors of its speed): what is left to judge is the
    // price. Judged against the noise once more, a slow rank's share that the first, small
    // meshes measured wrong was kept for tens of timesteps.
    const balance::Verdict v = balance::accept(p, {1.0, {0.0, 0.0}}, hysteresis_);
    // Rank 0 knows each rank's mean block weight only: a proposal that moves less than a block by
    // that estimate is left to the cut, which moves a block at a boundary or none. On a mesh of a
    // few dozen blocks a rank, a block is a few percent of a slow rank's share.
    if (v != balance::Verdict::kTake && v != balance::Verdict::kNoMove) {
      pays = 0;
      recut_declined_ = std::string(balance::reason(v));
      speeds_ = standing_speeds_;
    }
  }
  rt_.comm().broadcast_bytes(&pays, sizeof pays);
  if (pays == 0 && recut_declined_.empty()) recut_declined_ = "declined";  // the other ranks
  return pays != 0;
}

double LoadBalancer::block_bytes() const {
  return double(mesh::migrated_block_bytes(config_.block_shape()));
}

void LoadBalancer::migrated(double seconds, std::int64_t sent) {
  rebuild_s_ = std::max(0.0, seconds - link_.seconds(double(sent) * block_bytes()));
}

void LoadBalancer::refinement_moved(int ts, std::int64_t blocks) {
  if (!cut_shares_.given()) return;
  const std::string declined = std::exchange(recut_declined_, {});
  if (declined.empty()) {
    ++stats_.refinement_cuts;
  } else {
    ++stats_.decisions_skipped;
  }
  stats_.blocks_migrated += blocks;
  stats_.blocks_migrated_at_refinement += blocks;
  stats_.bytes_migrated += blocks * std::int64_t(block_bytes());
  record(ts, cut_ranks_, blocks > 0);
  if (rt_.comm().is_root() && !config_.lb_log_path.empty()) {
    std::vector<double> noise(cut_ranks_.size()), error(cut_ranks_.size()),
        measured(cut_ranks_.size());
    for (std::size_t r = 0; r < noise.size(); ++r) {
      noise[r] = cut_ranks_[r].noise;
      error[r] = cut_ranks_[r].speed_error;
      measured[r] = cut_ranks_[r].seconds_per_stage;
    }
    Json line{{"timestep", ts},
              {"kind", "refinement"},
              {"shares", cut_shares_.values()},
              {"speeds", balance::rank_speeds(cut_ranks_)},
              {"noise", noise},
              {"speed_error", error},
              {"measured_s_per_stage", measured},
              {"predicted_s_per_stage_before", rank_times(cut_ranks_)},
              {"blocks", blocks}};
    if (!declined.empty()) {
      line["recut"] = false;
      line["reason"] = declined;
    }
    log_ += line.dump() + "\n";
  }
  // P entries on every rank, P^2 in a simulation's one process: not kept to the next step.
  cut_shares_ = {};
  cut_ranks_ = {};
}

bool LoadBalancer::decides_after(int ts) const {
  // Not when the next timestep ends in a refinement step: its cut, from the same measurements
  // and of the adapted mesh, supersedes a move made now, which would have one timestep to pay
  // for itself (the predictive weights, a block about to split counted as eight, describe the
  // mesh after that step, not the timestep before it).
  return rt_.comm().size() > 1 && (ts % config_.lb_freq == 0 || ts == recheck_) &&
         !refines_after(config_, ts + 1);
}

std::vector<std::int64_t> LoadBalancer::curve_weights(const mesh::Domain& domain,
                                                      std::span<const std::size_t> order,
                                                      std::span<const std::int64_t> unit_weights,
                                                      const std::vector<Object>& objects,
                                                      double delta) const {
  // --lb_weight 2: each block's measured seconds per stage times this rank's speed per worker,
  // in model units; blocks never measured weigh their model weight.
  const bool measured = config_.lb_weight == LbWeight::kMeasured;
  const double per_task_speed = window_.speed() / double(rt_.threads());
  std::vector<std::int64_t> w(order.size());
  for (std::size_t p = 0; p < order.size(); ++p) {
    const double c = domain.cost[order[p]];
    w[p] = measured && c > 0 && per_task_speed > 0
               ? std::max<std::int64_t>(1, std::llround(c * per_task_speed))
               : unit_weights[order[p]];
  }
  // predictive: blocks the objects reach at the next refinement step will be eight blocks of
  // the same work each: give them that weight now, so they move while they are one block.
  const bool refining =
      config_.num_refine > 0 && config_.uniform_refine == 0 && config_.refine_freq > 0;
  if (strategy_ != balance::Strategy::kPredictive || !refining) return w;
  std::vector<Object> ahead = objects;
  move_objects(ahead, delta);
  for (std::size_t p = 0; p < order.size(); ++p) {
    const octree::Key& k = domain.leaves[order[p]];
    if (k.level < config_.num_refine &&
        object_mark(ahead, k, domain.grid, config_.num_refine, config_.block_cells(),
                    config_.refine_ghost) > 0)
      w[p] *= 8;
  }
  return w;
}

LoadBalancer::Outcome LoadBalancer::judged(std::span<const balance::RankSummary> ranks,
                                           std::span<const std::int64_t> weights,
                                           double horizon_stages) {
  const auto& comm = rt_.comm();
  // Rank 0 proposes and judges; the others learn the verdict and, only when it is taken, the
  // new boundaries along the curve (P + 1 numbers, a second broadcast: a simulation's 4096
  // ranks would otherwise each hold them at every decision) and where their blocks begin on it.
  Outcome o;
  std::int64_t taken = 0;
  std::vector<std::int64_t> bounds;
  if (comm.is_root()) {
    const std::vector<double> speeds =
        balance::settled_speeds(ranks, speeds_, rule_.noise, rule_.threshold);
    const balance::Price price{link_, block_bytes()};
    balance::Proposal p =
        balance::propose(ranks, {strategy_, config_.lb_max_move, speeds, horizon_stages, price});
    const balance::Verdict v = balance::accept(p, rule_, hysteresis_);
    o.reason = std::string(balance::reason(v));
    if (v == balance::Verdict::kTake) {
      taken = 1;
      bounds = p.to;
      speeds_ = speeds;
      hysteresis_.taken(p);
    }
    o.proposal = std::move(p);
  }
  comm.broadcast_bytes(&taken, sizeof taken);
  o.take = taken != 0;
  if (!o.take) {
    o.targets.assign(weights.size(), comm.rank());
    return o;
  }
  bounds.resize(std::size_t(comm.size()) + 1);
  comm.broadcast_bytes(bounds.data(), int(bounds.size() * sizeof(std::int64_t)));
  o.placement = placement(ranks);
  // Each block to the range holding the start of its weight, as mesh::Mesh cuts with shares
  // (a family split between ranks comes together only if it coarsens).
  o.targets = sfc::cut(weights, o.placement.offset, bounds);
  return o;
}

LoadBalancer::Outcome LoadBalancer::replayed(int ts, const mesh::Domain& domain,
                                             std::span<const std::size_t> order,
                                             std::span<const balance::RankSummary> ranks) const {
  Outcome o;
  o.reason = "replay";
  // Collective (every rank at every balancing step), checked on every rank before any acts.
  o.targets = replay_targets(replay_, ts, rt_.comm(), domain.leaves, order);
  o.take = replay_.moves.contains(ts);
  if (o.take) o.placement = placement(ranks);
  return o;
}

std::int64_t LoadBalancer::migrate(int ts, mesh::Domain& domain, const mesh::CurveView& view,
                                   std::span<const int> targets, double speed) {
  const auto& comm = rt_.comm();
  const int me = comm.rank();
  const auto started = runtime::Clock::now();
  std::vector<octree::Key> moved_keys(targets.size());
  for (std::size_t p = 0; p < targets.size(); ++p) moved_keys[p] = domain.leaves[view.order[p]];
  // Costs travel in model units and come back to seconds on their new rank.
  const double per_task_speed = speed / double(rt_.threads());
  for (double& c : domain.cost) c *= per_task_speed;
  const std::int64_t sent = rt_.mesh().migrate_blocks(domain, [&] {
    std::vector<int> by_block(targets.size());
    for (std::size_t p = 0; p < targets.size(); ++p) by_block[view.order[p]] = targets[p];
    return by_block;
  }());
  for (double& c : domain.cost) c /= per_task_speed;
  migrated(runtime::seconds_since(started), sent);
  // Each moved block's record goes to the rank whose curve range now holds it: there it must
  // name that rank and find the block arrived.
  directory_.clear();
  for (std::size_t p = 0; p < targets.size(); ++p)
    if (targets[p] != me) directory_.put(moved_keys[p], targets[p]);
  directory_.fence([&](const octree::Key& k) { return rt_.mesh().owner(k); });
  std::int64_t misplaced = 0;
  directory_.for_each([&](const octree::Key& k, int owner) {
    if (owner != me || !domain.leaves.find(k).has_value()) ++misplaced;
  });
  // One reduction for both: the blocks sent in all, and whether any rank found one misplaced.
  std::array<std::int64_t, 1> total{sent}, worst{misplaced};
  comm.sum_and_max_in_place(total, worst);
  if (worst[0] > 0)
    throw RunError(
        fmt::format("timestep {}: blocks arrived where the ownership directory "
                    "does not place them",
                    ts));
  stats_.blocks_migrated += total[0];
  stats_.bytes_migrated += std::int64_t(double(total[0]) * block_bytes());
  return total[0];
}

void LoadBalancer::decide(int ts, mesh::Domain& domain, std::span<const std::int64_t> unit_weights,
                          const std::vector<Object>& objects, double delta, double horizon_stages) {
  mesh::CurveView view;
  std::vector<std::int64_t> weights;
  {
    MINIAMR_TIMED(rt_.timers(), kLoadBalance);
    view = rt_.mesh().curve_view(domain);
    weights = curve_weights(domain, view.order, unit_weights, objects, delta);
  }
  const auto ranks = summaries(std::accumulate(weights.begin(), weights.end(), std::int64_t{0}),
                               std::int64_t(view.order.size()));
  MINIAMR_TIMED(rt_.timers(), kLoadBalance);
  const auto& comm = rt_.comm();
  const int me = comm.rank();
  Outcome o = config_.lb_replay_path.empty() ? judged(ranks, weights, horizon_stages)
                                             : replayed(ts, domain, view.order, ranks);
  // A cut that moves no block after all (its boundaries moved less than a block) is skipped.
  o.take = o.take && comm.any(std::ranges::any_of(o.targets, [&](int t) { return t != me; }));
  log_decision(ts, domain, view.order, o, ranks);
  record(ts, ranks, o.take);
  if (!o.take) {
    ++stats_.decisions_skipped;
    return;
  }
  migrate(ts, domain, view, o.targets, o.placement.speed);
  ++stats_.decisions_taken;
}

void LoadBalancer::record(int ts, std::span<const balance::RankSummary> ranks, bool moved) {
  if (!rt_.comm().is_root()) return;
  const std::vector<double> before = rank_times(ranks);
  stats_.history.push_back({ts, before, imbalance_of(before), moved});
}

void LoadBalancer::log_decision(int ts, const mesh::Domain& domain,
                                std::span<const std::size_t> order, const Outcome& o,
                                std::span<const balance::RankSummary> ranks) {
  if (config_.lb_log_path.empty()) return;
  const auto all_moves =
      rt_.comm().gather(o.take ? move_ranges(domain, order, o.targets, rt_.comm().rank())
                               : std::vector<std::int64_t>{});
  if (!rt_.comm().is_root()) return;
  Json moves = Json::array();
  for (const auto& r : all_moves)
    for (std::size_t i = 0; i + 10 < r.size(); i += 11)
      moves.push_back({{"from", r[i]},
                       {"to", r[i + 1]},
                       {"first", {r[i + 2], r[i + 3], r[i + 4], r[i + 5]}},
                       {"last", {r[i + 6], r[i + 7], r[i + 8], r[i + 9]}},
                       {"blocks", r[i + 10]}});
  double measured_max = 0;
  for (const auto& r : ranks) measured_max = std::max(measured_max, r.seconds_per_stage);
  const std::vector<double> before = rank_times(ranks);
  Json line{{"timestep", ts},
            {"kind", "decision"},
            {"taken", o.take},
            {"reason", o.reason},
            {"measured_max_s_per_stage", measured_max},
            {"measured_gain_s_per_stage", last_measured_max_ - measured_max},
            {"predicted_s_per_stage_before", before},
            {"imbalance_before", imbalance_of(before)},
            {"speeds", balance::rank_speeds(ranks)},
            {"moves", moves}};
  if (o.proposal) {
    const balance::Proposal& p = *o.proposal;
    std::vector<double> shares(p.to.size() - 1);
    for (std::size_t r = 0; r < shares.size(); ++r)
      shares[r] = p.to.back() > 0 ? double(p.to[r + 1] - p.to[r]) / double(p.to.back()) : 0.0;
    line["predicted_s_per_stage_after"] = p.after;
    line["imbalance_after"] = p.imbalance_after;
    line["relative_gain"] = p.relative_gain;
    line["noise"] = p.noise;
    line["estimated_gain_s"] = p.gain_s;
    line["migration_cost_s"] = p.migration_cost_s;
    line["shares"] = shares;
  }
  log_ += line.dump() + "\n";
  last_measured_max_ = measured_max;
}

void LoadBalancer::finish(std::int64_t work, std::int64_t blocks) {
  if (rt_.comm().size() > 1) {
    const auto ranks = summaries(work, blocks);
    if (rt_.comm().is_root()) {
      const std::vector<double> t = rank_times(ranks);
      stats_.final_imbalance = imbalance_of(t);
      const double total = double(balance::offset_of(ranks, int(ranks.size())));
      stats_.final_shares.assign(ranks.size(), 0.0);
      for (std::size_t r = 0; r < ranks.size(); ++r)
        stats_.final_shares[r] = total > 0 ? double(ranks[r].work) / total : 0.0;
    }
  }
  if (config_.lb_log_path.empty()) return;
  write_on_root(rt_.comm().get(), config_.lb_log_path, log_, "--lb_log file");
}

}  // namespace miniamr::app

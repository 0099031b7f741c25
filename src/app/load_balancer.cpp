#include "app/load_balancer.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/errors.hpp"
#include "app/input_file.hpp"
#include "app/lb_replay.hpp"
#include "app/link_model_file.hpp"
#include "app/objects.hpp"
#include "app/root_io.hpp"
#include "io/printable.hpp"
#include "runtime/balance_strategies.hpp"
#include "runtime/migrate.hpp"

namespace miniamr::app {

namespace {

using Json = nlohmann::json;

std::array<std::uint32_t, 4> key_words(const octree::Key& k) {
  return {std::uint32_t(k.level), k.x[0], k.x[1], k.x[2]};
}

// The balancer's price of moving data: a miniamr-netbench model (--lb_link_model), else a
// start-up measurement. Of a model's classes, the one migrations take: other_node as soon as the
// ranks span nodes. Collective; every rank gets the same model or the same error.
runtime::LinkModel link_model(const Config& config, const runtime::Communicator& comm) {
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

}  // namespace

LoadBalancer::LoadBalancer(const Config& config, runtime::Runtime& runtime)
    : config_(config),
      rt_(runtime),
      link_(link_model(config, runtime.comm())),
      directory_(runtime.comm()) {
  const auto& comm = rt_.comm();
  if (comm.is_root() && !config_.lb_log_path.empty())
    log_ = Json{{"miniamr_lb_log", 1},
                {"ranks", comm.size()},
                {"strategy", config_.lb},
                {"lb_threshold", config_.lb_threshold},
                {"lb_freq", config_.lb_freq},
                {"link_model", config_.lb_link_model_path.empty() ? std::string("measured")
                                                                  : config_.lb_link_model_path},
                {"link_latency_s", link_.latency_s},
                {"link_bandwidth_Bps", link_.bandwidth_Bps}}
               .dump() +
           "\n";
  if (!config_.lb_replay_path.empty()) replay_ = read_replay_log(config_, comm);
}

std::vector<int> LoadBalancer::replayed_targets(int ts, const runtime::Domain& domain,
                                                std::span<const std::size_t> order) const {
  return replay_targets(replay_, ts, rt_.comm(), domain.leaves, order);
}

std::vector<std::int64_t> LoadBalancer::forecast(const runtime::Domain& domain,
                                                 std::span<const std::size_t> order,
                                                 std::span<const std::int64_t> weights,
                                                 const std::vector<Object>& objects,
                                                 double delta) const {
  std::vector<std::int64_t> w(weights.begin(), weights.end());
  // Blocks the objects reach at the next refinement step will be eight blocks of the same
  // work each: give them that weight now, so they move while they are one block, not eight.
  const bool refining =
      config_.num_refine > 0 && config_.uniform_refine == 0 && config_.refine_freq > 0;
  if (!refining) return w;
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

void LoadBalancer::step(int ts, runtime::Domain& domain, std::int64_t updates,
                        double compute_seconds, const std::vector<Object>& objects, double delta) {
  const auto& comm = rt_.comm();
  const int P = comm.size(), me = comm.rank();
  if (P == 1 || ts % config_.lb_freq != 0) return;
  MINIAMR_TIMED(rt_.timers(), kLoadBalance);

  // This rank's speed over the interval since the last decision: model work (cell-variable
  // updates) per second of stage work. Ranks that did nothing get the mean of the others.
  const double du = double(updates - last_updates_), dt = compute_seconds - last_compute_;
  last_updates_ = updates;
  last_compute_ = compute_seconds;
  std::vector<double> measured_all(static_cast<std::size_t>(P));
  const double measured = du > 0 && dt > 0 ? du / dt : 0.0;
  MPI_Allgather(&measured, 1, MPI_DOUBLE, measured_all.data(), 1, MPI_DOUBLE, comm.get());
  // A rank that did no work this interval keeps the speed it last showed (a slow rank that gave
  // all its blocks away stays slow); one never measured gets the mean of the others. Every rank
  // computes the same vector from the same numbers.
  speeds_.resize(static_cast<std::size_t>(P), 0.0);
  double known = 0;
  int n_known = 0;
  for (std::size_t r = 0; r < speeds_.size(); ++r) {
    if (measured_all[r] > 0) speeds_[r] = measured_all[r];
    if (speeds_[r] > 0) known += speeds_[r], ++n_known;
  }
  std::vector<double> speeds = speeds_;
  for (double& s : speeds)
    if (!(s > 0)) s = n_known > 0 ? known / n_known : 1.0;
  const double speed = speeds[std::size_t(me)];

  // Each block's work per stage in model units: its measured seconds per stage (a task's time)
  // times this rank's speed per thread; blocks never measured get the model's work.
  const runtime::Runtime::CurveView view = rt_.curve_view(domain);
  const double per_task_speed = speed / double(rt_.threads());
  const auto model = std::int64_t(domain.shape.interior_cells()) * domain.shape.num_vars;
  std::vector<std::int64_t> weights(view.order.size());
  for (std::size_t p = 0; p < view.order.size(); ++p) {
    const double c = domain.cost[view.order[p]];
    weights[p] = c > 0 ? std::max<std::int64_t>(1, std::llround(c * per_task_speed)) : model;
  }
  const double W = double(std::accumulate(weights.begin(), weights.end(), std::int64_t{0}));
  std::vector<double> before(static_cast<std::size_t>(P));
  const double mine = W / speed;
  MPI_Allgather(&mine, 1, MPI_DOUBLE, before.data(), 1, MPI_DOUBLE, comm.get());
  const auto imbalance_of = [P](const std::vector<double>& t) {
    const double mean = std::accumulate(t.begin(), t.end(), 0.0) / P;
    return mean > 0 ? *std::max_element(t.begin(), t.end()) / mean : 1.0;
  };
  const double imbalance = imbalance_of(before);
  stats_.final_imbalance = imbalance;
  const double measured_max = comm.max(dt / std::max(1, config_.stages_per_ts * config_.lb_freq));

  // Propose.
  const bool replaying = !config_.lb_replay_path.empty();
  std::vector<int> targets(view.order.size(), me);
  std::string reason;
  if (replaying) {
    targets = replayed_targets(ts, domain, view.order);
    reason = "replay";
  } else if (imbalance <= config_.lb_threshold) {
    reason = "balanced";
  } else {
    const bool predictive = config_.lb == "predictive";
    const auto strategy = runtime::find_strategy(predictive ? "sfc" : config_.lb);
    const auto w = predictive ? forecast(domain, view.order, weights, objects, delta) : weights;
    runtime::BalanceInput in{w, view.family_start, speed, config_.lb_max_move};
    targets = strategy(comm, in);
  }

  // What the plan would give, and what it costs: the busiest rank's bytes over the link.
  std::vector<double> after(std::size_t(P), 0.0);
  std::vector<std::int64_t> arriving(std::size_t(P), 0);
  std::int64_t leaving = 0;
  std::vector<char> partner(std::size_t(P), 0);
  for (std::size_t p = 0; p < targets.size(); ++p) {
    after[std::size_t(targets[p])] += double(weights[p]);
    if (targets[p] != me) {
      ++leaving;
      ++arriving[std::size_t(targets[p])];
      partner[std::size_t(targets[p])] = 1;
    }
  }
  MPI_Allreduce(MPI_IN_PLACE, after.data(), P, MPI_DOUBLE, MPI_SUM, comm.get());
  comm.sum_in_place(arriving);
  for (int r = 0; r < P; ++r) after[std::size_t(r)] /= speeds[std::size_t(r)];
  const auto block_bytes = double(runtime::migrated_block_bytes(domain.shape));
  const double busiest = double(comm.max(std::max(leaving, arriving[std::size_t(me)])));
  const int messages = int(comm.max(std::int64_t(std::count(partner.begin(), partner.end(), 1))));
  const double cost_s = busiest > 0 ? link_.seconds(busiest * block_bytes, messages) : 0.0;
  const double gain_s = (*std::max_element(before.begin(), before.end()) -
                         *std::max_element(after.begin(), after.end())) *
                        config_.stages_per_ts * config_.lb_freq;
  const std::int64_t moving = comm.sum(leaving);
  bool take = moving > 0 && (replaying || gain_s > cost_s);
  if (!replaying && reason.empty())
    reason = moving == 0 ? "no move proposed" : take ? "pays" : "does not pay";

  // The moves as contiguous ranges of the curve, gathered for the log.
  std::vector<std::int64_t> mine_moves;
  for (std::size_t p = 0; p < targets.size();) {
    std::size_t q = p;
    while (q + 1 < targets.size() && targets[q + 1] == targets[p]) ++q;
    if (targets[p] != me) {
      const auto a = key_words(domain.leaves[view.order[p]]);
      const auto b = key_words(domain.leaves[view.order[q]]);
      mine_moves.insert(mine_moves.end(), {me, targets[p], a[0], a[1], a[2], a[3], b[0], b[1], b[2],
                                           b[3], std::int64_t(q - p + 1)});
    }
    p = q + 1;
  }
  const auto all_moves = comm.gather(mine_moves);

  if (take) {
    std::vector<octree::Key> moved_keys(targets.size());
    for (std::size_t p = 0; p < targets.size(); ++p) moved_keys[p] = domain.leaves[view.order[p]];
    // Costs travel in model units and come back to seconds on their new rank.
    for (double& c : domain.cost) c *= per_task_speed;
    const std::int64_t sent = rt_.migrate_blocks(domain, [&] {
      std::vector<int> by_block(targets.size());
      for (std::size_t p = 0; p < targets.size(); ++p) by_block[view.order[p]] = targets[p];
      return by_block;
    }());
    for (double& c : domain.cost) c /= per_task_speed;
    directory_.clear();
    for (std::size_t p = 0; p < targets.size(); ++p)
      if (targets[p] != me) directory_.put(moved_keys[p], targets[p]);
    directory_.fence();
    // Every block that arrived here must be recorded as ours.
    const bool consistent = std::ranges::all_of(domain.leaves.keys(), [&](const octree::Key& k) {
      const auto owner = directory_.get(k);
      return !owner || *owner == me;
    });
    if (!comm.all(consistent))
      throw RunError(
          fmt::format("timestep {}: blocks arrived where the ownership directory "
                      "does not place them",
                      ts));
    const std::int64_t total = comm.sum(sent);
    stats_.blocks_migrated += total;
    stats_.bytes_migrated += std::int64_t(double(total) * block_bytes);
    ++stats_.decisions_taken;
    stats_.final_imbalance = imbalance_of(after);
  } else {
    ++stats_.decisions_skipped;
  }
  if (!comm.is_root()) return;
  stats_.history.push_back({ts, before, imbalance, take});
  if (config_.lb_log_path.empty()) return;
  Json moves = Json::array();
  for (const auto& r : all_moves)
    for (std::size_t i = 0; i + 10 < r.size(); i += 11)
      moves.push_back({{"from", r[i]},
                       {"to", r[i + 1]},
                       {"first", {r[i + 2], r[i + 3], r[i + 4], r[i + 5]}},
                       {"last", {r[i + 6], r[i + 7], r[i + 8], r[i + 9]}},
                       {"blocks", r[i + 10]}});
  const Json line{{"timestep", ts},
                  {"taken", take},
                  {"reason", reason},
                  {"measured_max_s_per_stage", measured_max},
                  {"measured_gain_s_per_stage", last_measured_max_ - measured_max},
                  {"predicted_s_per_stage_before", before},
                  {"predicted_s_per_stage_after", after},
                  {"imbalance_before", imbalance},
                  {"imbalance_after", imbalance_of(after)},
                  {"estimated_gain_s", gain_s},
                  {"migration_cost_s", cost_s},
                  {"moves", take ? moves : Json::array()}};
  log_ += line.dump() + "\n";
  last_measured_max_ = measured_max;
}

void LoadBalancer::finish() {
  if (config_.lb_log_path.empty()) return;
  write_on_root(rt_.comm().get(), config_.lb_log_path, log_, "--lb_log file");
}

}  // namespace miniamr::app

#include "runtime/dynamic_runtime.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <optional>
#include <queue>
#include <thread>
#include <utility>
#include <vector>

#include "runtime/clock.hpp"
#include "stencil/hash.hpp"

namespace miniamr::runtime {

namespace {

// How often a worker that keeps finding work drives the messages anyway.
constexpr double kPollSeconds = 50e-6;
// How long a worker goes without work before it takes a unit another worker would run next.
constexpr double kStarvedSeconds = 200e-6;

// The unit steps of a chunk as tasks with readiness counters, node (lane, unit, step) =
// (lane * U + unit) * K + step, and the ready ones in per-worker queues by priority. A ready
// node is run by whoever claims it first (its counter from 0 to -1): the queue it was pushed to
// when it popped, or a worker that takes it with the step of an earlier lane of its stage.
class ReadyGraph {
 public:
  // A unit step to run: `lanes` lanes from `id`'s on (variable groups of one stage).
  struct Pick {
    std::size_t id = 0, lanes = 1;
  };

  ReadyGraph(const ChunkRun& run, int workers, std::uint64_t seed)
      : s_(run.schedule()),
        U_(s_.units()),
        K_(std::size_t(s_.steps)),
        VG_(run.lanes().groups.size()),
        L_(run.lanes().count()),
        count_(std::make_unique<std::atomic<int>[]>(L_ * U_ * K_)),
        fusable_(U_ * K_),
        queues_(std::size_t(workers)),
        finished_(std::size_t(workers)),
        seed_(seed) {
    for (std::size_t u = 0; u < U_; ++u)
      for (std::size_t k = 0; k < K_; ++k)
        fusable_[u * K_ + k] = seed == 0 && run.message_free(u, int(k));
    // Units whose step k > 0 reads a face that unit u packs in step k - 1.
    std::vector<std::vector<std::uint32_t>> fed(U_ * K_);
    for (std::size_t w = 0; w < U_; ++w)
      for (std::size_t k = 1; k < K_; ++k)
        for (const std::uint32_t u : s_.feeds[w * K_ + k])
          fed[u * K_ + k].push_back(std::uint32_t(w));
    fed_ = Adjacency<std::uint32_t>(fed);
    for (std::size_t lane = 0; lane < L_; ++lane)
      for (std::size_t u = 0; u < U_; ++u)
        for (std::size_t k = 0; k < K_; ++k) {
          const std::size_t n = u * K_ + k;
          int in = int(s_.consumes[n].size());
          if (k > 0)
            in += 1 + int(s_.feeds[n].size());
          else if (lane >= VG_)
            in += 1 + int(s_.links[u].size());
          count_[id(lane, u, k)].store(in, std::memory_order_relaxed);
        }
    for (std::size_t lane = 0; lane < std::min(L_, VG_); ++lane)
      for (std::size_t u = 0; u < U_; ++u)
        if (s_.consumes[u * K_].empty()) push(id(lane, u, 0));
  }

  // Whether every step has run (asked when a worker finds nothing to run).
  bool done() const {
    std::size_t n = 0;
    for (const Finished& f : finished_) n += f.steps.load(std::memory_order_acquire);
    return n == L_ * U_ * K_;
  }
  std::size_t id(std::size_t lane, std::size_t unit, std::size_t step) const {
    return (lane * U_ + unit) * K_ + step;
  }
  std::size_t lane_of(std::size_t id) const { return id / (U_ * K_); }
  std::size_t unit_of(std::size_t id) const { return id / K_ % U_; }
  int step_of(std::size_t id) const { return int(id % K_); }

  // The most urgent ready step of `worker`'s units, else one of another worker's: a unit's data
  // stay in the cache of the worker that ran it, so a worker takes another's unit only when that
  // one is not running (an arena may start a worker only after another has returned) or when
  // `starved` (nothing found for a while). Taking one whenever its worker had two waiting moved
  // a unit's blocks between the caches several times a stage.
  // A step that reads and packs no message takes with it the same step of the later lanes of
  // its stage that are ready: one pass over the unit's blocks for all their variables, where
  // each lane's step would set up every block's faces again. A seeded order (testing) runs each
  // lane's step on its own, in the seed's order.
  std::optional<Pick> pop(int worker, bool starved) {
    for (std::size_t i = 0; i < queues_.size(); ++i) {
      Queue& q = queues_[(std::size_t(worker) + i) % queues_.size()];
      const std::lock_guard lock(q.mutex);
      const bool any = i == 0 || starved || !q.running;
      if (!any) continue;
      while (!q.heap.empty()) {
        const std::size_t n = q.heap.top().second;
        q.heap.pop();
        if (!claim(n)) continue;  // taken with an earlier lane
        Pick p{n, 1};
        const std::size_t lane = lane_of(n), u = unit_of(n), k = std::size_t(step_of(n));
        // Not past a more urgent step waiting in the queue (the messages of the units that
        // send them first).
        const auto urgent = [&](std::size_t next) {
          while (!q.heap.empty() && claimed(q.heap.top().second)) q.heap.pop();
          return !q.heap.empty() && q.heap.top().first < priority(next);
        };
        if (fusable_[u * K_ + k])
          while ((lane + p.lanes) % VG_ != 0 && lane + p.lanes < L_ &&
                 !urgent(id(lane + p.lanes, u, k)) && claim(id(lane + p.lanes, u, k)))
            ++p.lanes;
        return p;
      }
    }
    return std::nullopt;
  }
  // Whether `worker` runs its loop (its queue is then its own).
  void running(int worker, bool on) {
    Queue& q = queues_[std::size_t(worker)];
    const std::lock_guard lock(q.mutex);
    q.running = on;
  }
  // The steps of `p` have run on `worker`: their successors lose an input.
  void finished(const Pick& p, int worker) {
    const std::size_t u = unit_of(p.id), k = std::size_t(step_of(p.id));
    for (std::size_t lane = lane_of(p.id); lane < lane_of(p.id) + p.lanes; ++lane) {
      if (k + 1 < K_) {
        ready_one(id(lane, u, k + 1));
        for (const std::uint32_t w : fed_[u * K_ + k + 1]) ready_one(id(lane, w, k + 1));
      } else if (lane + VG_ < L_) {
        ready_one(id(lane + VG_, u, 0));
        for (const std::uint32_t w : s_.links[u]) ready_one(id(lane + VG_, w, 0));
      }
    }
    Finished& f = finished_[std::size_t(worker)];
    f.steps.store(f.steps.load(std::memory_order_relaxed) + p.lanes, std::memory_order_release);
  }
  // Receive m of `lane` has arrived.
  void arrived(std::size_t lane, std::size_t m) {
    for (const std::uint32_t n : s_.readers[m]) ready_one(lane * U_ * K_ + n);
  }

 private:
  // Each alone in its cache line, as each worker's own queue and count are used at every step.
  struct alignas(64) Queue {
    std::mutex mutex;
    bool running = false;
    // Min-heap of (priority, node).
    std::priority_queue<std::pair<std::uint64_t, std::size_t>,
                        std::vector<std::pair<std::uint64_t, std::size_t>>, std::greater<>>
        heap;
  };
  void ready_one(std::size_t id) {
    if (count_[id].fetch_sub(1, std::memory_order_acq_rel) == 1) push(id);
  }
  // Stage and variable group first, then the step, then the unit in schedule order; a seed
  // draws a random order instead (testing). Smaller is more urgent.
  std::uint64_t priority(std::size_t id) const {
    return seed_ != 0
               ? stencil::hash_combine(seed_, id)
               : (std::uint64_t(lane_of(id)) * K_ + std::uint64_t(step_of(id))) * U_ + unit_of(id);
  }
  // Whether node `id` was claimed (a queue's entry of it is stale).
  bool claimed(std::size_t id) const { return count_[id].load(std::memory_order_relaxed) < 0; }
  // Whether this caller runs ready node `id` (no one else will).
  bool claim(std::size_t id) {
    int ready = 0;
    return count_[id].compare_exchange_strong(ready, -1, std::memory_order_acq_rel);
  }
  void push(std::size_t id) {
    const std::size_t u = unit_of(id);
    const std::uint64_t key = priority(id);
    // The unit's worker: an equal share of each part of the order per worker.
    const std::size_t part = s_.second_part, first = u < part ? 0 : part;
    const std::size_t n = u < part ? part : U_ - part;
    Queue& q = queues_[(u - first) * queues_.size() / std::max<std::size_t>(1, n)];
    const std::lock_guard lock(q.mutex);
    q.heap.emplace(key, id);
  }

  const Schedule& s_;
  const std::size_t U_, K_, VG_, L_;
  Adjacency<std::uint32_t> fed_;
  std::unique_ptr<std::atomic<int>[]> count_;  // inputs missing; -1: claimed
  std::vector<char> fusable_;                  // per unit step: no message packed or read
  std::vector<Queue> queues_;
  struct alignas(64) Finished {
    std::atomic<std::size_t> steps{0};  // written by its worker only
  };
  std::vector<Finished> finished_;
  std::uint64_t seed_;
};

}  // namespace

DynamicRuntime::DynamicRuntime(MPI_Comm parent, RuntimeOptions options) : Mapper(parent, options) {
  // The workers start with the runtime, not in the first batch of timesteps: oneTBB's set-up
  // took about 2 ms here, a tenth of expanding_sphere-ci's time loop.
  pool();
}

DynamicRuntime::~DynamicRuntime() = default;

TaskPool& DynamicRuntime::pool() {
  if (!pool_ || pool_->threads() != threads()) pool_ = std::make_unique<TaskPool>(threads());
  return *pool_;
}

void DynamicRuntime::for_each(std::size_t n, const std::function<void(std::size_t)>& body) {
  pool().parallel_for(n, body);
}

SchedulePolicy DynamicRuntime::policy(const StageGraph&, const StageWork&, int) const {
  const auto T = std::size_t(threads());
  // One unit per worker in each part: every cut between units is a face packed and unpacked,
  // read from another core's cache when the units run on two; two units per worker were 5%
  // slower on one rank with two workers. Units of equal measured cost: a worker with a heavier
  // unit keeps the others waiting for its faces at every stage.
  return {SchedulePolicy::Order::kProducersFirst, T, T > 1};
}

void DynamicRuntime::run_chunk(ChunkRun& run) {
  const int T = threads();
  ReadyGraph g(run, T, options_.order_seed);
  std::mutex& token = run.halo().token();
  const auto arrived = [&](std::size_t lane, std::size_t m) { g.arrived(lane, m); };
  pool().run_workers([&](const int w) {
    g.running(w, true);
    auto polled = Clock::now(), found = polled;
    for (;;) {
      const auto now = Clock::now();
      const bool starved = std::chrono::duration<double>(now - found).count() > kStarvedSeconds;
      if (const auto pick = g.pop(w, starved)) {
        run.run_step(g.lane_of(pick->id), g.unit_of(pick->id), g.step_of(pick->id), w, pick->lanes);
        g.finished(*pick, w);
        found = Clock::now();
        if (!run.halo().posts_waiting() &&
            std::chrono::duration<double>(found - polled).count() < kPollSeconds)
          continue;
        std::unique_lock lock(token, std::try_to_lock);
        if (!lock) continue;
        polled = found;
        if (drive(run, false, w, arrived)) run.count_busy(w, seconds_since(found));
        continue;
      }
      if (g.done()) break;
      // Nothing to run: drive the messages, or map storage for the next refinement.
      {
        std::unique_lock lock(token, std::try_to_lock);
        if (lock) {
          polled = Clock::now();
          if (drive(run, true, w, arrived)) continue;
        }
      }
      // Waiting for another rank's messages: map storage for the next refinement.
      if (w != 0 || !run.halo().receiving() || !map_ahead(run.domain())) std::this_thread::yield();
    }
    g.running(w, false);
  });
}

}  // namespace miniamr::runtime

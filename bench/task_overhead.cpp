// Per-task overhead of the two candidate task libraries for a dynamic task scheduler: oneTBB
// (tbb::task_group inside a tbb::task_arena) and OpenMP tasks (libgomp), on one task DAG.
//
// The DAG: `blocks` blocks of 8^3 cells x `vars` variables on a 1-D ring, kStages = 4 stages.
// Task (b, s) sweeps block b with stencil7 once per variable and depends on (b-1, s-1),
// (b, s-1) and (b+1, s-1) (a stand-in for a ghost exchange with both neighbours). Every task
// has an atomic count of unfinished predecessors (one cache line each); a task that finishes
// decrements its successors' counts and spawns those that reach zero (tg.run / omp task). The
// stage-0 tasks are spawned by the calling thread. Each iteration resets the counts and runs
// the whole DAG (arena.execute + task_group::wait, or omp parallel + single + taskgroup), so
// the per-iteration start-up of the library is part of the time.
//
// Benchmarks (all timed in wall-clock time; each thread owns one stencil scratch buffer):
//   BM_Serial/blocks/vars/threads:1   the same blocks * 4 * vars sweeps as a plain loop
//   BM_ForkJoinOmp/blocks/vars/threads  omp parallel, one `omp for` (and barrier) per stage
//   BM_DagTbb, BM_DagOmp /blocks/vars/threads   the DAG, stencil bodies
//   BM_EmptyTbb, BM_EmptyOmp /blocks/threads     the DAG, empty bodies: pure scheduling cost
// Counters: items = tasks (blocks * 4); updates_per_s = cell-variable updates per second
// (blocks * 4 * vars * 512 per iteration); us_per_task = wall time / tasks, in microseconds.
// Before timing, every DAG variant is checked once: all tasks run, and the stencil variants
// leave the blocks bitwise equal to the serial loop.
//
//   cmake --build build -j2 --target task_overhead
//   build/bench/task_overhead --benchmark_min_time=0.2
//   build/bench/task_overhead --benchmark_filter=Empty --benchmark_min_time=0.2
// Runs with as many threads as cores vary a lot on a shared machine: add
// --benchmark_repetitions=5 --benchmark_report_aggregates_only=true and read the medians, and
// time the two libraries in separate processes (--benchmark_filter=Tbb / =Omp) so one library's
// spinning threads do not steal the other's cores.
#include <benchmark/benchmark.h>
#include <omp.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <span>
#include <vector>

#include "stencil/block.hpp"
#include "stencil/plane_sweep.hpp"
#include "stencil/stencil_kernels.hpp"

namespace {

using miniamr::stencil::Block;
using miniamr::stencil::BlockShape;

constexpr int kStages = 4;
constexpr int kCells = 8;  // interior cells per direction

// ---- the DAG ----------------------------------------------------------------------------------

// Task t is (block t % blocks, stage t / blocks). Needs blocks >= 3 so the three predecessors
// of a task are distinct.
class Dag {
 public:
  Dag(int blocks, int stages)
      : blocks_(blocks), stages_(stages), pending_(std::size_t(blocks) * std::size_t(stages)) {}

  int blocks() const { return blocks_; }
  int tasks() const { return blocks_ * stages_; }
  int block(int t) const { return t % blocks_; }

  void reset() {
    for (int t = 0; t < tasks(); ++t)
      pending_[std::size_t(t)].n.store(t < blocks_ ? 0 : 3, std::memory_order_relaxed);
  }

  // Task t has finished: calls ready(u) for each successor u whose count reaches zero.
  template <class Ready>
  void release(int t, Ready&& ready) {
    const int s = t / blocks_ + 1;
    if (s == stages_) return;
    const int b = block(t);
    for (int d = -1; d <= 1; ++d) {
      const int u = s * blocks_ + (b + d + blocks_) % blocks_;
      if (pending_[std::size_t(u)].n.fetch_sub(1, std::memory_order_acq_rel) == 1) ready(u);
    }
  }

 private:
  struct alignas(64) Count {
    std::atomic<int> n{0};
  };
  int blocks_, stages_;
  std::vector<Count> pending_;
};

// Body: void(int block, int thread), thread in [0, threads).
template <class Body>
struct TbbRun {
  Dag& dag;
  const Body& body;
  tbb::task_group& tg;

  void spawn(int t) const {
    tg.run([this, t] { execute(t); });
  }
  void execute(int t) const {
    body(dag.block(t), tbb::this_task_arena::current_thread_index());
    dag.release(t, [this](int u) { spawn(u); });
  }
};

template <class Body>
void run_tbb(tbb::task_arena& arena, Dag& dag, const Body& body) {
  dag.reset();
  arena.execute([&] {
    tbb::task_group tg;
    const TbbRun<Body> run{dag, body, tg};
    for (int b = 0; b < dag.blocks(); ++b) run.spawn(b);
    tg.wait();
  });
}

template <class Body>
struct OmpRun {
  Dag* dag;
  const Body* body;

  void spawn(int t) const {
    const OmpRun self = *this;
#pragma omp task default(none) firstprivate(self, t)
    self.execute(t);
  }
  void execute(int t) const {
    (*body)(dag->block(t), omp_get_thread_num());
    dag->release(t, [this](int u) { spawn(u); });
  }
};

template <class Body>
void run_omp(int threads, Dag& dag, const Body& body) {
  dag.reset();
  const OmpRun<Body> run{&dag, &body};
#pragma omp parallel num_threads(threads) default(none) shared(run, dag)
#pragma omp single
  {
#pragma omp taskgroup
    {
      for (int b = 0; b < dag.blocks(); ++b) run.spawn(b);
    }
  }
}

// ---- the work ---------------------------------------------------------------------------------

// Every cell (ghosts included) in [1, 2): averaging keeps them there, so no denormals however
// long a benchmark iterates.
std::vector<Block> make_blocks(int blocks, int vars) {
  const BlockShape shape{kCells, kCells, kCells, vars};
  std::vector<Block> out;
  out.reserve(std::size_t(blocks));
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> u(1.0, 2.0);
  for (int b = 0; b < blocks; ++b) {
    Block& blk = out.emplace_back(shape);
    for (std::size_t i = 0; i < shape.doubles(); ++i) blk.data()[i] = u(rng);
  }
  return out;
}

struct Scratch {
  explicit Scratch(int threads, int vars)
      : buf(std::size_t(threads), std::vector<double>(miniamr::stencil::stencil_scratch_size(
                                      BlockShape{kCells, kCells, kCells, vars}))) {}
  std::span<double> operator[](int thread) { return buf[std::size_t(thread)]; }
  std::vector<std::vector<double>> buf;
};

// One task's work: one stencil7 sweep of every variable of block b.
struct SweepBody {
  std::vector<Block>* blocks;
  Scratch* scratch;
  int vars;
  void operator()(int b, int thread) const {
    Block& blk = (*blocks)[std::size_t(b)];
    for (int v = 0; v < vars; ++v) {
      double sum = miniamr::stencil::stencil7(blk, v, (*scratch)[thread]);
      benchmark::DoNotOptimize(sum);
    }
  }
};

void run_serial(std::vector<Block>& blocks, int vars, Scratch& scratch) {
  const SweepBody body{&blocks, &scratch, vars};
  for (int s = 0; s < kStages; ++s)
    for (int b = 0; b < int(blocks.size()); ++b) body(b, 0);
}

bool same(const std::vector<Block>& a, const std::vector<Block>& b) {
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(a[i].data(), b[i].data(), a[i].shape().doubles() * sizeof(double)) != 0)
      return false;
  return true;
}

// Times `iteration` over the benchmark loop and sets the counters. us_per_task is measured here
// with steady_clock around the loop (the same span as the library's real time) so the console
// prints it as a plain number in microseconds.
template <class Iteration>
void timed_loop(benchmark::State& state, int tasks, int vars, Iteration&& iteration) {
  const auto start = std::chrono::steady_clock::now();
  for (auto _ : state) iteration();
  const std::chrono::duration<double, std::micro> us = std::chrono::steady_clock::now() - start;
  state.SetItemsProcessed(state.iterations() * tasks);
  if (vars > 0)
    state.counters["updates_per_s"] =
        benchmark::Counter(double(tasks) * vars * kCells * kCells * kCells,
                           benchmark::Counter::kIsIterationInvariantRate);
  state.counters["us_per_task"] = us.count() / (double(state.iterations()) * tasks);
}

// ---- benchmarks -------------------------------------------------------------------------------

void BM_Serial(benchmark::State& state) {
  const int blocks = int(state.range(0)), vars = int(state.range(1));
  std::vector<Block> blk = make_blocks(blocks, vars);
  Scratch scratch(1, vars);
  timed_loop(state, blocks * kStages, vars, [&] { run_serial(blk, vars, scratch); });
}

void BM_ForkJoinOmp(benchmark::State& state) {
  const int blocks = int(state.range(0)), vars = int(state.range(1));
  const int threads = int(state.range(2));
  std::vector<Block> blk = make_blocks(blocks, vars);
  Scratch scratch(threads, vars);
  const SweepBody body{&blk, &scratch, vars};
  timed_loop(state, blocks * kStages, vars, [&] {
#pragma omp parallel num_threads(threads) default(none) shared(body, blocks)
    for (int s = 0; s < kStages; ++s) {
#pragma omp for schedule(static)
      for (int b = 0; b < blocks; ++b) body(b, omp_get_thread_num());
    }
  });
}

// Runs the DAG once on a copy checked against the serial loop, then times it.
template <class Runner>
void dag_stencil(benchmark::State& state, Runner&& runner) {
  const int blocks = int(state.range(0)), vars = int(state.range(1));
  const int threads = int(state.range(2));
  std::vector<Block> blk = make_blocks(blocks, vars);
  Scratch scratch(threads, vars);
  Dag dag(blocks, kStages);
  const SweepBody body{&blk, &scratch, vars};
  {
    std::vector<Block> ref = blk;
    run_serial(ref, vars, scratch);
    runner(threads, dag, body);
    if (!same(ref, blk)) {
      state.SkipWithError("DAG result differs from the serial loop");
      return;
    }
  }
  timed_loop(state, dag.tasks(), vars, [&] { runner(threads, dag, body); });
}

template <class Runner>
void dag_empty(benchmark::State& state, Runner&& runner) {
  const int blocks = int(state.range(0)), threads = int(state.range(1));
  Dag dag(blocks, kStages);
  {
    std::atomic<int> ran{0};
    const auto count = [&ran](int, int) { ran.fetch_add(1, std::memory_order_relaxed); };
    runner(threads, dag, count);
    if (ran.load() != dag.tasks()) {
      state.SkipWithError("not every task ran");
      return;
    }
  }
  const auto empty = [](int, int) {};
  timed_loop(state, dag.tasks(), 0, [&] { runner(threads, dag, empty); });
}

// One arena per benchmark run, initialised before timing; `threads` slots, one for the caller.
struct TbbRunner {
  explicit TbbRunner(int threads) : arena(threads) { arena.initialize(); }
  template <class Body>
  void operator()(int, Dag& dag, const Body& body) {
    run_tbb(arena, dag, body);
  }
  tbb::task_arena arena;
};

struct OmpRunner {
  template <class Body>
  void operator()(int threads, Dag& dag, const Body& body) const {
    run_omp(threads, dag, body);
  }
};

void BM_DagTbb(benchmark::State& state) {
  dag_stencil(state, TbbRunner(int(state.range(2))));
}
void BM_DagOmp(benchmark::State& state) {
  dag_stencil(state, OmpRunner{});
}
void BM_EmptyTbb(benchmark::State& state) {
  dag_empty(state, TbbRunner(int(state.range(1))));
}
void BM_EmptyOmp(benchmark::State& state) {
  dag_empty(state, OmpRunner{});
}

void stencil_args(benchmark::internal::Benchmark* b, bool parallel) {
  b->ArgNames({"blocks", "vars", "threads"});
  for (const int blocks : {64, 512})
    for (const int vars : {1, 40})
      for (const int threads : {1, 2})
        if (parallel || threads == 1) b->Args({blocks, vars, threads});
  b->UseRealTime();
}

void empty_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"blocks", "threads"});
  for (const int blocks : {64, 512})
    for (const int threads : {1, 2}) b->Args({blocks, threads});
  b->UseRealTime();
}

BENCHMARK(BM_Serial)->Apply([](benchmark::internal::Benchmark* b) { stencil_args(b, false); });
BENCHMARK(BM_ForkJoinOmp)->Apply([](benchmark::internal::Benchmark* b) { stencil_args(b, true); });
BENCHMARK(BM_DagTbb)->Apply([](benchmark::internal::Benchmark* b) { stencil_args(b, true); });
BENCHMARK(BM_DagOmp)->Apply([](benchmark::internal::Benchmark* b) { stencil_args(b, true); });
BENCHMARK(BM_EmptyTbb)->Apply(empty_args);
BENCHMARK(BM_EmptyOmp)->Apply(empty_args);

}  // namespace

BENCHMARK_MAIN();

// The dynamic mapper's worker threads: a oneTBB arena of --threads workers, or the calling thread
// alone for one worker and in the simulation build. SMPI runs every simulated rank as a context
// of one OS thread and switches between them inside MPI calls; oneTBB's per-thread scheduler
// state would then be shared by ranks that interleave, so there the workers take turns.
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>

#ifndef MINIAMR_SIMGRID
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>
#endif

namespace miniamr::runtime {

class TaskPool {
 public:
  // oneTBB sizes its worker pool from the process's CPU mask; a rank that mpirun bound to
  // fewer cores than --threads still gets the workers it asked for (run.cpp warns about it).
  // One worker, or the simulation build, holds no oneTBB object at all.
  explicit TaskPool(int threads) : threads_(threads) {
#ifndef MINIAMR_SIMGRID
    if (threads > 1) tbb_.emplace(threads);
#endif
  }
  int threads() const {
    return threads_;
  }
  // Runs worker(w) for every worker w at once, each on a thread of the arena (the calling
  // thread runs worker 0). A worker that finds no thread free runs after another has returned,
  // so a worker loop must end once there is nothing left to do. Without an arena the workers
  // run one after the other on the calling thread (the first does everything), as the arena
  // would run one: entering it took about 20 us a call on a 2-core VM (three calls a batch of
  // timesteps, 10% of the time loop of expanding_sphere-ci on 2 ranks).
  template <class F>
  void run_workers(F&& worker) {
#ifndef MINIAMR_SIMGRID
    if (tbb_) {
      tbb_->arena.execute([&] {
        tbb::task_group tg;
        for (int w = 1; w < threads_; ++w) tg.run([&worker, w] { worker(w); });
        worker(0);
        tg.wait();
      });
      return;
    }
#endif
    for (int w = 0; w < threads_; ++w) worker(w);
  }
  // body(i) for every i in [0, n), in contiguous ranges over the workers (without an arena: in
  // order, on the calling thread).
  template <class F>
  void parallel_for(std::size_t n, F&& body) {
#ifndef MINIAMR_SIMGRID
    if (tbb_) {
      tbb_->arena.execute([&] {
        tbb::parallel_for(tbb::blocked_range<std::size_t>(
                              0, n, std::max<std::size_t>(1, n / std::size_t(threads_))),
                          [&](const tbb::blocked_range<std::size_t>& r) {
                            for (std::size_t i = r.begin(); i < r.end(); ++i) body(i);
                          });
      });
      return;
    }
#endif
    for (std::size_t i = 0; i < n; ++i) body(i);
  }

 private:
  int threads_;
#ifndef MINIAMR_SIMGRID
  struct Tbb {
    explicit Tbb(int threads)
        : limit(tbb::global_control::max_allowed_parallelism, std::size_t(threads)),
          arena(threads) {}
    tbb::global_control limit;
    tbb::task_arena arena;
  };
  std::optional<Tbb> tbb_;
#endif
};

}  // namespace miniamr::runtime

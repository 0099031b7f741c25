// The dynamic mapper's worker threads: a oneTBB arena of --threads workers or, in the simulation
// build, the calling thread alone. SMPI runs every simulated rank as a context of one OS thread
// and switches between them inside MPI calls; oneTBB's per-thread scheduler state would then be
// shared by ranks that interleave, so there a serial pool takes its place.
#pragma once

#include <algorithm>
#include <cstddef>

#ifndef MINIAMR_SIMGRID
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>
#endif

namespace miniamr::runtime {

#ifdef MINIAMR_SIMGRID

class TaskPool {
 public:
  explicit TaskPool(int threads) : threads_(threads) {}
  int threads() const { return threads_; }
  // Runs worker(w) for every worker w (here one after the other: a worker loop returns once
  // there is nothing left, so the first does everything).
  template <class F>
  void run_workers(F&& worker) {
    for (int w = 0; w < threads_; ++w) worker(w);
  }
  template <class F>
  void parallel_for(std::size_t n, F&& body) {
    for (std::size_t i = 0; i < n; ++i) body(i);
  }

 private:
  int threads_;
};

#else

class TaskPool {
 public:
  // oneTBB sizes its worker pool from the process's CPU mask; a rank that mpirun bound to
  // fewer cores than --threads still gets the workers it asked for (run.cpp warns about it).
  explicit TaskPool(int threads)
      : threads_(threads),
        limit_(tbb::global_control::max_allowed_parallelism, std::size_t(threads)),
        arena_(threads) {}
  int threads() const { return threads_; }
  // Runs worker(w) for every worker w at once, each on a thread of the arena (the calling
  // thread runs worker 0). A worker that finds no thread free runs after another has returned,
  // so a worker loop must end once there is nothing left to do. One worker runs on the calling
  // thread without entering the arena, as the arena would run it: entering took about 20 us a
  // call on a 2-core VM (three calls a batch of timesteps, 10% of the time loop of
  // expanding_sphere-ci on 2 ranks).
  template <class F>
  void run_workers(F&& worker) {
    if (threads_ == 1) return worker(0);
    arena_.execute([&] {
      tbb::task_group tg;
      for (int w = 1; w < threads_; ++w) tg.run([&worker, w] { worker(w); });
      worker(0);
      tg.wait();
    });
  }
  // body(i) for every i in [0, n), in contiguous ranges over the workers (one worker: in
  // order, on the calling thread).
  template <class F>
  void parallel_for(std::size_t n, F&& body) {
    if (threads_ == 1) {
      for (std::size_t i = 0; i < n; ++i) body(i);
      return;
    }
    arena_.execute([&] {
      tbb::parallel_for(tbb::blocked_range<std::size_t>(
                            0, n, std::max<std::size_t>(1, n / std::size_t(threads_))),
                        [&](const tbb::blocked_range<std::size_t>& r) {
                          for (std::size_t i = r.begin(); i < r.end(); ++i) body(i);
                        });
    });
  }

 private:
  int threads_;
  tbb::global_control limit_;
  tbb::task_arena arena_;
};

#endif

}  // namespace miniamr::runtime

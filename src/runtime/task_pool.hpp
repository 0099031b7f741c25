// Where the dynamic runtime's ready tasks run: oneTBB's work-stealing task_group inside an
// arena of --threads workers, or, in the simulation build, the calling thread alone. SMPI runs
// every simulated rank as a context of one OS thread and switches between them inside MPI
// calls; oneTBB's per-thread scheduler state would then be shared by ranks that interleave, so
// there a serial pool takes its place, popping the newest task first as a TBB worker does.
#pragma once

#include <algorithm>
#include <cstddef>

#ifdef MINIAMR_SIMGRID
#include <functional>
#include <utility>
#include <vector>
#else
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>
#endif

namespace miniamr::runtime {

#ifdef MINIAMR_SIMGRID

class TaskGroup {
 public:
  template <class F>
  void run(F&& task) {
    tasks_.emplace_back(std::forward<F>(task));
  }
  void wait() {
    while (!tasks_.empty()) {
      auto task = std::move(tasks_.back());
      tasks_.pop_back();
      task();
    }
  }

 private:
  std::vector<std::function<void()>> tasks_;
};

class TaskPool {
 public:
  explicit TaskPool(int threads) : threads_(threads) {}
  int threads() const { return threads_; }
  template <class F>
  void execute(F&& body) {
    body();
  }
  static int worker() { return 0; }

 private:
  int threads_;
};

#else

using TaskGroup = tbb::task_group;

class TaskPool {
 public:
  // oneTBB sizes its worker pool from the process's CPU mask; a rank that mpirun bound to
  // fewer cores than --threads still gets the workers it asked for (run.cpp warns about it).
  explicit TaskPool(int threads)
      : threads_(threads),
        limit_(tbb::global_control::max_allowed_parallelism, std::size_t(threads)),
        arena_(threads) {}
  int threads() const { return threads_; }
  template <class F>
  void execute(F&& body) {
    arena_.execute(std::forward<F>(body));
  }
  // This thread's index among the pool's workers.
  static int worker() { return std::max(0, tbb::this_task_arena::current_thread_index()); }

 private:
  int threads_;
  tbb::global_control limit_;
  tbb::task_arena arena_;
};

#endif

}  // namespace miniamr::runtime

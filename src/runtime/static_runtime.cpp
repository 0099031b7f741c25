#include "runtime/static_runtime.hpp"

#include <mutex>
#include <thread>

namespace miniamr::runtime {

namespace {

// Runs body(t) on each thread t of a team of `threads`, or in line when there is one: a
// parallel region that its if clause serialises still has libgomp build a team of one (an
// allocation and about 250 ns), and a stage enters a few regions per variable group.
template <class Body>
void on_team(int threads, Body&& body) {
  if (threads <= 1) {
    body(std::size_t{0});
    return;
  }
#pragma omp parallel num_threads(threads)
  body(std::size_t(thread_index()));
}

}  // namespace

StaticRuntime::StaticRuntime(MPI_Comm parent, RuntimeOptions options) : Mapper(parent, options) {
  // The team starts with the runtime, as the dynamic runtime's workers do, not in the first
  // batch of timesteps.
  on_team(threads(), [](std::size_t) {});
}

SchedulePolicy StaticRuntime::policy(const StageGraph&, const StageWork&, int) const {
  return {SchedulePolicy::Order::kInteriorFirst, std::size_t(threads())};
}

void StaticRuntime::for_each(std::size_t n, const std::function<void(std::size_t)>& body) {
  const int T = threads();
  on_team(T, [&](std::size_t t) {
    for (std::size_t i = n * t / std::size_t(T); i < n * (t + 1) / std::size_t(T); ++i) body(i);
  });
}

void StaticRuntime::run_units(ChunkRun& run, std::size_t lane, int step, std::size_t first,
                              std::size_t last) {
  const int T = threads();
  on_team(T, [&](std::size_t t) {
    for (std::size_t u = first + t; u < last; u += std::size_t(T))
      run.run_step(lane, u, step, int(t));
  });
}

void StaticRuntime::wait(ChunkRun& run, std::size_t lane, int group) {
  const std::lock_guard lock(run.halo().token());
  const auto none = [](std::size_t, std::size_t) {};
  drive(run, false, 0, none);
  while (run.halo().missing(lane, group) > 0)
    if (!drive(run, true, 0, none) && !map_ahead(run.domain())) std::this_thread::yield();
}

void StaticRuntime::run_chunk(ChunkRun& run) {
  const Schedule& s = run.schedule();
  for (std::size_t lane = 0; lane < run.lanes().count(); ++lane) {
    for (int step = 0; step < s.steps; ++step) {
      // The blocks that need no message while the messages fly, then the rest.
      run_units(run, lane, step, 0, s.second_part);
      if (step < s.groups) wait(run, lane, step);
      run_units(run, lane, step, s.second_part, s.units());
    }
    // The faces just packed for the next stage leave now.
    const std::lock_guard lock(run.halo().token());
    drive(run, false, 0, [](std::size_t, std::size_t) {});
  }
}

}  // namespace miniamr::runtime

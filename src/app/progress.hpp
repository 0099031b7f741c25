// The progress line rank 0 prints as the run goes, one per timestep (or every
// --progress_every steps), in the shape HPC users know from other codes:
//   step 57/200  t=56.0  wall 12.3 s  0.21 s/step  3.1e+08 cell-updates/s  blocks 1283  ETA 36 s
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "app/config.hpp"
#include "runtime/clock.hpp"

namespace miniamr::app {

class Progress {
 public:
  // `out` null or a quiet/verbose run: prints nothing (verbose runs print the reference's lines).
  Progress(std::FILE* out, const Config& config);

  // Starts the clock: call when timestepping begins.
  void start();
  // Timestep `ts` ended at simulated time `t` with `blocks` blocks in all, each of whose steps
  // made `updates` cell-variable updates on all ranks together.
  void step(int ts, double t, std::int64_t blocks, double updates);

  // The line for these figures (the time left is estimated from the mean rate so far).
  static std::string line(int ts, int steps, double t, double end_time, double wall,
                          double updates_per_s, std::int64_t blocks);

 private:
  std::FILE* out_;
  const Config& config_;
  runtime::Clock::time_point start_;
  double updates_ = 0;
};

}  // namespace miniamr::app

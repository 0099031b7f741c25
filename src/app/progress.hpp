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
  // The stages of every timestep up to `last_ts` have run, making `updates` more cell-variable
  // updates on all ranks together (a batch's timesteps all end when it does).
  void ran(int last_ts, double updates);
  // Timestep `ts` (its stages run) ended at simulated time `t` with `blocks` blocks in all. The
  // line's rates and time left count every timestep run by now, so those of a batch's first
  // timesteps are the batch's.
  void step(int ts, double t, std::int64_t blocks);

  // The line for timestep `ts` with `done` timesteps run (the time left is estimated from the
  // mean rate so far).
  static std::string line(int ts, int done, int steps, double t, double end_time, double wall,
                          double updates_per_s, std::int64_t blocks);

 private:
  std::FILE* out_;
  const Config& config_;
  runtime::Clock::time_point start_;
  double updates_ = 0;
  int done_ = 0;  // the last timestep whose stages have run
};

}  // namespace miniamr::app

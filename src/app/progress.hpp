// The progress line rank 0 prints as the run goes, at most about once a second (and always for
// the last timestep), in the shape HPC users know from other codes:
//   step 57/200  t=57  wall 12.3 s  0.21 s/step  3.1e+08 cell-updates/s  blocks 1283  ETA 36 s
// The time left is the work left (cell-variable updates, from a forecast of the mesh the objects
// will make: MeshForecast) at the rate measured so far, time loop and refinement included.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "app/config.hpp"
#include "app/mesh_forecast.hpp"
#include "runtime/clock.hpp"

namespace miniamr::app {

class Progress {
 public:
  // `out` null or a quiet/verbose run: prints nothing (verbose runs print the reference's lines).
  Progress(std::FILE* out, const Config& config);

  // Starts the clock when timestepping begins at timestep `first`, with the objects as they
  // are before it moves them and the timestep's length `delta` (the forecast's input).
  void start(int first, const std::vector<Object>& objects, double delta);
  // The stages of every timestep up to `last_ts` have run, making `updates` more cell-variable
  // updates on all ranks together (a batch's timesteps all end when it does).
  void ran(int last_ts, double updates);
  // Timestep `ts` (its stages run) ended at simulated time `t` with `blocks` blocks in all.
  // Prints its line when --progress_every picks it and --progress_interval seconds have passed
  // since the last line, and always for the last timestep.
  void step(int ts, double t, std::int64_t blocks);

  // Seconds left after timestep `done`: the updates of the timesteps up to `steps` (each with
  // the blocks `forecast` says, scaled so that timestep `done` has `blocks`; without a forecast
  // `blocks` each) at the rate of `updates` done in `wall` seconds.
  static double time_left(int done, int steps, double wall, double updates, std::int64_t blocks,
                          double updates_per_block, const MeshForecast& forecast);
  // The line for timestep `ts` with `done` timesteps run.
  static std::string line(int ts, int done, int steps, double t, double end_time, double wall,
                          double updates_per_s, std::int64_t blocks, double left);

 private:
  std::FILE* out_;
  const Config& config_;
  runtime::Clock::time_point start_;
  MeshForecast forecast_;
  double updates_ = 0;
  int done_ = 0;             // the last timestep whose stages have run
  double last_line_ = -1e9;  // wall seconds of the last line printed
};

}  // namespace miniamr::app

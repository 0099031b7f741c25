#include "app/progress.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace miniamr::app {

namespace {

std::string seconds(double s) {
  if (s < 10) return fmt::format("{:.2f} s", s);
  if (s < 100) return fmt::format("{:.1f} s", s);
  if (s < 3600) return fmt::format("{}m{:02d}s", int(s) / 60, int(s) % 60);
  return fmt::format("{}h{:02d}m", int(s) / 3600, int(s) / 60 % 60);
}

// The timesteps the run will make (0 when it ends at a simulated time instead).
int total_steps(const Config& c) {
  return c.num_tsteps_given || !c.time_given ? c.num_tsteps : 0;
}

double updates_per_block(const Config& c) {
  return double(c.nx) * c.ny * c.nz * c.num_vars * c.stages_per_ts;
}

}  // namespace

Progress::Progress(std::FILE* out, const Config& config)
    : out_(config.verbosity == Verbosity::kNormal && (config.report_perf & 8) ? out : nullptr),
      config_(config) {}

void Progress::start(int first, const std::vector<Object>& objects, double delta) {
  // Only the rank that prints forecasts, before its clock starts.
  if (out_ != nullptr && total_steps(config_) > 0)
    forecast_ = MeshForecast(config_, objects, first, delta);
  start_ = runtime::Clock::now();
}

void Progress::ran(int last_ts, double updates) {
  done_ = last_ts;
  updates_ += updates;
}

void Progress::step(int ts, double t, std::int64_t blocks) {
  if (out_ == nullptr) return;
  const int steps = total_steps(config_);
  const bool last = (steps > 0 && ts >= steps) || (config_.time_given && t >= config_.time);
  const double wall = runtime::seconds_since(start_);
  if (!last && (ts % config_.progress_every != 0 || wall - last_line_ < config_.progress_interval))
    return;
  last_line_ = wall;
  const int done = std::max(done_, ts);
  const double left = steps > 0 ? time_left(done, steps, wall, updates_, blocks,
                                            updates_per_block(config_), forecast_)
                                : (t > 0 ? wall / t * (config_.time - t) : 0.0);
  fmt::print(out_, "{}\n",
             line(ts, done, steps, t, config_.time_given ? config_.time : 0.0, wall,
                  wall > 0 ? updates_ / wall : 0.0, blocks, left));
  std::fflush(out_);
}

double Progress::time_left(int done, int steps, double wall, double updates, std::int64_t blocks,
                           double updates_per_block, const MeshForecast& forecast) {
  if (done >= steps || updates <= 0) return 0.0;
  // The stages of timestep k run on the mesh left by timestep k-1.
  const double now = forecast.empty() ? 0.0 : forecast.leaves(done);
  const double scale = now > 0 ? double(blocks) / now : 0.0;
  double blocks_left = 0;
  for (int k = done + 1; k <= steps; ++k)
    blocks_left += scale > 0 ? scale * forecast.leaves(k - 1) : double(blocks);
  return wall / updates * blocks_left * updates_per_block;
}

std::string Progress::line(int ts, int done, int steps, double t, double end_time, double wall,
                           double updates_per_s, std::int64_t blocks, double left) {
  const std::string count = steps > 0 ? fmt::format("{}/{}", ts, steps) : fmt::format("{}", ts);
  const std::string time =
      end_time > 0 ? fmt::format("{:.4g}/{:.4g}", t, end_time) : fmt::format("{:.4g}", t);
  return fmt::format(
      "step {}  t={}  wall {}  {:.3g} s/step  {:.2e} cell-updates/s  blocks {}  ETA {}", count,
      time, seconds(wall), wall / done, updates_per_s, blocks, seconds(std::max(left, 0.0)));
}

}  // namespace miniamr::app

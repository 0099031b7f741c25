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

}  // namespace

Progress::Progress(std::FILE* out, const Config& config)
    : out_(config.verbosity == Verbosity::kNormal && (config.report_perf & 8) ? out : nullptr),
      config_(config) {}

void Progress::start() {
  start_ = runtime::Clock::now();
}

void Progress::ran(int last_ts, double updates) {
  done_ = last_ts;
  updates_ += updates;
}

void Progress::step(int ts, double t, std::int64_t blocks) {
  if (out_ == nullptr) return;
  const int steps = config_.num_tsteps_given || !config_.time_given ? config_.num_tsteps : 0;
  const bool last = (steps > 0 && ts >= steps) || (config_.time_given && t >= config_.time);
  if (ts % config_.progress_every != 0 && !last) return;
  const double wall = std::chrono::duration<double>(runtime::Clock::now() - start_).count();
  fmt::print(out_, "{}\n",
             line(ts, std::max(done_, ts), steps, t, config_.time_given ? config_.time : 0.0, wall,
                  wall > 0 ? updates_ / wall : 0.0, blocks));
  std::fflush(out_);
}

std::string Progress::line(int ts, int done, int steps, double t, double end_time, double wall,
                           double updates_per_s, std::int64_t blocks) {
  // Steps known: the rest at the mean time per step so far; --time alone: at the mean simulated
  // time per wall second so far.
  double left = 0;
  if (steps > 0)
    left = wall / done * (steps - done);
  else if (t > 0)
    left = wall / t * (end_time - t);
  const std::string count = steps > 0 ? fmt::format("{}/{}", ts, steps) : fmt::format("{}", ts);
  const std::string time =
      end_time > 0 ? fmt::format("{:.4g}/{:.4g}", t, end_time) : fmt::format("{:.4g}", t);
  return fmt::format(
      "step {}  t={}  wall {}  {:.3g} s/step  {:.2e} cell-updates/s  blocks {}  ETA {}", count,
      time, seconds(wall), wall / done, updates_per_s, blocks, seconds(left > 0 ? left : 0));
}

}  // namespace miniamr::app

#include "netbench/fit.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

namespace miniamr::netbench {

AlphaBeta fit_alpha_beta(std::span<const Point> points) {
  std::set<double> sizes;
  for (const Point& p : points) {
    if (!(p.seconds > 0) || !std::isfinite(p.seconds) || !(p.bytes >= 0) || !std::isfinite(p.bytes))
      throw FitError(
          fmt::format("a time of {} s at {} bytes cannot be fitted", p.seconds, p.bytes));
    sizes.insert(p.bytes);
  }
  if (sizes.size() < 2)
    throw FitError(fmt::format("{} message size(s): a latency and a bandwidth need at least two",
                               sizes.size()));
  // Times span four decades and more from 8 B to MiB messages. Plain least squares would fit
  // the largest messages only and leave the latency to their noise (often below zero); relative
  // residuals give every size the same say, which is what a model that prices both small halo
  // messages and large migrations needs.
  double s = 0, sx = 0, sxx = 0, sy = 0, sxy = 0;
  for (const Point& p : points) {
    const double w = 1 / (p.seconds * p.seconds);
    s += w;
    sx += w * p.bytes;
    sxx += w * p.bytes * p.bytes;
    sy += w * p.seconds;
    sxy += w * p.bytes * p.seconds;
  }
  const double det = s * sxx - sx * sx;
  double alpha = (sxx * sy - sx * sxy) / det;
  double per_byte = (s * sxy - sx * sy) / det;
  // A negative latency is noise at the small sizes: the best fit with latency >= 0 (the
  // objective is convex) then lies on the boundary.
  if (!(alpha >= 0)) {
    alpha = 0;
    per_byte = sxy / sxx;
  }
  if (!(per_byte > 0) || !std::isfinite(per_byte) || !std::isfinite(alpha))
    throw FitError(
        "the times do not grow with the message size, so no bandwidth can be fitted (a machine "
        "too busy to measure on?)");
  AlphaBeta ab;
  ab.latency_s = alpha;
  ab.bandwidth_Bps = 1 / per_byte;
  ab.points = int(points.size());
  for (const Point& p : points)
    ab.max_rel_residual =
        std::max(ab.max_rel_residual, std::abs(p.seconds - alpha - p.bytes * per_byte) / p.seconds);
  if (!std::isfinite(ab.bandwidth_Bps)) throw FitError("the fitted bandwidth is not finite");
  return ab;
}

std::optional<LogGP> fit_loggp(const AlphaBeta& pingpong, std::span<const Point> stream_per_message,
                               double send_overhead_s, std::string& why_not) {
  if (stream_per_message.size() < 2) {
    why_not = "the stream test needs at least two message sizes";
    return std::nullopt;
  }
  AlphaBeta gaps;
  try {
    gaps = fit_alpha_beta(stream_per_message);
  } catch (const FitError& e) {
    why_not = fmt::format("the stream times: {}", e.what());
    return std::nullopt;
  }
  const auto smallest =
      std::min_element(stream_per_message.begin(), stream_per_message.end(),
                       [](const Point& a, const Point& b) { return a.bytes < b.bytes; });
  LogGP m;
  m.o_s = send_overhead_s;
  m.g_s = smallest->seconds;
  m.G_s_per_byte = 1 / gaps.bandwidth_Bps;
  m.L_s = pingpong.latency_s - 2 * send_overhead_s;
  if (!(m.o_s >= 0) || !std::isfinite(m.o_s) || !(m.L_s >= 0)) {
    why_not = fmt::format(
        "the send overhead ({:.3g} s) leaves no wire latency in the ping-pong's {:.3g} s", m.o_s,
        pingpong.latency_s);
    return std::nullopt;
  }
  return m;
}

}  // namespace miniamr::netbench

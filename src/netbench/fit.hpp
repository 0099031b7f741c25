// Models fitted to measured times: alpha-beta (Hockney) for every pair class, and LogGP-style
// parameters where a stream test gives the gaps and the send overhead.
#pragma once

#include <optional>
#include <span>
#include <stdexcept>
#include <string>

namespace miniamr::netbench {

struct Point {
  double bytes = 0, seconds = 0;
};

// t(n) = latency_s + n / bandwidth_Bps.
struct AlphaBeta {
  double latency_s = 0, bandwidth_Bps = 0;
  int points = 0;
  double max_rel_residual = 0;  // max over points of |t - model| / t
};

// Why a fit cannot be made: too few sizes, times that do not grow with size, non-finite values.
struct FitError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Least squares of relative residuals (each point weighted by 1/t^2), latency held at >= 0.
// Throws FitError unless the result has latency_s >= 0 and a positive finite bandwidth.
AlphaBeta fit_alpha_beta(std::span<const Point> points);

// LogGP (Alexandrov et al. 1995) as measured here: o the time inside one MPI_Isend of a small
// message, g the time per message of a stream of small messages, G the per-byte slope of the
// stream's time per message, L the small-message one-way time less a send and a receive
// overhead (taken equal).
struct LogGP {
  double L_s = 0, o_s = 0, g_s = 0, G_s_per_byte = 0;
};

// From the ping-pong fit, the stream's time per message (window time / window) per size, and
// the send overhead at the stream's smallest size. Nothing when the data do not support the
// model (`why_not` says why): fewer than two stream sizes, a non-positive slope, L < 0.
std::optional<LogGP> fit_loggp(const AlphaBeta& pingpong, std::span<const Point> stream_per_message,
                               double send_overhead_s, std::string& why_not);

}  // namespace miniamr::netbench

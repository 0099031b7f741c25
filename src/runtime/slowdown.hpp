// A slower or noisier processor, emulated so that static and dynamic runtimes can be compared
// on an unbalanced machine: after a piece of work that took t seconds, the worker busy-waits
// (factor - 1) t, plus t |N(0, noise)| drawn from a counter-based generator (reproducible, and
// the same whichever thread runs the work). Busy-waiting keeps the core taken, as a slower
// core would; sleeping would hand it to another process.
#pragma once

#include <cstdint>

namespace miniamr::runtime {

class Slowdown {
 public:
  Slowdown() = default;
  Slowdown(double factor, double noise, std::uint64_t seed)
      : factor_(factor), noise_(noise), seed_(seed) {}

  bool active() const { return factor_ > 1.0 || noise_ > 0.0; }
  double factor() const { return factor_; }
  // The extra seconds for a piece of work that took `seconds`; `id` names the piece.
  double extra(double seconds, std::uint64_t id) const;
  // Spends extra(seconds, id) of processor time (charge_compute: busy-waits, or simulated).
  void after(double seconds, std::uint64_t id) const;

 private:
  double factor_ = 1.0;
  double noise_ = 0.0;
  std::uint64_t seed_ = 0;
};

}  // namespace miniamr::runtime

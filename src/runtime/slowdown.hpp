// A slower or noisier processor, emulated so that static and dynamic runtimes can be compared
// on an unbalanced machine: after a piece of work that took t seconds, the worker busy-waits
// (factor - 1) t, plus t |N(0, noise)| drawn from a counter-based generator (reproducible, and
// the same whichever thread runs the work). Busy-waiting keeps the core taken, as a slower
// core would; sleeping would hand it to another process. Every piece of work on block values is
// slowed: the stages' unit steps, the copies into and out of compact storage, and refinement's
// splits and merges (a rank slowed in its stages alone would split and merge as fast as the
// others, and holding fewer blocks it would make the faster ranks do most of that work).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace miniamr::runtime {

class Slowdown {
 public:
  // What a piece of work was, for the account of the time spent slowing it down.
  enum class Work : std::uint8_t { kStages, kCopies, kAdaptation };
  static constexpr std::size_t kWorks = 3;

  Slowdown() = default;
  Slowdown(double factor, double noise, std::uint64_t seed)
      : factor_(factor), noise_(noise), seed_(seed) {}

  bool active() const { return factor_ > 1.0 || noise_ > 0.0; }
  double factor() const { return factor_; }
  // The extra seconds for a piece of work that took `seconds`; `id` names the piece.
  double extra(double seconds, std::uint64_t id) const;
  // Spends extra(seconds, id) of processor time (charge_compute: busy-waits, or simulated).
  // Safe from several threads at once.
  void after(double seconds, std::uint64_t id, Work work = Work::kStages) const;
  // The seconds spent so far slowing down `work` (what after() added).
  double spent(Work work) const;

 private:
  double factor_ = 1.0;
  double noise_ = 0.0;
  std::uint64_t seed_ = 0;
  // Nanoseconds, per Work; mutable: the account of a const emulation.
  mutable std::array<std::atomic<std::int64_t>, kWorks> spent_ns_{};
};

}  // namespace miniamr::runtime

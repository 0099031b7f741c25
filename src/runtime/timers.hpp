// Phase timers: one accumulating slot per phase, filled through MINIAMR_TIMED.
#pragma once

#include <array>
#include <chrono>
#include <string_view>

#include "runtime/clock.hpp"

namespace miniamr::runtime {

enum class Phase : int {
  kCompute,      // stencil sweeps, with the on-rank ghost copies fused into them (T_comp)
  kCommunicate,  // halo messages: pack, post, wait, unpack (T_comm)
  kChecksum,     // checksum reductions
  kRefine,       // marking, closure, split and coarsen (T_ref)
  kLoadBalance,  // partition and migration (T_lb)
  kInit,         // initial mesh and data
  kTotal,        // ts-0 refinement plus the time loop
  kCount
};

constexpr std::string_view phase_name(Phase p) {
  constexpr std::array<std::string_view, int(Phase::kCount)> names{
      "compute", "communicate", "checksum", "refine", "load_balance", "init", "total"};
  return names[std::size_t(p)];
}

class Timers {
 public:
  void add(Phase p, double seconds) { seconds_[std::size_t(p)] += seconds; }
  double get(Phase p) const { return seconds_[std::size_t(p)]; }
  // The part of compute spent in the stages' unit steps (fills, sweeps, packs), over the
  // workers: the time that grows with the blocks a rank holds. Driving messages and copying in
  // and out of compact storage cost about the same whatever the cut, so a speed measured on
  // compute would make a rank holding few blocks look slow and give it fewer still.
  void add_steps(double seconds) { steps_ += seconds; }
  double steps() const { return steps_; }

 private:
  std::array<double, std::size_t(Phase::kCount)> seconds_{};
  double steps_ = 0;
};

class ScopedTimer {
 public:
  ScopedTimer(Timers& t, Phase p) : timers_(t), phase_(p), start_(Clock::now()) {}
  ~ScopedTimer() { timers_.add(phase_, seconds_since(start_)); }
  ScopedTimer(const ScopedTimer&) = delete;
  ScopedTimer& operator=(const ScopedTimer&) = delete;

 private:
  Timers& timers_;
  Phase phase_;
  Clock::time_point start_;
};

}  // namespace miniamr::runtime

#define MINIAMR_CONCAT_INNER(a, b) a##b
#define MINIAMR_CONCAT(a, b) MINIAMR_CONCAT_INNER(a, b)
// Times the rest of the enclosing scope into `timers` under `phase` (a runtime::Phase name).
#define MINIAMR_TIMED(timers, phase)                                        \
  ::miniamr::runtime::ScopedTimer MINIAMR_CONCAT(miniamr_timer_, __LINE__)( \
      timers, ::miniamr::runtime::Phase::phase)

// The clock every timer, cost record and trace of a run reads. In a normal build it is the
// steady clock; in the simulation build (MINIAMR_SIMGRID) it is the simulated clock of this
// rank (MPI_Wtime under SMPI), since the host's clock says nothing about the simulated run:
// SMPI advances the simulated clock by each computation burst and message.
#pragma once

#include <chrono>

#ifdef MINIAMR_SIMGRID
#include <mpi.h>
#endif

namespace miniamr::comm {

#ifdef MINIAMR_SIMGRID
struct Clock {
  using duration = std::chrono::duration<double>;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::time_point<Clock>;
  static constexpr bool is_steady = true;
  static time_point now() { return time_point(duration(MPI_Wtime())); }
};
#else
using Clock = std::chrono::steady_clock;
#endif

// Seconds on Clock since `t0`.
inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace miniamr::comm

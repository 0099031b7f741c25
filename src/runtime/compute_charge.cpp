#include "runtime/compute_charge.hpp"

#include <chrono>

#ifdef MINIAMR_SIMGRID
#include <smpi/smpi.h>
#endif

namespace miniamr::runtime {

void charge_compute(double seconds) {
  if (!(seconds > 0)) return;
#ifdef MINIAMR_SIMGRID
  // The benched variant closes the burst of real computation SMPI is timing, charges the
  // modelled seconds, and opens the next burst.
  smpi_execute_benched(seconds);
#else
  using Clock = std::chrono::steady_clock;
  const auto until = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < until) {
  }
#endif
}

}  // namespace miniamr::runtime

// Spends `seconds` of this rank's processor time without computing anything: a modelled
// kernel, or the extra time of an emulated slow rank.
#pragma once

namespace miniamr::runtime {

// In the simulation build this advances the rank's simulated clock by `seconds` of the
// reference machine's processor, scaled by the speed of the host the rank runs on (SMPI's
// smpi_execute_benched); in a normal build it busy-waits, so the core stays taken as a slower
// core would keep it.
void charge_compute(double seconds);

}  // namespace miniamr::runtime

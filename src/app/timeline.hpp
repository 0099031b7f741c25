// Which timesteps of a run refine the mesh: rules of the deck alone, so that the driver, its
// batches and a replayed balancing log agree on them.
#pragma once

#include "app/config.hpp"

namespace miniamr::app {

// Whether the mesh follows the objects after timestep 0 (not uniform, some levels to refine).
bool adapts(const Config& config);
// Whether a refinement step comes right after timestep `ts` (> 0).
bool refines_after(const Config& config, int ts);
// Whether the run refines the mesh again after timestep `ts` (with --time alone the last
// timestep is not known, so one is assumed to).
bool refinement_follows(const Config& config, int ts);

}  // namespace miniamr::app

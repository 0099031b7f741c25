// Which timesteps of a run refine the mesh and which end in a balancing decision: rules of the
// deck alone, so that every rank, the driver's batches and a replayed log agree on them.
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
// Whether the dynamic balancer's decision is due after timestep `ts` when no refinement step
// comes there: every --lb_freq timesteps, and after the first timestep on a new mesh (the run's
// first, and the one after each refinement step), the first whose measured speeds are of that
// mesh. A refinement step's cut is made with speeds measured on the mesh before it; on a small
// mesh, or one that grew, they can miss a slow rank, and the decision one timestep later
// corrects the cut instead of leaving it until the next refinement step.
bool balance_decision_due(const Config& config, int ts);

}  // namespace miniamr::app

#include "app/timeline.hpp"

namespace miniamr::app {

bool adapts(const Config& c) {
  return c.num_refine > 0 && c.uniform_refine == 0;
}

bool refines_after(const Config& c, int ts) {
  return adapts(c) && c.refine_freq > 0 && ts % c.refine_freq == 0;
}

bool refinement_follows(const Config& c, int ts) {
  if (!adapts(c) || c.refine_freq <= 0) return false;
  if (c.time_given && !c.num_tsteps_given) return true;  // the last timestep is not known
  return c.refine_freq - ts % c.refine_freq <= c.num_tsteps - ts;
}

}  // namespace miniamr::app

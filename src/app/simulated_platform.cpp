#include "app/simulated_platform.hpp"

#ifdef MINIAMR_SIMGRID
#include <dlfcn.h>
#include <simgrid/host.h>
#include <simgrid/zone.h>
#endif

namespace miniamr::app {

SimulatedPlatform simulated_platform() {
  SimulatedPlatform p;
#ifdef MINIAMR_SIMGRID
  p.simulated = true;
  p.name = sg_zone_get_name(sg_zone_get_root());
  p.host = sg_host_get_name(sg_host_self());
  p.host_speed = sg_host_get_speed(sg_host_self());
  // jemalloc's own control entry point exists only where jemalloc was loaded.
  p.host_allocator = dlsym(RTLD_DEFAULT, "mallctl") != nullptr ? "jemalloc" : "glibc";
#endif
  return p;
}

}  // namespace miniamr::app

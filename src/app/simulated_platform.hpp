// Whether this run is simulated (the SMPI build), and on which modelled platform: results of a
// simulated run are labelled so that nobody takes them for measurements.
#pragma once

#include <string>

namespace miniamr::app {

struct SimulatedPlatform {
  bool simulated = false;
  std::string name;       // the platform file's top zone (its id), "" when not simulated
  std::string host;       // the simulated host this rank runs on
  double host_speed = 0;  // its speed, flop/s
  // The allocator of the simulator's process: "jemalloc" when tools/miniamr-simulate preloads
  // it, else "glibc". SMPI times the host's code between MPI calls, malloc included, and runs
  // every rank in one process and heap: glibc's cost of a call grows with that heap (its bins
  // and the consolidation of its fast bins), so each rank would be charged for the memory of
  // all the others; jemalloc's size classes cost the same whatever the heap holds.
  std::string host_allocator;
};

// This rank's view; a normal build says not simulated.
SimulatedPlatform simulated_platform();

}  // namespace miniamr::app

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
};

// This rank's view; a normal build says not simulated.
SimulatedPlatform simulated_platform();

}  // namespace miniamr::app

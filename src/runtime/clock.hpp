// The run's clock (comm/clock.hpp) under the runtime's names, which its timers, cost records
// and traces read.
#pragma once

#include "comm/clock.hpp"

namespace miniamr::runtime {

using comm::Clock;
using comm::seconds_since;

}  // namespace miniamr::runtime

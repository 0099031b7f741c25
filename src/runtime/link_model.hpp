// What moving data between two ranks costs, so that a load balancer can charge each candidate
// plan with the time its migration would take rather than with a block count.
#pragma once

#include "comm/mpi.hpp"

namespace miniamr::runtime {

struct LinkModel {
  double latency_s = 0;      // per message
  double bandwidth_Bps = 0;  // bytes per second; 0 means unknown, and then bytes cost nothing

  // latency * messages + bytes / bandwidth. A default model prices every move at zero, so a
  // balancer that was never given a measurement behaves as one that ignores migration.
  double seconds(double bytes, int messages = 1) const;
};

// Collective. A short start-up measurement: ping-pong of 8 B and 1 MiB messages between the
// pairs 0<->1, 2<->3, ... and then 1<->2, 3<->4, ..., so that every rank takes part. Returns the
// slowest pair's model (max latency, min bandwidth), identical on every rank. On one rank, a
// self copy (memcpy of 1 MiB) with latency 0. Latency >= 0 and bandwidth > 0, both finite.
LinkModel measure_link_model(const comm::Communicator& comm);

}  // namespace miniamr::runtime

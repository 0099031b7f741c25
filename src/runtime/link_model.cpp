#include "runtime/link_model.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <limits>
#include <vector>

#include "comm/shared_storage.hpp"

namespace miniamr::runtime {

double LinkModel::seconds(double bytes, int messages) const {
  double t = latency_s * messages;
  if (bandwidth_Bps > 0) t += bytes / bandwidth_Bps;
  return t;
}

namespace {

constexpr int kSmallBytes = 8;
constexpr int kLargeBytes = 1 << 20;
// Few repetitions keep the call in the low milliseconds even when oversubscribed. The fastest
// round trip is the link's: a slower one measured the scheduler (a rank preempted on a busy
// machine), and taking it would make every migration look expensive.
constexpr int kSmallWarmup = 2, kSmallReps = 11;
constexpr int kLargeWarmup = 1, kLargeReps = 3;
// Floors that keep a measurement finite and positive whatever the clock's resolution.
constexpr double kMinSeconds = 1e-9;

double fastest(const std::vector<double>& v) {
  return *std::min_element(v.begin(), v.end());
}

// Round-trip times of `reps` ping-pongs of `bytes` with `peer`, after `warmup` untimed ones
// (the first large messages pay for page faults and protocol set-up). The responder returns
// nothing: only the initiator's clock brackets whole round trips.
std::vector<double> ping_pong(MPI_Comm comm, int peer, bool initiator, char* buf, int bytes,
                              int warmup, int reps, int tag) {
  std::vector<double> rtt;
  for (int i = 0; i < warmup + reps; ++i) {
    if (initiator) {
      double t0 = MPI_Wtime();
      MPI_Send(buf, bytes, MPI_BYTE, peer, tag, comm);
      MPI_Recv(buf, bytes, MPI_BYTE, peer, tag, comm, MPI_STATUS_IGNORE);
      double t1 = MPI_Wtime();
      if (i >= warmup) rtt.push_back(t1 - t0);
    } else {
      MPI_Recv(buf, bytes, MPI_BYTE, peer, tag, comm, MPI_STATUS_IGNORE);
      MPI_Send(buf, bytes, MPI_BYTE, peer, tag, comm);
    }
  }
  return rtt;
}

LinkModel self_copy_model() {
  std::vector<std::byte> a(kLargeBytes, std::byte{1}), b(kLargeBytes, std::byte{2});
  std::vector<double> times;
  for (int i = 0; i < kLargeWarmup + kLargeReps; ++i) {
    double t0 = MPI_Wtime();
    std::memcpy(b.data(), a.data(), a.size());
    double t1 = MPI_Wtime();
    if (i >= kLargeWarmup) times.push_back(t1 - t0);
    std::swap(a, b);
  }
  // Reading the result keeps the compiler from dropping copies it could prove unobserved.
  volatile std::byte sink = a[a.size() / 2];
  (void)sink;
  return {0.0, kLargeBytes / std::max(fastest(times), kMinSeconds)};
}

}  // namespace

LinkModel measure_link_model(const comm::Communicator& comm) {
  if (comm.size() == 1) return self_copy_model();

  // A private communicator, so no pending wildcard receive of the caller's can take our
  // messages and none of theirs can be taken by us.
  comm::Communicator own(comm.get());
  const int rank = own.rank(), size = own.size();
  // Shared by the ranks of a simulation, where a megabyte each would make the simulator's peak.
  comm::UnreadBytes buf(kLargeBytes);

  // Ranks that initiate no pair add the neutral element of each reduction.
  double worst[2] = {0.0, -std::numeric_limits<double>::max()};  // latency, -bandwidth
  for (int phase = 0; phase < 2; ++phase) {
    // Phase 0 pairs (2i, 2i+1), phase 1 pairs (2i+1, 2i+2); the lower rank initiates.
    const int offset = rank - phase;
    if (offset < 0) continue;
    const bool lower = offset % 2 == 0;
    const int peer = lower ? rank + 1 : rank - 1;
    if (peer >= size) continue;
    auto small = ping_pong(own.get(), peer, lower, buf.data(), kSmallBytes, kSmallWarmup,
                           kSmallReps, 2 * phase);
    auto large = ping_pong(own.get(), peer, lower, buf.data(), kLargeBytes, kLargeWarmup,
                           kLargeReps, 2 * phase + 1);
    if (!lower) continue;
    double latency = std::max(fastest(small) / 2, kMinSeconds);
    double one_way = fastest(large) / 2;
    // The large message's own latency is not bandwidth; should noise make the difference
    // vanish, the whole one-way time is the safe (lower) estimate.
    double transfer = one_way - latency;
    if (transfer < 0.1 * one_way) transfer = one_way;
    double bandwidth = kLargeBytes / std::max(transfer, kMinSeconds);
    worst[0] = std::max(worst[0], latency);
    worst[1] = std::max(worst[1], -bandwidth);
  }
  MPI_Allreduce(MPI_IN_PLACE, worst, 2, MPI_DOUBLE, MPI_MAX, own.get());
  return {worst[0], -worst[1]};
}

}  // namespace miniamr::runtime

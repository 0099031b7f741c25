#include "netbench/kernels.hpp"

#include <algorithm>
#include <cstring>

namespace miniamr::netbench {

namespace {

constexpr int kDataTag = 1, kAckTag = 2;

// Half of each round trip: the one-way time of a message, whose start and end are both read
// from the first rank's clock (ranks' clocks need not agree).
void ping_pong(std::int64_t bytes, MPI_Comm comm, int peer, bool first, Buffers& b, bool timed,
               Timings& out) {
  const int n = int(bytes);
  if (first) {
    const double t0 = MPI_Wtime();
    MPI_Send(b.send.data(), n, MPI_BYTE, peer, kDataTag, comm);
    MPI_Recv(b.recv.data(), n, MPI_BYTE, peer, kDataTag, comm, MPI_STATUS_IGNORE);
    const double t1 = MPI_Wtime();
    if (timed) out.seconds.push_back((t1 - t0) / 2);
  } else {
    MPI_Recv(b.recv.data(), n, MPI_BYTE, peer, kDataTag, comm, MPI_STATUS_IGNORE);
    MPI_Send(b.send.data(), n, MPI_BYTE, peer, kDataTag, comm);
  }
}

// A window of sends from the first rank, closed by the receiver's short acknowledgement, as
// osu_bw: the time covers every byte arriving, not only leaving.
void stream(const TestSpec& t, std::int64_t bytes, MPI_Comm comm, int peer, bool first, Buffers& b,
            bool timed, Timings& out) {
  const int n = int(bytes);
  std::vector<MPI_Request> req(std::size_t(t.window), MPI_REQUEST_NULL);
  char ack = 0;
  if (first) {
    const double t0 = MPI_Wtime();
    double posting = 0;
    for (int w = 0; w < t.window; ++w) {
      const double p0 = MPI_Wtime();
      MPI_Isend(b.send.data() + std::size_t(w) * std::size_t(n), n, MPI_BYTE, peer, kDataTag, comm,
                &req[std::size_t(w)]);
      posting += MPI_Wtime() - p0;
    }
    MPI_Waitall(t.window, req.data(), MPI_STATUSES_IGNORE);
    MPI_Recv(&ack, 1, MPI_BYTE, peer, kAckTag, comm, MPI_STATUS_IGNORE);
    const double t1 = MPI_Wtime();
    if (timed) {
      out.seconds.push_back(t1 - t0);
      out.send_overhead_s.push_back(posting / t.window);
    }
  } else {
    for (int w = 0; w < t.window; ++w)
      MPI_Irecv(b.recv.data() + std::size_t(w) * std::size_t(n), n, MPI_BYTE, peer, kDataTag, comm,
                &req[std::size_t(w)]);
    MPI_Waitall(t.window, req.data(), MPI_STATUSES_IGNORE);
    MPI_Send(&ack, 1, MPI_BYTE, peer, kAckTag, comm);
  }
}

// A window each way at once, as osu_bibw.
void bidirectional(const TestSpec& t, std::int64_t bytes, MPI_Comm comm, int peer, bool first,
                   Buffers& b, bool timed, Timings& out) {
  const int n = int(bytes);
  std::vector<MPI_Request> req(2 * std::size_t(t.window), MPI_REQUEST_NULL);
  const double t0 = MPI_Wtime();
  for (int w = 0; w < t.window; ++w)
    MPI_Irecv(b.recv.data() + std::size_t(w) * std::size_t(n), n, MPI_BYTE, peer, kDataTag, comm,
              &req[std::size_t(w)]);
  for (int w = 0; w < t.window; ++w)
    MPI_Isend(b.send.data() + std::size_t(w) * std::size_t(n), n, MPI_BYTE, peer, kDataTag, comm,
              &req[std::size_t(t.window + w)]);
  MPI_Waitall(int(req.size()), req.data(), MPI_STATUSES_IGNORE);
  const double t1 = MPI_Wtime();
  if (first && timed) out.seconds.push_back(t1 - t0);
}

// miniamr's reductions are sums of doubles: the size is rounded down to whole doubles.
double allreduce(std::int64_t bytes, MPI_Comm comm, Buffers& b) {
  const int count = int(std::max<std::int64_t>(1, bytes / 8));
  const double t0 = MPI_Wtime();
  MPI_Allreduce(b.send.data(), b.recv.data(), count, MPI_DOUBLE, MPI_SUM, comm);
  return MPI_Wtime() - t0;
}

// A stage's halo exchange: message j goes to the rank `offset(j)` places on and comes from the
// rank as many places back (offsets +1, -1, +2, -2, ... around the ranks), all posted at once.
// With fewer ranks than messages, partners repeat (one rank sends itself messages).
double neighbour_exchange(const TestSpec& t, std::int64_t bytes, MPI_Comm comm, Buffers& b) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int n = int(bytes);
  std::vector<MPI_Request> req(2 * std::size_t(t.neighbours), MPI_REQUEST_NULL);
  const double t0 = MPI_Wtime();
  for (int j = 0; j < t.neighbours; ++j) {
    const int offset = (j / 2 + 1) * (j % 2 == 0 ? 1 : -1);
    const int from = ((rank - offset) % size + size) % size;
    MPI_Irecv(b.recv.data() + std::size_t(j) * std::size_t(n), n, MPI_BYTE, from, kDataTag + j,
              comm, &req[std::size_t(j)]);
  }
  for (int j = 0; j < t.neighbours; ++j) {
    const int offset = (j / 2 + 1) * (j % 2 == 0 ? 1 : -1);
    const int to = ((rank + offset) % size + size) % size;
    MPI_Isend(b.send.data() + std::size_t(j) * std::size_t(n), n, MPI_BYTE, to, kDataTag + j, comm,
              &req[std::size_t(t.neighbours + j)]);
  }
  MPI_Waitall(int(req.size()), req.data(), MPI_STATUSES_IGNORE);
  return MPI_Wtime() - t0;
}

}  // namespace

int messages_per_rep(const TestSpec& test) {
  switch (test.kind) {
    case TestKind::kStream:
      return test.window;
    case TestKind::kBidirectional:
      return 2 * test.window;
    case TestKind::kNeighbourExchange:
      return test.neighbours;
    default:
      return 1;
  }
}

Buffers::Buffers(const TestSpec& test) {
  const std::size_t per_side =
      std::size_t(test.sizes.max_bytes) * std::size_t(std::max(test.window, test.neighbours));
  // Bytes that are doubles for allreduce: zero bits are 0.0, a sum that stays finite.
  send.assign(std::max<std::size_t>(per_side, 8), 0);
  recv.assign(send.size(), 0);
}

Timings run_pair_test(const TestSpec& test, std::int64_t bytes, MPI_Comm comm, int peer, bool first,
                      Buffers& buffers) {
  Timings out;
  for (int i = 0; i < test.warmup + test.reps; ++i) {
    const bool timed = i >= test.warmup;
    switch (test.kind) {
      case TestKind::kPingPong:
        ping_pong(bytes, comm, peer, first, buffers, timed, out);
        break;
      case TestKind::kStream:
        stream(test, bytes, comm, peer, first, buffers, timed, out);
        break;
      case TestKind::kBidirectional:
        bidirectional(test, bytes, comm, peer, first, buffers, timed, out);
        break;
      default:
        break;
    }
  }
  return out;
}

Timings run_collective_test(const TestSpec& test, std::int64_t bytes, MPI_Comm comm,
                            Buffers& buffers) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::vector<double> mine;
  for (int i = 0; i < test.warmup + test.reps; ++i) {
    // Ranks start together, so that the slowest rank's time is the operation's, not the skew
    // left by the previous repetition.
    MPI_Barrier(comm);
    const double t = test.kind == TestKind::kAllreduce
                         ? allreduce(bytes, comm, buffers)
                         : neighbour_exchange(test, bytes, comm, buffers);
    if (i >= test.warmup) mine.push_back(t);
  }
  Timings out;
  if (rank == 0) out.seconds.resize(mine.size());
  MPI_Reduce(mine.data(), out.seconds.data(), int(mine.size()), MPI_DOUBLE, MPI_MAX, 0, comm);
  return out;
}

}  // namespace miniamr::netbench

// Irregular all-to-some exchange where receivers do not know their senders: synchronous sends,
// probing for arrivals, and a non-blocking barrier entered once every send has been matched
// (Hoefler's NBX). No rank ever scans all P ranks.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include <mpi.h>

#include "comm/mpi.hpp"
#include "comm/notify.hpp"
#include "stencil/pages.hpp"

namespace miniamr::comm {

template <class T>
struct Parcel {
  int rank = 0;
  std::vector<T> items;
};

// Sends outgoing[r] to rank r for every entry and hands each arriving message to
// `on_parcel(Parcel<T>&&)` as it comes in, so a receiver can consume and free it before the next
// (the order of arrival is not fixed). Every rank of `comm` must call it with the same tag.
// Receives into a parcel of `bytes` bytes from `rank`, its pages mapped in one call (migration
// messages run to megabytes).
template <class T>
Parcel<T> parcel_for(int rank, int bytes) {
  Parcel<T> p{rank, {}};
  p.items.reserve(std::size_t(bytes) / sizeof(T));
  stencil::map_pages(p.items.data(), p.items.capacity() * sizeof(T));
  p.items.resize(std::size_t(bytes) / sizeof(T));
  return p;
}

// The same exchange without probing, for SMPI, where a probe is a polling loop and every
// failed poll an event of the simulation: notify() tells each rank who will send to it and how
// much (log P rounds of point-to-point messages carrying only the notices, where a reduce-scatter
// of a 0/1 vector gave the counts alone and kept P integers on every rank), and each receiver
// posts the receives they name.
template <class T, class OnParcel>
void announced_exchange(const Communicator& comm, const std::map<int, std::vector<T>>& outgoing,
                        int tag, OnParcel&& on_parcel, std::span<int> least = {},
                        const std::function<void()>& posted = {}) {
  std::vector<Notice> sends;
  sends.reserve(outgoing.size());
  for (const auto& [rank, items] : outgoing) sends.push_back({rank, int(items.size() * sizeof(T))});
  const std::vector<Notice> arriving = notify(comm, sends, least);
  std::vector<Parcel<T>> parcels;
  parcels.reserve(arriving.size());
  std::vector<MPI_Request> requests;
  requests.reserve(arriving.size() + outgoing.size());
  for (const Notice& n : arriving) {
    parcels.push_back(parcel_for<T>(n.rank, n.bytes));
    requests.emplace_back();
    MPI_Irecv(parcels.back().items.data(), n.bytes, MPI_BYTE, n.rank, tag, comm.get(),
              &requests.back());
  }
  for (const auto& [rank, items] : outgoing) {
    requests.emplace_back();
    MPI_Isend(items.data(), int(items.size() * sizeof(T)), MPI_BYTE, rank, tag, comm.get(),
              &requests.back());
  }
  comm.note(0, std::int64_t(outgoing.size()));
  if (posted) posted();
  MPI_Waitall(int(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  for (auto& p : parcels) on_parcel(std::move(p));
}

// `least` (at most kMaxLeast values, the same count on every rank) comes back as each value's
// least over the ranks: NBX's closing barrier becomes a non-blocking MPI_MIN reduction of them,
// which completes when the barrier would, and notify() carries them on its messages, so a vote
// that every rank needs after the exchange costs no collective of its own. `posted`, when given,
// runs once this rank's messages are on their way and before it takes any: local work that
// overlaps the other ranks' handling of what they receive.
template <class T, class OnParcel>
requires std::invocable<OnParcel&, Parcel<T> &&> void sparse_exchange(
    const Communicator& communicator, const std::map<int, std::vector<T>>& outgoing, int tag,
    OnParcel&& on_parcel, std::span<int> least = {}, const std::function<void()>& posted = {}) {
  static_assert(std::is_trivially_copyable_v<T>);
#ifdef MINIAMR_SIMGRID
  // In SMPI every probe and test of NBX's polling loop is an event of the simulation for each
  // waiting rank, which thousands of simulated ranks cannot afford; there each rank learns
  // which messages to expect first.
  announced_exchange(communicator, outgoing, tag, on_parcel, least, posted);
  return;
#endif
  check_least(least);
  const MPI_Comm comm = communicator.get();
  communicator.note(1, std::int64_t(outgoing.size()));  // the barrier
  std::vector<MPI_Request> sends;
  sends.reserve(outgoing.size());
  for (const auto& [rank, items] : outgoing) {
    sends.emplace_back();
    MPI_Issend(items.data(), int(items.size() * sizeof(T)), MPI_BYTE, rank, tag, comm,
               &sends.back());
  }
  if (posted) posted();
  MPI_Request barrier = MPI_REQUEST_NULL;
  bool in_barrier = false;
  for (;;) {
    int arrived = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, tag, comm, &arrived, &status);
    if (arrived) {
      int bytes = 0;
      MPI_Get_count(&status, MPI_BYTE, &bytes);
      Parcel<T> p = parcel_for<T>(status.MPI_SOURCE, bytes);
      MPI_Recv(p.items.data(), bytes, MPI_BYTE, status.MPI_SOURCE, tag, comm, MPI_STATUS_IGNORE);
      on_parcel(std::move(p));
      continue;
    }
    int done = 0;
    if (!in_barrier) {
      MPI_Testall(int(sends.size()), sends.data(), &done, MPI_STATUSES_IGNORE);
      if (done) {
        if (least.empty())
          MPI_Ibarrier(comm, &barrier);
        else
          MPI_Iallreduce(MPI_IN_PLACE, least.data(), int(least.size()), MPI_INT, MPI_MIN, comm,
                         &barrier);
        in_barrier = true;
      }
    } else {
      MPI_Test(&barrier, &done, MPI_STATUS_IGNORE);
      if (done) break;
    }
  }
}

// The same, returning everything received, ordered by source rank.
template <class T>
std::vector<Parcel<T>> sparse_exchange(const Communicator& comm,
                                       const std::map<int, std::vector<T>>& outgoing, int tag,
                                       std::span<int> least = {}) {
  std::vector<Parcel<T>> received;
  sparse_exchange(
      comm, outgoing, tag, [&](Parcel<T>&& p) { received.push_back(std::move(p)); }, least);
  std::sort(received.begin(), received.end(),
            [](const Parcel<T>& a, const Parcel<T>& b) { return a.rank < b.rank; });
  return received;
}

}  // namespace miniamr::comm

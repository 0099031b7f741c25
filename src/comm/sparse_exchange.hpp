// Irregular all-to-some exchange where receivers do not know their senders: synchronous sends,
// probing for arrivals, and a non-blocking barrier entered once every send has been matched
// (Hoefler's NBX). No rank ever scans all P ranks.
#pragma once

#include <algorithm>
#include <cstddef>
#include <map>
#include <type_traits>
#include <utility>
#include <vector>

#include <mpi.h>

#include "comm/mpi.hpp"
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
// failed poll an event of the simulation. One MPI_Reduce_scatter_block of a 0/1 vector tells
// each rank how many messages it will get (log P steps, O(P) integers per rank, where an
// all-to-all of the sizes costs O(P log P) per rank); each sender then posts the size of its
// message under a second tag before the message itself, and each receiver takes that many
// sizes from any source and posts the receives they name.
template <class T, class OnParcel>
void announced_exchange(MPI_Comm comm, const std::map<int, std::vector<T>>& outgoing, int tag,
                        OnParcel&& on_parcel) {
  constexpr int kSizeTagOffset = 1 << 14;  // message tags stay below it (MPI_TAG_UB >= 32767)
  int size = 0;
  MPI_Comm_size(comm, &size);
  std::vector<int> sends_to(std::size_t(size), 0);
  for (const auto& entry : outgoing) sends_to[std::size_t(entry.first)] = 1;
  int incoming = 0;
  MPI_Reduce_scatter_block(sends_to.data(), &incoming, 1, MPI_INT, MPI_SUM, comm);
  std::vector<int> sent_bytes, arrived_bytes(std::size_t(incoming), 0);
  sent_bytes.reserve(outgoing.size());
  std::vector<MPI_Request> sizes(static_cast<std::size_t>(incoming)), requests;
  for (int i = 0; i < incoming; ++i)
    MPI_Irecv(&arrived_bytes[std::size_t(i)], 1, MPI_INT, MPI_ANY_SOURCE, tag + kSizeTagOffset,
              comm, &sizes[std::size_t(i)]);
  for (const auto& [rank, items] : outgoing) {
    sent_bytes.push_back(int(items.size() * sizeof(T)));
    requests.emplace_back();
    MPI_Isend(&sent_bytes.back(), 1, MPI_INT, rank, tag + kSizeTagOffset, comm, &requests.back());
    requests.emplace_back();
    MPI_Isend(items.data(), sent_bytes.back(), MPI_BYTE, rank, tag, comm, &requests.back());
  }
  std::vector<MPI_Status> senders(static_cast<std::size_t>(incoming));
  MPI_Waitall(incoming, sizes.data(), senders.data());
  std::vector<Parcel<T>> parcels;
  parcels.reserve(std::size_t(incoming));
  for (int i = 0; i < incoming; ++i) {
    const int from = senders[std::size_t(i)].MPI_SOURCE;
    parcels.push_back(parcel_for<T>(from, arrived_bytes[std::size_t(i)]));
    requests.emplace_back();
    MPI_Irecv(parcels.back().items.data(), arrived_bytes[std::size_t(i)], MPI_BYTE, from, tag, comm,
              &requests.back());
  }
  MPI_Waitall(int(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  for (auto& p : parcels) on_parcel(std::move(p));
}

template <class T, class OnParcel>
void sparse_exchange(const Communicator& communicator,
                     const std::map<int, std::vector<T>>& outgoing, int tag, OnParcel&& on_parcel) {
  static_assert(std::is_trivially_copyable_v<T>);
  const MPI_Comm comm = communicator.get();
  // One collective either way: the barrier of NBX, or the count of senders.
  communicator.note(1, std::int64_t(outgoing.size()));
#ifdef MINIAMR_SIMGRID
  // In SMPI every probe and test of NBX's polling loop is an event of the simulation for each
  // waiting rank, which thousands of simulated ranks cannot afford; there each rank learns how
  // many messages to expect and the senders announce their sizes.
  announced_exchange(comm, outgoing, tag, on_parcel);
  return;
#endif
  std::vector<MPI_Request> sends;
  sends.reserve(outgoing.size());
  for (const auto& [rank, items] : outgoing) {
    sends.emplace_back();
    MPI_Issend(items.data(), int(items.size() * sizeof(T)), MPI_BYTE, rank, tag, comm,
               &sends.back());
  }
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
        MPI_Ibarrier(comm, &barrier);
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
                                       const std::map<int, std::vector<T>>& outgoing, int tag) {
  std::vector<Parcel<T>> received;
  sparse_exchange(comm, outgoing, tag, [&](Parcel<T>&& p) { received.push_back(std::move(p)); });
  std::sort(received.begin(), received.end(),
            [](const Parcel<T>& a, const Parcel<T>& b) { return a.rank < b.rank; });
  return received;
}

}  // namespace miniamr::comm

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

#include "stencil/pages.hpp"

namespace miniamr::runtime {

template <class T>
struct Parcel {
  int rank = 0;
  std::vector<T> items;
};

// Sends outgoing[r] to rank r for every entry and hands each arriving message to
// `on_parcel(Parcel<T>&&)` as it comes in, so a receiver can consume and free it before the next
// (the order of arrival is not fixed). Every rank of `comm` must call it with the same tag.
template <class T, class OnParcel>
void sparse_exchange(MPI_Comm comm, const std::map<int, std::vector<T>>& outgoing, int tag,
                     OnParcel&& on_parcel) {
  static_assert(std::is_trivially_copyable_v<T>);
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
      Parcel<T> p{status.MPI_SOURCE, {}};
      // Migration messages run to megabytes: their pages are mapped in one call, not by faults.
      p.items.reserve(std::size_t(bytes) / sizeof(T));
      stencil::map_pages(p.items.data(), p.items.capacity() * sizeof(T));
      p.items.resize(std::size_t(bytes) / sizeof(T));
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
std::vector<Parcel<T>> sparse_exchange(MPI_Comm comm, const std::map<int, std::vector<T>>& outgoing,
                                       int tag) {
  std::vector<Parcel<T>> received;
  sparse_exchange(comm, outgoing, tag, [&](Parcel<T>&& p) { received.push_back(std::move(p)); });
  std::sort(received.begin(), received.end(),
            [](const Parcel<T>& a, const Parcel<T>& b) { return a.rank < b.rank; });
  return received;
}

}  // namespace miniamr::runtime

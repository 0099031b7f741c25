// Which rank owns a block, kept at the block's home rank: puts are local, one collective fence
// sends each record to the home of its key (a function of the key that every rank agrees on,
// such as the rank whose curve range holds it), and gets at the home are local again. No rank
// holds more than the records of its own keys, so a fence costs O(moved blocks / P) per rank
// and one sparse exchange, where publishing every record everywhere would cost O(moved blocks)
// and a P-sized allgather (the distributed directory of p4est-style codes, not the key-value
// space of an MPI launcher).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>
#include <vector>

#include <mpi.h>

#include "comm/mpi.hpp"
#include "octree/key.hpp"

namespace miniamr::mesh {

class OwnershipDirectory {
 public:
  // Which rank keeps the record of a key; the same function on every rank.
  using Home = std::function<int(const octree::Key&)>;

  // `comm` must outlive the directory.
  explicit OwnershipDirectory(const comm::Communicator& comm);

  // Local: records that `key` now belongs to `owner` (a rank of the communicator, else
  // std::out_of_range); sent to its home by the next fence().
  void put(const octree::Key& key, int owner);
  // Collective, the only one (a sparse exchange): every rank's puts since the last fence go to
  // the home of their key (`home` must name a rank of the communicator, else
  // std::out_of_range before any message), then the put list is cleared. A later put of a key
  // overrides an earlier one; within one fence a higher-ranked putter wins, and on one rank the
  // later put.
  void fence(const Home& home);
  // Local: the owner of `key` as of the last fence, if some rank put it and this rank is its
  // home (elsewhere nothing is known of it).
  std::optional<int> get(const octree::Key& key) const;
  // Calls f(key, owner) for every record kept here.
  template <class F>
  void for_each(F&& f) const {
    for (const auto& [key, owner] : owners_) f(key, owner);
  }
  // Records kept here as of the last fence.
  std::size_t size() const { return owners_.size(); }
  // Local: forgets every owner and every unsent put (e.g. after a mesh change, when keys may
  // name other blocks).
  void clear();

 private:
  const comm::Communicator* comm_;
  int size_;
  std::unordered_map<octree::Key, int> owners_;
  std::vector<std::uint32_t> pending_;  // put records (x[0..2], level, owner) in put order
};

}  // namespace miniamr::mesh

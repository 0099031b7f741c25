// Which rank owns a block, known on every rank without asking: puts are local, one collective
// fence publishes them, and gets are local again (the put/fence/get of the key-value spaces of
// MPI launchers such as PMIx). A rank that gives a block away puts its new owner, so a rank
// that later needs the block finds where it went without a broadcast of the whole mesh.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include <mpi.h>

#include "octree/key.hpp"
#include "runtime/mpi.hpp"

namespace miniamr::runtime {

class OwnershipDirectory {
 public:
  // `comm` must outlive the directory.
  explicit OwnershipDirectory(const Communicator& comm);

  // Local: records that `key` now belongs to `owner` (a rank of the communicator, else
  // std::out_of_range); visible to get() only after fence().
  void put(const octree::Key& key, int owner);
  // Collective, the only one: every rank's puts since the last fence become visible everywhere
  // (one MPI_Allgatherv), then the put list is cleared. A later put of a key overrides an
  // earlier one; within one fence a higher-ranked putter wins, and on one rank the later put.
  void fence();
  // Local: the owner of `key` as of the last fence, if some rank put it.
  std::optional<int> get(const octree::Key& key) const;
  // Keys known as of the last fence.
  std::size_t size() const { return owners_.size(); }
  // Local: forgets every owner and every unpublished put (e.g. after a mesh change, when keys
  // may name other blocks).
  void clear();

 private:
  const Communicator* comm_;
  int size_;
  std::unordered_map<octree::Key, int> owners_;
  std::vector<std::uint32_t> pending_;  // put records (x[0..2], level, owner) in put order
};

}  // namespace miniamr::runtime

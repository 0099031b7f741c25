// A rank's view of the global mesh after a change: the P+1 partition boundaries and the ghost
// layer, i.e. the keys (no data) of the remote leaves that touch a local leaf across a face.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "comm/mpi.hpp"
#include "mesh/domain.hpp"
#include "octree/leaf_set.hpp"
#include "sfc/partition.hpp"

namespace miniamr::mesh {

struct Neighbourhood {
  sfc::Partition partition;
  octree::LeafSet all;                   // local and ghost leaves, sorted
  std::vector<int> owner;                // owner rank of all[i]
  std::vector<std::size_t> local_index;  // index into domain.leaves when owner[i] is this rank
  std::size_t locals = 0;                // this rank's leaves (domain.leaves.size())
  octree::RootGrid grid;                 // the root grid the keys lie on
  int rank = 0;
  // Whether a family that may coarsen is split between ranks, as far as each rank sees (the
  // same on every rank): some rank holds leaves of one level of a family that begins on an
  // earlier rank, and no others of it. Without one, no family needs gathering.
  bool families_split = true;
  bool is_local(std::size_t i) const { return owner[i] == rank; }
};

// The partition from every rank's first curve position (one allgather of a position per rank).
// With no leaf deeper than `deepest`, positions travel and stay in 8 bytes instead of 16 where
// the root grid allows (sfc::Partition::from_coarse_firsts).
sfc::Partition exchange_partition(const Domain& domain, const sfc::CurveSpace& space,
                                  const comm::Communicator& comm, int deepest = octree::kMaxLevel);
// The first curve position of `keys` (sfc::Partition::kNoLeaf when there is none): a rank's part
// of that exchange. Throws std::logic_error for a key deeper than `deepest`.
sfc::Position first_position_of(std::span<const octree::Key> keys, const sfc::CurveSpace& space,
                                int deepest);
// The same exchange from each rank's first position, `mine`.
sfc::Partition exchange_partition(sfc::Position mine, const octree::RootGrid& grid,
                                  const sfc::CurveSpace& space, const comm::Communicator& comm,
                                  int deepest);

// Collective. Each rank sends the keys of its leaves on a rank boundary to the ranks that may
// own leaves across those faces or of their families; what arrives is the ghost layer.
Neighbourhood build_neighbourhood(const Domain& domain, const sfc::CurveSpace& space,
                                  const comm::Communicator& comm);
// The same over a partition already known to be this mesh's (every rank passes the same).
// `least`: values that ride on the exchange to their least over the ranks (comm::sparse_exchange),
// at most kMaxLeast - 1 of them (families_split takes the last).
Neighbourhood build_neighbourhood(const Domain& domain, sfc::Partition partition,
                                  const comm::Communicator& comm, std::span<int> least = {});

}  // namespace miniamr::mesh

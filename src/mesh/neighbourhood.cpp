#include "mesh/neighbourhood.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "comm/sparse_exchange.hpp"

namespace miniamr::mesh {

namespace {
constexpr int kGhostKeysTag = 101;
}  // namespace

sfc::Position first_position_of(std::span<const octree::Key> keys, const sfc::CurveSpace& space,
                                int deepest) {
  sfc::Position first = sfc::Partition::kNoLeaf;
  for (const octree::Key& k : keys) {
    if (k.level > deepest) throw std::logic_error("a leaf is deeper than the mesh's deepest level");
    first = std::min(first, sfc::first_position(k, space));
  }
  return first;
}

sfc::Partition exchange_partition(sfc::Position mine, const octree::RootGrid& grid,
                                  const sfc::CurveSpace& space, const comm::Communicator& comm,
                                  int deepest) {
  // Only the positions travel, an empty rank's as kNoLeaf: a P-sized array on every rank, and
  // in the collective, is all the memory the partition's exchange takes. Every rank decides
  // alike, from the root grid and the deepest level.
  if (sfc::Partition::coarse_fits(sfc::root_bits(grid), deepest)) {
    const std::uint64_t coarse = sfc::Partition::coarse_first(mine, deepest);
    std::vector<std::uint64_t> firsts(std::size_t(comm.size()));
    comm.allgather_bytes(&coarse, sizeof coarse, firsts.data());
    return sfc::Partition::from_coarse_firsts(space, deepest, std::move(firsts));
  }
  std::vector<sfc::Position> firsts(std::size_t(comm.size()));
  comm.allgather_bytes(&mine, sizeof mine, firsts.data());
  return sfc::Partition::from_firsts(space, std::move(firsts));
}

sfc::Partition exchange_partition(const Domain& domain, const sfc::CurveSpace& space,
                                  const comm::Communicator& comm, int deepest) {
  return exchange_partition(first_position_of(domain.leaves.keys(), space, deepest), domain.grid,
                            space, comm, deepest);
}

Neighbourhood build_neighbourhood(const Domain& domain, const sfc::CurveSpace& space,
                                  const comm::Communicator& comm) {
  return build_neighbourhood(domain, exchange_partition(domain, space, comm), comm);
}

Neighbourhood build_neighbourhood(const Domain& domain, sfc::Partition partition,
                                  const comm::Communicator& comm, std::span<int> least) {
  Neighbourhood nb;
  nb.rank = comm.rank();
  nb.partition = std::move(partition);
  nb.locals = domain.leaves.size();
  nb.grid = domain.grid;

  std::map<int, std::vector<octree::Key>> outgoing;
  // Returns the first rank that may hold leaves of `region`.
  const auto send_to_owners = [&](const octree::Key& k, const octree::Key& region) {
    const auto [lo, hi] = nb.partition.owners(region);
    for (int r = lo; r <= hi; ++r) {
      if (r == comm.rank()) continue;
      auto& list = outgoing[r];
      if (list.empty() || !(list.back() == k)) list.push_back(k);  // once per leaf and rank
    }
    return lo;
  };
  // Whether this rank holds part of a family that begins on an earlier rank and, here, is
  // leaves of one level (one that may coarsen once it comes together).
  bool split_family = false;
  const octree::LeafSet& leaves = domain.leaves;
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    const octree::Key& k = leaves[i];
    for (const octree::Face f : octree::kFaces)
      if (const auto n = octree::face_neighbour(k, f, domain.grid)) send_to_owners(k, *n);
    // The ranks holding the rest of its family too: the refinement consensus tells them when
    // a sibling cannot coarsen.
    if (k.level == 0) continue;
    const octree::Key family = octree::parent(k);
    if (send_to_owners(k, family) < comm.rank() && !split_family) {
      const auto [first, last] = leaves.range_within(family, i);
      split_family = std::all_of(leaves.keys().begin() + std::ptrdiff_t(first),
                                 leaves.keys().begin() + std::ptrdiff_t(last),
                                 [&](const octree::Key& l) { return l.level == k.level; });
    }
  }
  // Whether any rank has such a family rides on the exchange after the caller's values (the
  // exchange checks that they are few enough).
  std::vector<int> votes(least.begin(), least.end());
  votes.push_back(split_family ? 0 : 1);
  const auto parcels = sparse_exchange(comm, outgoing, kGhostKeysTag, votes);
  std::copy_n(votes.begin(), least.size(), least.begin());
  nb.families_split = votes.back() == 0;

  struct Entry {
    octree::Key key;
    int owner;
    std::size_t local;
  };
  std::vector<Entry> entries;
  for (std::size_t i = 0; i < domain.leaves.size(); ++i)
    entries.push_back({domain.leaves[i], comm.rank(), i});
  for (const auto& p : parcels)
    for (const octree::Key& k : p.items) entries.push_back({k, p.rank, 0});
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return octree::morton_less(a.key, b.key); });
  std::vector<octree::Key> keys;
  keys.reserve(entries.size());
  for (const Entry& e : entries) {
    keys.push_back(e.key);
    nb.owner.push_back(e.owner);
    nb.local_index.push_back(e.local);
  }
  nb.all = octree::LeafSet(std::move(keys));
  return nb;
}

}  // namespace miniamr::mesh

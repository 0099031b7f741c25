#include "runtime/migrate.hpp"

#include <algorithm>
#include <climits>
#include <map>
#include <stdexcept>

#include "runtime/sparse_exchange.hpp"

namespace miniamr::runtime {

namespace {

constexpr int kHeaderTag = 103;
constexpr int kBlockTag = 104;

// What a receiver learns of each block before its storage arrives.
struct BlockHeader {
  octree::Key key;
  double cost = 0.0;
  std::int8_t mark = 0;
};

}  // namespace

// Ghosts travel too: edge and corner ghosts next to a level change are not refilled every stage
// (as in the reference), so a block must carry them to compute the same on any rank.
std::size_t migrated_block_bytes(const stencil::BlockShape& s) {
  return sizeof(BlockHeader) + s.doubles() * sizeof(double);
}

// The headers go first, through the sparse exchange (a receiver does not know its senders).
// Then each block's storage travels as one message straight from the sender's block into a
// block of the receiver's, in header order (MPI keeps the order of messages between two ranks
// with one tag): nothing is packed or unpacked, and no staging buffer has pages to map, which
// cost more than the transfer itself (a page fault per 4 KiB, three times per block).
std::int64_t migrate(Domain& domain, std::span<const int> targets, const Communicator& comm,
                     std::vector<std::int8_t>* marks) {
  struct Entry {
    octree::Key key;
    double cost;
    stencil::Block block;
    std::int8_t mark;
  };
  const std::size_t doubles = domain.shape.doubles();
  if (doubles > std::size_t(INT_MAX))
    throw std::runtime_error("a block is too large to migrate in one message");
  const int count = int(doubles);
  const auto mark_of = [&](std::size_t i) -> std::int8_t { return marks ? (*marks)[i] : 0; };

  std::vector<Entry> entries;
  std::map<int, std::vector<BlockHeader>> headers;  // per destination, in curve order
  std::vector<std::size_t> leaving;
  std::vector<MPI_Request> requests;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    if (targets[i] == comm.rank()) {
      entries.push_back(
          {domain.leaves[i], domain.cost[i], std::move(domain.blocks[i]), mark_of(i)});
      continue;
    }
    headers[targets[i]].push_back({domain.leaves[i], domain.cost[i], mark_of(i)});
    leaving.push_back(i);
    requests.emplace_back();
    comm.note(0, 1);
    MPI_Isend(domain.blocks[i].data(), count, MPI_DOUBLE, targets[i], kBlockTag, comm.get(),
              &requests.back());
  }
  sparse_exchange(comm, headers, kHeaderTag, [&](Parcel<BlockHeader>&& p) {
    for (const BlockHeader& h : p.items) {
      entries.push_back({h.key, h.cost, domain.spare.take(domain.shape), h.mark});
      requests.emplace_back();
      MPI_Irecv(entries.back().block.data(), count, MPI_DOUBLE, p.rank, kBlockTag, comm.get(),
                &requests.back());
    }
  });
  MPI_Waitall(int(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  for (const std::size_t i : leaving) domain.spare.give(domain.blocks[i]);

  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return octree::morton_less(a.key, b.key); });
  std::vector<octree::Key> keys;
  domain.blocks.clear();
  domain.cost.clear();
  if (marks) marks->clear();
  for (Entry& e : entries) {
    if (marks) marks->push_back(e.mark);
    keys.push_back(e.key);
    domain.cost.push_back(e.cost);
    domain.blocks.push_back(std::move(e.block));
  }
  domain.leaves = octree::LeafSet(std::move(keys));
  return std::int64_t(leaving.size());
}

}  // namespace miniamr::runtime

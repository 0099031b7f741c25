#include "mesh/migrate.hpp"

#include <algorithm>
#include <climits>
#include <map>
#include <stdexcept>

#include "comm/shared_storage.hpp"
#include "comm/sparse_exchange.hpp"

namespace miniamr::mesh {

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

namespace {

// A derived datatype naming blocks' storage at their addresses, freed on destruction (a message
// that uses it keeps what it needs after the free).
using BlockList = comm::MpiHandle<MPI_Datatype, MPI_Type_free>;

BlockList block_list(std::span<double* const> data, int doubles) {
  return BlockList([&](MPI_Datatype* type) {
    std::vector<MPI_Aint> at(data.size());
    for (std::size_t b = 0; b < data.size(); ++b) MPI_Get_address(data[b], &at[b]);
    MPI_Type_create_hindexed_block(int(data.size()), doubles, at.data(), MPI_DOUBLE, type);
    MPI_Type_commit(type);
  });
}

// Posts the storage of `data`'s blocks to or from `peer` as few messages as the size limit
// allows; sender and receiver cut the same list the same way, and MPI keeps the order of
// messages between two ranks with one tag. With `unread` (blocks whose values nobody reads)
// each message carries as many bytes from a shared buffer of its own, kept there.
void post_blocks(std::span<double* const> data, int doubles, std::size_t message_bytes, int peer,
                 bool send, const comm::Communicator& comm, std::vector<MPI_Request>& requests,
                 std::vector<comm::UnreadBytes>* unread) {
  const std::size_t per_message = std::clamp<std::size_t>(
      message_bytes / (std::size_t(doubles) * sizeof(double)), 1, std::size_t(INT_MAX));
  const auto post = [&](void* at, int n, MPI_Datatype type) {
    requests.emplace_back();
    if (send) {
      comm.note(0, 1);
      MPI_Isend(at, n, type, peer, kBlockTag, comm.get(), &requests.back());
    } else {
      MPI_Irecv(at, n, type, peer, kBlockTag, comm.get(), &requests.back());
    }
  };
  for (std::size_t first = 0; first < data.size(); first += per_message) {
    const std::size_t blocks = std::min(per_message, data.size() - first);
    if (unread != nullptr) {
      const int n = int(blocks) * doubles;
      post(unread->emplace_back(std::size_t(n) * sizeof(double)).data(), n, MPI_DOUBLE);
    } else {
      const BlockList list = block_list(data.subspan(first, blocks), doubles);
      post(MPI_BOTTOM, 1, list.get());
    }
  }
}

}  // namespace

// The headers go first, through the sparse exchange (a receiver does not know its senders).
// Then the blocks' storage travels straight from the sender's blocks into blocks of the
// receiver's, in header order, one message per peer (a datatype lists the blocks): nothing is
// packed or unpacked by us and no staging buffer has pages to map, which cost more than the
// transfer itself (a page fault per 4 KiB, three times per block). Posting the sends only once
// the headers are through keeps them from queueing ahead of the headers as unexpected
// messages (with the probing exchange), and one message per peer instead of one per block
// saves a rendezvous per block (together about half the migration time of a moving sphere on
// two ranks). SMPI copies a derived datatype's message through a buffer of its own, which a
// simulation of thousands of ranks cannot afford on each: there, blocks whose storage the ranks
// share (priced kernels, shared_storage.hpp) send and receive their bytes through buffers
// shared too, and no value moves.
std::int64_t migrate(Domain& domain, std::span<const int> targets, const comm::Communicator& comm,
                     std::vector<std::int8_t>* marks, std::size_t message_bytes,
                     std::span<int> least, const std::function<void()>& headers_posted,
                     const StoragePosted& storage_posted) {
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

  std::map<int, std::vector<BlockHeader>> headers;  // per destination, in curve order
  std::map<int, std::vector<double*>> leaving;      // their storage, in the same order
  for (std::size_t i = 0; i < targets.size(); ++i) {
    if (targets[i] == comm.rank()) continue;
    headers[targets[i]].push_back({domain.leaves[i], domain.cost[i], mark_of(i)});
    leaving[targets[i]].push_back(domain.blocks[i].data());
  }
  std::vector<comm::UnreadBytes> unread;
  std::vector<comm::UnreadBytes>* const through = domain.spare.values_unread() ? &unread : nullptr;
  std::vector<MPI_Request> requests;
  // The arrivals, each sender's run in the order of its leaves, and where each run ends.
  std::vector<Entry> arrived;
  std::vector<std::size_t> run_ends{0};
  sparse_exchange(
      comm, headers, kHeaderTag,
      [&](comm::Parcel<BlockHeader>&& p) {
        std::vector<double*> arriving;
        for (const BlockHeader& h : p.items) {
          arrived.push_back({h.key, h.cost, domain.spare.take(domain.shape), h.mark});
          arriving.push_back(arrived.back().block.data());
        }
        run_ends.push_back(arrived.size());
        post_blocks(arriving, count, message_bytes, p.rank, /*send=*/false, comm, requests,
                    through);
      },
      least, headers_posted);
  std::int64_t sent = 0;
  for (const auto& [to, data] : leaving) {
    post_blocks(data, count, message_bytes, to, /*send=*/true, comm, requests, through);
    sent += std::int64_t(data.size());
  }
  if (storage_posted) {
    std::vector<octree::Key> arriving(arrived.size());
    for (std::size_t i = 0; i < arrived.size(); ++i) arriving[i] = arrived[i].key;
    storage_posted(arriving);
  }
  MPI_Waitall(int(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  // An exchange that only carried votes leaves this rank's blocks where they are.
  if (sent == 0 && arrived.empty()) return 0;

  // The blocks kept are in the order of the leaves, and each sender's in the order of its own
  // (headers are listed by ascending leaf): merging those runs is cheaper than sorting them all.
  std::vector<Entry> entries;
  entries.reserve(targets.size() - std::size_t(sent) + arrived.size());
  for (std::size_t i = 0; i < targets.size(); ++i) {
    if (targets[i] == comm.rank())
      entries.push_back(
          {domain.leaves[i], domain.cost[i], std::move(domain.blocks[i]), mark_of(i)});
    else
      domain.spare.give(domain.blocks[i]);
  }
  const std::size_t kept = entries.size();
  for (Entry& e : arrived) entries.push_back(std::move(e));
  const auto less = [](const Entry& a, const Entry& b) {
    return octree::morton_less(a.key, b.key);
  };
  for (std::size_t r = 1; r < run_ends.size(); ++r)
    std::inplace_merge(entries.begin(), entries.begin() + std::ptrdiff_t(kept + run_ends[r - 1]),
                       entries.begin() + std::ptrdiff_t(kept + run_ends[r]), less);
  // Blocks must sort with their keys: a run out of order (none is) costs a sort, not the data.
  if (!std::is_sorted(entries.begin(), entries.end(), less))
    std::sort(entries.begin(), entries.end(), less);
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
  return sent;
}

}  // namespace miniamr::mesh

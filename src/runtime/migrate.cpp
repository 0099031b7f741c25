#include "runtime/migrate.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>

#include "runtime/sparse_exchange.hpp"
#include "stencil/pages.hpp"

namespace miniamr::runtime {

namespace {

constexpr int kMigrateTag = 103;
constexpr std::size_t kHeader = 32;  // key (16 bytes, padded) + cost (8) + spare
constexpr std::size_t kChunkBytes = std::size_t{16} << 20;  // per destination and round

}  // namespace

// Ghosts travel too: edge and corner ghosts next to a level change are not refilled every stage
// (as in the reference), so a block must carry them to compute the same on any rank.
std::size_t packed_block_bytes(const stencil::BlockShape& s) {
  return kHeader + s.cells() * std::size_t(s.num_vars) * sizeof(double);
}

void pack_block(const octree::Key& key, double cost, const stencil::Block& block, std::byte* out) {
  static_assert(sizeof(octree::Key) <= 16);
  std::memset(out, 0, kHeader);
  std::memcpy(out, &key, sizeof key);
  std::memcpy(out + 16, &cost, sizeof cost);
  std::byte* p = out + kHeader;
  const std::size_t var_bytes = block.shape().cells() * sizeof(double);
  for (int v = 0; v < block.shape().num_vars; ++v, p += var_bytes)
    std::memcpy(p, block.var(v).data(), var_bytes);
}

void unpack_block(const std::byte* in, octree::Key& key, double& cost, stencil::Block& block) {
  std::memcpy(&key, in, sizeof key);
  std::memcpy(&cost, in + 16, sizeof cost);
  const std::byte* p = in + kHeader;
  const stencil::BlockShape& s = block.shape();
  const std::size_t var_bytes = s.cells() * sizeof(double);
  for (int v = 0; v < s.num_vars; ++v, p += var_bytes) {
    std::memcpy(block.var(v).data(), p, var_bytes);
    // The padding to the next variable is not sent; recycled storage may hold anything there.
    double* const cells = block.data() + std::size_t(v) * s.var_stride();
    std::fill(cells + s.cells(), cells + s.var_stride(), 0.0);
  }
}

std::int64_t migrate(Domain& domain, std::span<const int> targets, const Communicator& comm) {
  const std::size_t bytes = packed_block_bytes(domain.shape);
  struct Entry {
    octree::Key key;
    double cost;
    stencil::Block block;
  };
  std::vector<Entry> entries;
  std::map<int, std::vector<std::size_t>> leaving;  // per destination, in curve order
  for (std::size_t i = 0; i < targets.size(); ++i) {
    if (targets[i] == comm.rank()) {
      entries.push_back({domain.leaves[i], domain.cost[i], std::move(domain.blocks[i])});
    } else {
      leaving[targets[i]].push_back(i);
    }
  }
  // Rounds of at most kChunkBytes per destination: a block is packed (and its storage kept for
  // arrivals) only in its round, and each message becomes blocks as it arrives, so at the peak
  // a rank holds its blocks plus one chunk going out and one coming in.
  const std::size_t per_round = std::max<std::size_t>(1, kChunkBytes / bytes);
  std::int64_t sent = 0;
  std::size_t round = 0;
  for (bool more = true; comm.any(more); ++round) {
    std::map<int, std::vector<std::byte>> outgoing;
    more = false;
    for (const auto& [rank, blocks] : leaving) {
      const std::size_t first = round * per_round;
      if (first >= blocks.size()) continue;
      const std::size_t last = std::min(blocks.size(), first + per_round);
      auto& buf = outgoing[rank];
      buf.reserve((last - first) * bytes);
      stencil::map_pages(buf.data(), buf.capacity());  // written in full twice: zeroed, packed
      buf.resize((last - first) * bytes);
      for (std::size_t k = first; k < last; ++k) {
        const std::size_t i = blocks[k];
        pack_block(domain.leaves[i], domain.cost[i], domain.blocks[i],
                   buf.data() + (k - first) * bytes);
        domain.spare.give(domain.blocks[i]);
        ++sent;
      }
      more = more || last < blocks.size();
    }
    sparse_exchange(comm.get(), outgoing, kMigrateTag, [&](Parcel<std::byte>&& p) {
      for (std::size_t off = 0; off < p.items.size(); off += bytes) {
        // unpack_block writes every cell, so recycled storage needs no clearing.
        Entry e{{}, 0.0, domain.spare.take(domain.shape)};
        unpack_block(p.items.data() + off, e.key, e.cost, e.block);
        entries.push_back(std::move(e));
      }
    });
  }
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return octree::morton_less(a.key, b.key); });
  std::vector<octree::Key> keys;
  domain.blocks.clear();
  domain.cost.clear();
  for (Entry& e : entries) {
    keys.push_back(e.key);
    domain.cost.push_back(e.cost);
    domain.blocks.push_back(std::move(e.block));
  }
  domain.leaves = octree::LeafSet(std::move(keys));
  return sent;
}

}  // namespace miniamr::runtime

// Moving whole blocks (key, cost and every variable's cells) between ranks.
#pragma once

#include <cstdint>
#include <span>

#include "runtime/domain.hpp"
#include "runtime/mpi.hpp"

namespace miniamr::runtime {

// Collective. Sends every local block i to targets[i] (when that is another rank) and merges
// what arrives, keeping the leaves sorted. Returns the number of blocks this rank sent.
std::int64_t migrate(Domain& domain, std::span<const int> targets, const Communicator& comm);

// The wire format of one block, exposed for tests: key, cost, then every cell of each variable,
// ghosts included.
std::size_t packed_block_bytes(const stencil::BlockShape& shape);
void pack_block(const octree::Key& key, double cost, const stencil::Block& block, std::byte* out);
void unpack_block(const std::byte* in, octree::Key& key, double& cost, stencil::Block& block);

}  // namespace miniamr::runtime

// Moving whole blocks (key, cost and every variable's cells) between ranks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "comm/mpi.hpp"
#include "mesh/domain.hpp"

namespace miniamr::mesh {

// The most bytes of blocks in one migration message.
inline constexpr std::size_t kMigrationMessageBytes = std::size_t{1} << 28;

// Collective. Sends every local block i to targets[i] (when that is another rank) and merges
// what arrives, keeping the leaves sorted. With `marks` (one refinement mark per local leaf),
// each leaf's mark travels with it and `marks` ends up matching the new leaves. Returns the
// number of blocks this rank sent. The blocks for one peer travel in messages of at most
// `message_bytes` (at least one block each). `least`: values that ride on the headers' exchange
// to their least over the ranks (comm::sparse_exchange). A rank that neither sends nor receives
// a block leaves `domain` and `marks` as they are. `headers_posted`, when given, runs once this
// rank's headers are on their way and before its blocks' storage is read: work on the values of
// blocks that leave (merging the families that leave) then overlaps the receivers' taking
// storage for them. `storage_posted`, when given, runs once every block's storage is on its
// way, with the keys of the blocks that arrive (in no particular order), before this rank waits
// for it: collective work that needs only the new leaves (the partition's exchange) then
// overlaps the transfer.
using StoragePosted = std::function<void(std::span<const octree::Key> arriving)>;
std::int64_t migrate(Domain& domain, std::span<const int> targets, const comm::Communicator& comm,
                     std::vector<std::int8_t>* marks = nullptr,
                     std::size_t message_bytes = kMigrationMessageBytes, std::span<int> least = {},
                     const std::function<void()>& headers_posted = {},
                     const StoragePosted& storage_posted = {});

// Bytes that travel per block (its whole storage and a header), for cost models.
std::size_t migrated_block_bytes(const stencil::BlockShape& shape);

}  // namespace miniamr::mesh

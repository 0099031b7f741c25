#include "runtime/ownership_directory.hpp"

#include <climits>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace miniamr::runtime {

namespace {

// A put record on the wire: x[0..2], level, owner. Words rather than the Key's bytes, so no
// padding (uninitialised, and layout-dependent) is ever sent.
constexpr std::size_t kWords = 5;

}  // namespace

OwnershipDirectory::OwnershipDirectory(const Communicator& comm)
    : comm_(&comm), size_(comm.size()) {}

void OwnershipDirectory::put(const octree::Key& key, int owner) {
  if (owner < 0 || owner >= size_)
    throw std::out_of_range("OwnershipDirectory: owner " + std::to_string(owner) +
                            " is not a rank of the communicator");
  pending_.insert(pending_.end(),
                  {key.x[0], key.x[1], key.x[2], static_cast<std::uint32_t>(key.level),
                   static_cast<std::uint32_t>(owner)});
}

void OwnershipDirectory::fence() {
  // 64-bit counts, so that every rank sees an oversized fence and throws alike rather than one
  // rank throwing and leaving the others in the collective.
  std::int64_t mine64 = static_cast<std::int64_t>(pending_.size());
  std::vector<std::int64_t> counts64(static_cast<std::size_t>(size_));
  comm_->note(2);
  MPI_Allgather(&mine64, 1, MPI_INT64_T, counts64.data(), 1, MPI_INT64_T, comm_->get());
  std::vector<int> counts(counts64.size()), displs(counts64.size(), 0);
  std::int64_t total = 0;
  for (std::size_t r = 0; r < counts64.size(); ++r) {
    displs[r] = static_cast<int>(total);
    total += counts64[r];
    if (total > INT_MAX) throw std::length_error("OwnershipDirectory: too many puts for one fence");
    counts[r] = static_cast<int>(counts64[r]);
  }
  const int mine = static_cast<int>(mine64);
  std::vector<std::uint32_t> all(static_cast<std::size_t>(total));
  MPI_Allgatherv(pending_.data(), mine, MPI_UINT32_T, all.data(), counts.data(), displs.data(),
                 MPI_UINT32_T, comm_->get());
  // Rank order, then put order: the last record applied wins, which makes the higher-ranked
  // putter win on every rank alike.
  for (std::size_t i = 0; i + kWords <= all.size(); i += kWords) {
    octree::Key key;
    key.x = {all[i], all[i + 1], all[i + 2]};
    key.level = static_cast<std::int8_t>(all[i + 3]);
    owners_[key] = static_cast<int>(all[i + 4]);
  }
  pending_.clear();
}

std::optional<int> OwnershipDirectory::get(const octree::Key& key) const {
  auto it = owners_.find(key);
  if (it == owners_.end()) return std::nullopt;
  return it->second;
}

void OwnershipDirectory::clear() {
  owners_.clear();
  pending_.clear();
}

}  // namespace miniamr::runtime

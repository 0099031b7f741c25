#include "mesh/ownership_directory.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "comm/sparse_exchange.hpp"

namespace miniamr::mesh {

namespace {

// A put record on the wire: x[0..2], level, owner. Words rather than the Key's bytes, so no
// padding (uninitialised, and layout-dependent) is ever sent.
constexpr std::size_t kWords = 5;
constexpr int kRecordsTag = 106;  // apart from the other exchanges' tags (101-105)

octree::Key key_at(std::span<const std::uint32_t> r) {
  octree::Key key;
  key.x = {r[0], r[1], r[2]};
  key.level = static_cast<std::int8_t>(r[3]);
  return key;
}

}  // namespace

OwnershipDirectory::OwnershipDirectory(const comm::Communicator& comm)
    : comm_(&comm), size_(comm.size()) {}

void OwnershipDirectory::put(const octree::Key& key, int owner) {
  if (owner < 0 || owner >= size_)
    throw std::out_of_range("OwnershipDirectory: owner " + std::to_string(owner) +
                            " is not a rank of the communicator");
  pending_.insert(pending_.end(),
                  {key.x[0], key.x[1], key.x[2], static_cast<std::uint32_t>(key.level),
                   static_cast<std::uint32_t>(owner)});
}

void OwnershipDirectory::fence(const Home& home) {
  // A home outside the communicator is a programming error: it throws before anything is sent.
  std::map<int, std::vector<std::uint32_t>> outgoing;
  std::vector<std::uint32_t> own;
  for (std::size_t i = 0; i + kWords <= pending_.size(); i += kWords) {
    const std::span<const std::uint32_t> record(pending_.data() + i, kWords);
    const int h = home(key_at(record));
    if (h < 0 || h >= size_)
      throw std::out_of_range("OwnershipDirectory: home " + std::to_string(h) +
                              " is not a rank of the communicator");
    auto& list = h == comm_->rank() ? own : outgoing[h];
    list.insert(list.end(), record.begin(), record.end());
  }
  pending_.clear();
  auto parcels = sparse_exchange(*comm_, outgoing, kRecordsTag);
  // Rank order, then put order: the last record applied wins, which makes the higher-ranked
  // putter win alike wherever the records of a key meet (its home).
  auto at =
      std::ranges::lower_bound(parcels, comm_->rank(), {}, &comm::Parcel<std::uint32_t>::rank);
  parcels.insert(at, comm::Parcel<std::uint32_t>{comm_->rank(), std::move(own)});
  for (const auto& p : parcels)
    for (std::size_t i = 0; i + kWords <= p.items.size(); i += kWords)
      owners_[key_at(std::span(p.items).subspan(i, kWords))] = static_cast<int>(p.items[i + 4]);
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

}  // namespace miniamr::mesh

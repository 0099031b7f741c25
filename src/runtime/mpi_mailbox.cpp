#include "runtime/mpi_mailbox.hpp"

#include "runtime/sparse_exchange.hpp"

namespace miniamr::runtime {

namespace {
constexpr int kMarksTag = 102;
}  // namespace

bool MpiMailbox::is_local(const octree::Key& region) const {
  if (comm_.size() == 1) return true;
  const auto [lo, hi] = partition_.owners(region);
  return lo == comm_.rank() && hi == comm_.rank();
}

void MpiMailbox::post(const octree::Key& region, const octree::MarkChange& change) {
  const auto [lo, hi] = partition_.owners(region);
  for (int r = lo; r <= hi; ++r) {
    if (r == comm_.rank()) continue;
    auto& box = outbox_[r];
    // A leaf's change is posted once per face and once for its family; send it once.
    if (!box.empty() && box.back().key == change.key && box.back().mark == change.mark) continue;
    box.push_back(change);
  }
}

std::vector<octree::MarkChange> MpiMailbox::exchange() {
  if (comm_.size() == 1) return {};
  const auto parcels = sparse_exchange(comm_.get(), outbox_, kMarksTag);
  outbox_.clear();
  std::vector<octree::MarkChange> in;
  for (const auto& p : parcels) in.insert(in.end(), p.items.begin(), p.items.end());
  return in;
}

}  // namespace miniamr::runtime

// The refinement consensus across ranks: changes are aggregated per destination rank, sent
// with one sparse exchange per round, and termination is one global OR per round.
#pragma once

#include <map>
#include <vector>

#include "octree/refine.hpp"
#include "runtime/mpi.hpp"
#include "sfc/partition.hpp"

namespace miniamr::runtime {

class MpiMailbox final : public octree::MarkMailbox {
 public:
  explicit MpiMailbox(const Communicator& comm) : comm_(comm) {}
  // Must be called after every change of the partition.
  void set_partition(const sfc::Partition& p) { partition_ = p; }

  void post(const octree::Key& region, const octree::MarkChange& change) override;
  std::vector<octree::MarkChange> exchange() override;
  bool any(bool local) override { return comm_.any(local); }
  bool is_local(const octree::Key& region) const override;

 private:
  const Communicator& comm_;
  sfc::Partition partition_;
  std::map<int, std::vector<octree::MarkChange>> outbox_;
};

}  // namespace miniamr::runtime

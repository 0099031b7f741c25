// The "plain MPI ranks" back end: each rank owns a range of the Morton curve and advances its
// blocks in bulk-synchronous stages.
#pragma once

#include <vector>

#include "runtime/ghost_plan.hpp"
#include "runtime/runtime.hpp"

namespace miniamr::runtime {

class StaticRuntime final : public Runtime {
 public:
  explicit StaticRuntime(MPI_Comm parent = MPI_COMM_WORLD);

  const Communicator& comm() const override { return comm_; }
  Timers& timers() override { return timers_; }
  void mesh_changed(const Domain& domain) override;
  void advance(Domain& domain, const StageWork& work, std::span<stencil::ExactSum> sums) override;
  octree::MarkMailbox& mailbox() override { return mailbox_; }
  std::string name() const override { return "static"; }

 private:
  void fill_ghosts(Domain& domain, const StageWork& work);
  void sweep(Domain& domain, const StageWork& work, std::span<stencil::ExactSum> sums);

  Communicator comm_;
  Timers timers_;
  octree::LocalMailbox mailbox_;
  GhostPlan plan_;
  std::vector<double> scratch_;
};

}  // namespace miniamr::runtime

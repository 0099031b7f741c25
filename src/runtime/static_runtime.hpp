// The "plain MPI ranks" back end: each rank owns a contiguous range of the Morton curve and
// advances its blocks in bulk-synchronous stages, overlapping halo messages with the blocks
// that need none.
#pragma once

#include <vector>

#include "runtime/ghost_plan.hpp"
#include "runtime/mpi_mailbox.hpp"
#include "runtime/neighbourhood.hpp"
#include "runtime/runtime.hpp"
#include "sfc/curve.hpp"

namespace miniamr::runtime {

struct StaticOptions {
  bool blocking_send = false;  // MPI_Send instead of MPI_Isend (receives posted first)
  sfc::Curve ownership = sfc::Curve::kMorton;  // the curve whose ranges ranks own
};

class StaticRuntime final : public Runtime {
 public:
  explicit StaticRuntime(MPI_Comm parent = MPI_COMM_WORLD, StaticOptions options = {});

  const Communicator& comm() const override { return comm_; }
  Timers& timers() override { return timers_; }
  void mesh_changed(const Domain& domain) override;
  void advance(Domain& domain, const StageWork& work, std::span<stencil::ExactSum> sums) override;
  octree::MarkMailbox& mailbox() override { return mailbox_; }
  std::int64_t rebalance(Domain& domain, std::span<const std::int64_t> weights) override;
  std::int64_t gather_families(Domain& domain) override;
  std::vector<octree::Key> initial_roots(const octree::RootGrid& grid) const override;
  CommPartners comm_partners() const override;
  std::string name() const override { return "static"; }

 private:
  // Ghost fill of `work.vars` over the faces of `axes`; with `overlap`, blocks that need no
  // remote ghost are swept while the messages are in flight and the rest after.
  void exchange(Domain& domain, const StageWork& work, std::span<const int> axes, bool overlap,
                std::span<stencil::ExactSum> sums);
  void sweep(Domain& domain, const StageWork& work, std::span<stencil::ExactSum> sums, int which);

  Communicator comm_;
  StaticOptions options_;
  Timers timers_;
  MpiMailbox mailbox_;
  sfc::Partition partition_;
  GhostPlan plan_;
  std::vector<double> scratch_;
  std::vector<std::vector<double>> send_buf_, recv_buf_;
};

}  // namespace miniamr::runtime

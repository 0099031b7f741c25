// The dynamic mapper, in the style of the OpenTS T-system: the unit steps of a chunk
// (schedule_kit.hpp) are tasks whose inputs are "non-ready values" (a counter of the inputs
// still missing: the previous stage of the unit and of the units it exchanges faces with, and
// its messages). A step becomes ready when its counter reaches zero and runs on whichever worker
// is free; no barrier separates stages, so a unit may be stages ahead of a far-away one, and a
// rank never waits while it has a ready step. Ready steps are taken in a fixed order of
// priority (stage, then variable group, then unit; units whose faces other ranks wait for
// first), each worker from the units it ran before (they are in its cache) and from another's
// when it has none. MPI is driven by one worker at a time (MPI_THREAD_SERIALIZED, the halo
// exchange's token): by a worker that has nothing to run, or after a step once messages wait to
// be posted or a short interval has passed.
#pragma once

#include <cstdint>
#include <memory>

#include "runtime/mapper.hpp"
#include "runtime/task_pool.hpp"

namespace miniamr::runtime {

class DynamicRuntime final : public Mapper {
 public:
  explicit DynamicRuntime(MPI_Comm parent = MPI_COMM_WORLD, RuntimeOptions options = {});
  ~DynamicRuntime() override;
  std::string name() const override { return "dynamic"; }

 private:
  SchedulePolicy policy(const StageGraph& graph, const StageWork& first, int chunk) const override;
  void run_chunk(ChunkRun& run) override;
  void for_each(std::size_t n, const std::function<void(std::size_t)>& body) override;
  TaskPool& pool();

  std::unique_ptr<TaskPool> pool_;
};

}  // namespace miniamr::runtime

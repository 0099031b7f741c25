// The static mapper, "plain MPI ranks": each rank runs the schedule (schedule.hpp) in order,
// stage after stage, bulk-synchronously. A stage's blocks that need no message are swept first
// while the messages fly, then the rest; with T threads each part of the order is cut into T
// units, one per thread of an OpenMP team. A chunk of variables goes through every stage of the
// batch before the next chunk (RuntimeOptions::chunk_vars); messages go one per neighbour rank,
// axis group, variable group and stage.
#pragma once

#include "runtime/mapper.hpp"

namespace miniamr::runtime {

class StaticRuntime final : public Mapper {
 public:
  explicit StaticRuntime(MPI_Comm parent = MPI_COMM_WORLD, RuntimeOptions options = {});
  std::string name() const override { return "static"; }

 private:
  SchedulePolicy policy(const StageGraph& graph, const StageWork& first, int chunk) const override;
  void run_chunk(ChunkRun& run) override;
  void for_each(std::size_t n, const std::function<void(std::size_t)>& body) override;
  // Runs step `step` of units [first, last) of `lane`, unit first + t and every T-th after it
  // on thread t of the team.
  void run_units(ChunkRun& run, std::size_t lane, int step, std::size_t first, std::size_t last);
  // Drives the messages until every receive of `lane` in axis group `group` has arrived.
  void wait(ChunkRun& run, std::size_t lane, int group);
};

}  // namespace miniamr::runtime

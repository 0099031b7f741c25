// The sweep schedule must fill every on-rank ghost face exactly once, before either of its two
// blocks is swept, and only from one thread's own blocks (or up front).
#include <algorithm>
#include <map>
#include <random>

#include <gtest/gtest.h>

#include "runtime/sweep_schedule.hpp"

using namespace miniamr::runtime;

namespace {

GhostPlan random_plan(std::size_t blocks, std::mt19937& rng) {
  GhostPlan plan;
  plan.needs_remote.resize(blocks);
  for (auto& r : plan.needs_remote) r = char(rng() % 3 == 0);
  for (std::size_t k = 0; k < 5 * blocks; ++k) {
    const std::size_t a = rng() % blocks, b = rng() % blocks;
    if (a == b) continue;
    const int face = int(rng() % 6);
    plan.local[std::size_t(face / 2)].push_back(
        {a, b, {miniamr::stencil::GhostRelation::kSameLevel, face, {}}});
  }
  for (std::size_t k = 0; k < blocks; ++k)
    plan.boundary[k % 3].push_back({rng() % blocks, int(2 * (k % 3))});
  return plan;
}

}  // namespace

TEST(SweepSchedule, EveryFaceOnceAndBeforeBothSweeps) {
  std::mt19937 rng(3);
  for (const int threads : {1, 2, 3}) {
    for (const std::size_t blocks : {1u, 2u, 7u, 40u}) {
      const GhostPlan plan = random_plan(blocks, rng);
      const StageGraph graph = build_stage_graph(plan, {2, 2, 2, 1}, blocks, false);
      const SweepSchedule s = build_sweep_schedule(graph, threads);
      ASSERT_EQ(s.order.size(), blocks);
      std::vector<std::size_t> pos(blocks);
      for (std::size_t p = 0; p < blocks; ++p) pos[s.order[p]] = p;
      for (std::size_t p = 0; p < blocks; ++p)
        EXPECT_EQ(plan.needs_remote[s.order[p]] != 0, p >= s.first_remote);

      // Count every task, scheduled or early, against the plan.
      std::map<std::tuple<std::size_t, std::size_t, int, bool>, int> seen;
      for (const GhostTask& t : s.early) ++seen[{t.dst, t.src, t.link.face, t.boundary}];
      for (std::size_t p = 0; p < blocks; ++p) {
        for (std::size_t k = s.task_begin[p]; k < s.task_begin[p + 1]; ++k) {
          const GhostTask& t = s.tasks[k];
          ++seen[{t.dst, t.src, t.link.face, t.boundary}];
          EXPECT_LE(p, pos[t.dst]);  // before the receiver is swept ...
          EXPECT_LE(p, pos[t.src]);  // ... and before the sender's values change
          if (threads > 1) {
            // ... and by the thread that sweeps both blocks.
            const auto chunk = [&](std::size_t q) {
              return std::upper_bound(s.bounds.begin(), s.bounds.end(), q) - s.bounds.begin();
            };
            EXPECT_EQ(chunk(pos[t.dst]), chunk(pos[t.src]));
          }
        }
      }
      std::map<std::tuple<std::size_t, std::size_t, int, bool>, int> want;
      for (const auto& axis : plan.local)
        for (const LocalLink& l : axis) ++want[{l.dst, l.src, l.link.face, false}];
      for (const auto& axis : plan.boundary)
        for (const BoundaryFace& b : axis) ++want[{b.block, b.block, b.face, true}];
      EXPECT_EQ(seen, want);
      if (threads == 1) {
        EXPECT_TRUE(s.early.empty());
      }
    }
  }
}

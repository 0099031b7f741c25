// The sweep schedule must fill every on-rank ghost face exactly once, before either of its two
// blocks is swept, and only from one thread's own blocks (or up front); a face deferred through
// the packed buffer is packed at its sender's sweep and unpacked at its receiver's.
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
  const miniamr::stencil::BlockShape shape{2, 2, 2, 1};
  using Kind = GhostTask::Kind;
  for (const int threads : {1, 2, 3}) {
    for (const std::size_t blocks : {1u, 2u, 7u, 40u}) {
      const GhostPlan plan = random_plan(blocks, rng);
      const StageGraph graph = build_stage_graph(plan, shape, blocks, false);
      const SweepSchedule s = build_sweep_schedule(graph, shape, threads);
      ASSERT_EQ(s.order.size(), blocks);
      std::vector<std::size_t> pos(blocks);
      for (std::size_t p = 0; p < blocks; ++p) pos[s.order[p]] = p;
      for (std::size_t p = 0; p < blocks; ++p)
        EXPECT_EQ(plan.needs_remote[s.order[p]] != 0, p >= s.first_remote);
      const auto chunk = [&](std::size_t q) {
        return threads == 1
                   ? 0
                   : std::upper_bound(s.bounds.begin(), s.bounds.end(), q) - s.bounds.begin();
      };

      // Count every face that reaches its receiver, scheduled or early, against the plan.
      using Face = std::tuple<std::size_t, std::size_t, int, bool>;
      std::map<Face, int> seen;
      for (const GhostTask& t : s.early) {
        EXPECT_EQ(t.kind, Kind::kDirect);
        ++seen[{t.dst, t.src, t.link.face, false}];
      }
      std::map<std::size_t, Face> packed;  // slot -> the face packed there, not yet unpacked
      std::vector<std::pair<std::size_t, std::size_t>> slots;  // [begin, end) per packed face
      for (std::size_t p = 0; p < blocks; ++p) {
        for (std::size_t k = s.task_begin[p]; k < s.task_begin[p + 1]; ++k) {
          const GhostTask& t = s.tasks[k];
          const Face face{t.dst, t.src, t.link.face, t.kind == Kind::kBoundary};
          switch (t.kind) {
            case Kind::kBoundary:
            case Kind::kDirect:
              // At the receiver's sweep, before the sender's values change.
              EXPECT_EQ(p, pos[t.dst]);
              EXPECT_LE(p, pos[t.src]);
              ++seen[face];
              break;
            case Kind::kPack:
              // At the sender's sweep, for a receiver swept later by the same thread.
              EXPECT_EQ(p, pos[t.src]);
              EXPECT_LT(p, pos[t.dst]);
              EXPECT_EQ(chunk(pos[t.dst]), chunk(pos[t.src]));
              EXPECT_TRUE(packed.emplace(t.slot, face).second) << "slot used twice";
              EXPECT_EQ(t.size, miniamr::stencil::packed_size(shape, t.link.relation,
                                                              t.link.face / 2, 1, false));
              slots.emplace_back(t.slot, t.slot + t.size);
              break;
            case Kind::kUnpack: {
              EXPECT_EQ(p, pos[t.dst]);
              const auto it = packed.find(t.slot);
              ASSERT_NE(it, packed.end()) << "unpacked before it was packed";
              EXPECT_EQ(it->second, face);
              packed.erase(it);
              ++seen[face];
              break;
            }
          }
        }
      }
      EXPECT_TRUE(packed.empty()) << "a packed face was never unpacked";
      std::sort(slots.begin(), slots.end());
      for (std::size_t k = 0; k < slots.size(); ++k) {
        EXPECT_LE(slots[k].second, k + 1 < slots.size() ? slots[k + 1].first : s.deferred_per_var)
            << "deferred faces overlap or overflow the buffer";
      }
      std::map<Face, int> want;
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

// The sweep schedule must bring every on-rank ghost face to its receiver exactly once, before
// either of its two blocks is swept, and only from one thread's own blocks (or up front): a
// face deferred through the packed buffer is packed at its sender's sweep and unpacked at its
// receiver's; a face read in place of the ghosts is a boundary face (the receiver's own layer)
// or a same-level face whose sender the same thread sweeps later.
#include <algorithm>
#include <map>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "runtime/sweep_schedule.hpp"

using namespace miniamr::runtime;

namespace {

// Each ghost face of a block gets at most one same-level sender or is a boundary face, as in
// a mesh; relations are same-level and, one link in three, coarse to fine.
GhostPlan random_plan(std::size_t blocks, std::mt19937& rng) {
  using miniamr::stencil::GhostRelation;
  GhostPlan plan;
  plan.needs_remote.resize(blocks);
  for (auto& r : plan.needs_remote) r = char(rng() % 3 == 0);
  std::set<std::pair<std::size_t, int>> taken;
  for (std::size_t k = 0; k < 5 * blocks; ++k) {
    const std::size_t a = rng() % blocks, b = rng() % blocks;
    const int face = int(rng() % 6);
    if (a == b || !taken.emplace(a, face).second) continue;
    const auto relation = k % 3 == 0 ? GhostRelation::kCoarseToFine : GhostRelation::kSameLevel;
    plan.local[std::size_t(face / 2)].push_back({a, b, {relation, face, {}}});
  }
  for (std::size_t k = 0; k < blocks; ++k) {
    const std::size_t block = rng() % blocks;
    const int face = int(2 * (k % 3));
    if (taken.emplace(block, face).second) plan.boundary[k % 3].push_back({block, face});
  }
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
          const Face face{t.dst, t.src, t.link.face, false};
          switch (t.kind) {
            case Kind::kDirect:
              // At the receiver's sweep, before the sender's values change; a same-level face
              // is read from its sender instead.
              EXPECT_NE(t.link.relation, miniamr::stencil::GhostRelation::kSameLevel);
              EXPECT_EQ(p, pos[t.dst]);
              EXPECT_LE(p, pos[t.src]);
              ++seen[face];
              break;
            case Kind::kPack:
              // At the sender's sweep, for a receiver swept later by the same thread, across a
              // level change (a same-level face is copied out by the sender's sweep).
              EXPECT_NE(t.link.relation, miniamr::stencil::GhostRelation::kSameLevel);
              EXPECT_EQ(p, pos[t.src]);
              EXPECT_LT(p, pos[t.dst]);
              EXPECT_EQ(chunk(pos[t.dst]), chunk(pos[t.src]));
              EXPECT_TRUE(packed.emplace(t.slot, face).second) << "slot used twice";
              EXPECT_EQ(t.size, miniamr::stencil::packed_size(shape, t.link.relation,
                                                              t.link.face / 2, 1, false));
              slots.emplace_back(t.slot, t.slot + t.size);
              break;
            case Kind::kUnpack: {
              EXPECT_NE(t.link.relation, miniamr::stencil::GhostRelation::kSameLevel);
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
      // Same-level faces for a receiver swept later: the sender's sweep copies its layer out.
      std::map<std::size_t, std::pair<std::size_t, int>> copied;  // slot -> sender, its face
      ASSERT_EQ(s.copies.size(), blocks);
      for (std::size_t src = 0; src < blocks; ++src)
        for (int f = 0; f < 6; ++f)
          if (const FaceSlot& c = s.copies[src][std::size_t(f)]; c.size > 0) {
            EXPECT_TRUE(copied.emplace(c.slot, std::pair{src, f}).second) << "slot used twice";
            EXPECT_EQ(packed.count(c.slot), 0u) << "slot used twice";
            EXPECT_EQ(c.size,
                      miniamr::stencil::packed_size(
                          shape, miniamr::stencil::GhostRelation::kSameLevel, f / 2, 1, false));
            slots.emplace_back(c.slot, c.slot + c.size);
          }
      // Faces read in place of the ghosts (a deferred one from the slot its sender copied).
      std::map<std::size_t, int> copy_reads;
      using Read = FaceRead::Kind;
      ASSERT_EQ(s.reads.size(), blocks);
      for (std::size_t dst = 0; dst < blocks; ++dst)
        for (int f = 0; f < 6; ++f) {
          const FaceRead& r = s.reads[dst][std::size_t(f)];
          switch (r.kind) {
            case Read::kGhost:
              break;
            case Read::kMirror:
              ++seen[{dst, dst, f, true}];
              break;
            case Read::kNeighbour:
              EXPECT_LT(pos[dst], pos[r.from]) << "read after its sender was swept";
              EXPECT_EQ(chunk(pos[dst]), chunk(pos[r.from]));
              ++seen[{dst, r.from, f, false}];
              break;
            case Read::kDeferred: {
              const auto it = copied.find(r.from);
              ASSERT_NE(it, copied.end()) << "read from a slot nothing was copied into";
              const auto [src, face] = it->second;
              EXPECT_EQ(face, f ^ 1) << "the sender copied another layer";
              EXPECT_LT(pos[src], pos[dst]);
              EXPECT_EQ(chunk(pos[src]), chunk(pos[dst]));
              EXPECT_EQ(r.size,
                        miniamr::stencil::packed_size(
                            shape, miniamr::stencil::GhostRelation::kSameLevel, f / 2, 1, false));
              ++seen[{dst, src, f, false}];
              ++copy_reads[r.from];
              break;
            }
            case Read::kMessage:
              ADD_FAILURE() << "a message read without messages";
              break;
          }
        }
      EXPECT_TRUE(packed.empty()) << "a packed face was never unpacked";
      EXPECT_EQ(copy_reads.size(), copied.size()) << "a copied face was never read";
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

// Every face received from another rank reaches its receiver's sweep exactly once: a
// same-level face read from its message where it lies there, a face across a level change
// unpacked into the ghosts (SweepSchedule::unpacks).
TEST(SweepSchedule, EveryReceivedFaceReadOrUnpackedOnce) {
  using miniamr::stencil::GhostRelation;
  std::mt19937 rng(5);
  const miniamr::stencil::BlockShape shape{2, 2, 2, 1};
  for (const std::size_t blocks : {1u, 7u, 40u}) {
    GhostPlan plan;
    plan.needs_remote.assign(blocks, 0);
    plan.peers.resize(2);
    for (int r = 0; r < 2; ++r) plan.peers[std::size_t(r)].rank = r + 1;
    std::size_t links = 0;
    for (std::size_t b = 0; b < blocks; ++b)
      for (int face = 0; face < 6; ++face) {
        if (rng() % 3 != 0) continue;
        const auto relation =
            rng() % 2 == 0 ? GhostRelation::kSameLevel : GhostRelation::kFineToCoarse;
        RemoteLink l;
        l.block = b;
        l.link = {relation, face, {}};
        plan.peers[rng() % 2].recv[std::size_t(face / 2)].push_back(l);
        plan.needs_remote[b] = 1;
        ++links;
      }
    const StageGraph graph = build_stage_graph(plan, shape, blocks, false);
    const SweepSchedule s = build_sweep_schedule(graph, shape, 1);
    ASSERT_EQ(s.unpacks.size(), graph.recvs.size());
    std::size_t reached = 0;
    for (std::size_t m = 0; m < graph.recvs.size(); ++m) {
      const auto& faces = graph.recvs[m].faces;
      std::set<std::size_t> unpacked(s.unpacks[m].begin(), s.unpacks[m].end());
      EXPECT_EQ(unpacked.size(), s.unpacks[m].size()) << "a face unpacked twice";
      for (std::size_t i = 0; i < faces.size(); ++i) {
        const FaceSlice& f = faces[i];
        const FaceRead& read = s.reads[f.block][std::size_t(f.link.face)];
        const bool from_message = read.kind == FaceRead::Kind::kMessage;
        if (f.link.relation == GhostRelation::kSameLevel) {
          EXPECT_TRUE(from_message);
          EXPECT_EQ(read.from, m);
          EXPECT_EQ(read.at, f.offset);
          EXPECT_EQ(read.size, f.per_var);
          EXPECT_EQ(unpacked.count(i), 0u);
        } else {
          EXPECT_FALSE(from_message);
          EXPECT_EQ(unpacked.count(i), 1u);
        }
        reached += (from_message ? 1 : 0) + unpacked.count(i);
      }
    }
    EXPECT_EQ(reached, links);
  }
}

// A compact sweep's dense ghost layers: one per face read from the ghost layer, none for the
// rest, each holding the sweep's variables one after the other, apart from every other layer.
TEST(SweepSchedule, DenseGhostLayersOnePerFaceReadAsAGhost) {
  using Read = FaceRead::Kind;
  std::vector<std::array<FaceRead, 6>> reads(3);
  for (auto& block : reads)
    for (FaceRead& r : block) r.kind = Read::kNeighbour;
  reads[0][1].kind = Read::kGhost;
  reads[2][0].kind = Read::kGhost;
  reads[2][5].kind = Read::kGhost;
  reads[1][3].kind = Read::kMirror;
  DenseGhostLayers layers;
  layers.number(reads);
  constexpr std::size_t kVars = 3;
  layers.resize(kVars);
  const auto cells = std::ptrdiff_t(miniamr::stencil::kCompactFaceCells);
  std::set<const double*> starts;
  for (const auto& [b, f] : {std::pair{0, 1}, std::pair{2, 0}, std::pair{2, 5}}) {
    double* const first = layers.layer(std::size_t(b), f);
    for (std::size_t v = 0; v < kVars; ++v) {
      EXPECT_EQ(layers.layer(std::size_t(b), f, v) - first, std::ptrdiff_t(v) * cells);
      starts.insert(layers.layer(std::size_t(b), f, v));
    }
  }
  ASSERT_EQ(starts.size(), 3 * kVars);
  // Every layer of every variable is within the storage and none overlaps another.
  const double* const lowest = *starts.begin();
  EXPECT_EQ(*starts.rbegin() - lowest, std::ptrdiff_t(3 * kVars - 1) * cells);
  for (auto it = std::next(starts.begin()); it != starts.end(); ++it)
    EXPECT_EQ(*it - *std::prev(it), cells);
}

// The schedule must bring every ghost face to its receiver exactly once: within a unit, before
// the sender's sweep changes its values (read in place from a later sender, filled from it, or
// copied or packed at an earlier sender's sweep); between units and ranks, packed by the sender
// after the step that makes the values and read or unpacked from that packed face by the
// receiver. Units exchanging faces are linked both ways, and no two packed faces share doubles.
#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "runtime/schedule.hpp"
#include "runtime/unit_storage.hpp"
#include "stencil/compact_stencil.hpp"

using namespace miniamr::runtime;
using namespace miniamr::mesh;

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

using miniamr::stencil::GhostRelation;
using Face = std::tuple<std::size_t, std::size_t, int, bool>;  // dst, src, face, boundary

std::size_t face_size(const miniamr::stencil::BlockShape& shape,
                      const miniamr::stencil::FaceLink& link) {
  return miniamr::stencil::packed_size(shape, link.relation, link.face / 2, 1, false);
}

// Every doubles range [begin, end) in a buffer of `size` doubles is apart from the others.
void expect_apart(std::vector<std::pair<std::size_t, std::size_t>> ranges, std::size_t size,
                  const std::string& what) {
  std::sort(ranges.begin(), ranges.end());
  for (std::size_t k = 0; k < ranges.size(); ++k)
    EXPECT_LE(ranges[k].second, k + 1 < ranges.size() ? ranges[k + 1].first : size)
        << what << " faces overlap or overflow the buffer";
}

std::vector<SchedulePolicy> policies() {
  using Order = SchedulePolicy::Order;
  return {{Order::kInteriorFirst, 1},
          {Order::kInteriorFirst, 3},
          {Order::kProducersFirst, 1},
          {Order::kProducersFirst, 4}};
}

}  // namespace

TEST(Schedule, UnitsCutEachPartOfTheOrder) {
  std::mt19937 rng(2);
  const miniamr::stencil::BlockShape shape{2, 2, 2, 1};
  for (const SchedulePolicy& policy : policies())
    for (const std::size_t blocks : {1u, 5u, 40u}) {
      const GhostPlan plan = random_plan(blocks, rng);
      const Schedule s =
          build_schedule(build_stage_graph(plan, shape, blocks, false), shape, policy);
      ASSERT_EQ(s.order.size(), blocks);
      std::vector<std::size_t> sorted = s.order;
      std::sort(sorted.begin(), sorted.end());
      for (std::size_t b = 0; b < blocks; ++b) ASSERT_EQ(sorted[b], b);
      // The first part: the interior blocks, or those that need messages.
      const bool interior_first = policy.order == SchedulePolicy::Order::kInteriorFirst;
      const std::size_t split = s.unit_begin[s.second_part];
      for (std::size_t p = 0; p < blocks; ++p)
        EXPECT_EQ((plan.needs_remote[s.order[p]] != 0) == interior_first, p >= split);
      EXPECT_EQ(s.unit_begin.front(), 0u);
      EXPECT_EQ(s.unit_begin.back(), blocks);
      for (std::size_t u = 0; u < s.units(); ++u) {
        // Equal shares of the part, give or take a block, and no unit without one.
        const std::size_t part = u < s.second_part ? split : blocks - split;
        EXPECT_GE(s.blocks_in(u), 1u);
        EXPECT_LE(s.blocks_in(u), part / policy.units_per_part + 1);
        for (std::size_t p = s.unit_begin[u]; p < s.unit_begin[u + 1]; ++p)
          EXPECT_EQ(s.unit_of[s.order[p]], u);
      }
      // As many units as asked for in each part, or one a block in a part with fewer.
      EXPECT_EQ(s.units(), std::min(split, policy.units_per_part) +
                               std::min(blocks - split, policy.units_per_part));
    }
}

// A cut by weight gives each unit as near an equal share of the weight as whole blocks allow,
// and a block to each unit however the weight lies.
TEST(Schedule, CutByWeightEqualSharesNoneEmpty) {
  const auto cut = [](std::vector<double> w, std::size_t units) { return cut_weighted(w, units); };
  using V = std::vector<std::size_t>;
  EXPECT_EQ(cut({1, 1, 1, 1, 1, 1}, 2), (V{0, 3, 6}));
  EXPECT_EQ(cut({1, 1, 1, 1, 1, 1}, 3), (V{0, 2, 4, 6}));
  EXPECT_EQ(cut({3, 1, 1, 1}, 2), (V{0, 1, 4}));     // the first block alone is half
  EXPECT_EQ(cut({1, 1, 1, 1, 4}, 2), (V{0, 4, 5}));  // the last block alone is half
  EXPECT_EQ(cut({9, 1, 1}, 3), (V{0, 1, 2, 3}));     // one block outweighs two shares
  EXPECT_EQ(cut({1, 1, 1, 9}, 3), (V{0, 2, 3, 4}));
  EXPECT_EQ(cut({5}, 1), (V{0, 1}));
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t n = 1 + rng() % 40, units = 1 + rng() % n;
    std::vector<double> w(n);
    double total = 0, heaviest = 0;
    for (double& x : w) {
      x = 0.1 + double(rng() % 1000) / 100;
      total += x;
      heaviest = std::max(heaviest, x);
    }
    const V b = cut_weighted(w, units);
    ASSERT_EQ(b.size(), units + 1);
    EXPECT_EQ(b.front(), 0u);
    EXPECT_EQ(b.back(), n);
    for (std::size_t u = 0; u < units; ++u) {
      EXPECT_LT(b[u], b[u + 1]) << "unit " << u << " of " << units << " is empty";
      // Each boundary is the nearest to its equal share (within half a block's weight), unless
      // it keeps a block for a unit.
      double before = 0;
      for (std::size_t i = 0; i < b[u]; ++i) before += w[i];
      const bool squeezed = u > 0 && (b[u] == b[u - 1] + 1 || b[u] + (units - u) == n);
      if (u > 0 && !squeezed) {
        EXPECT_LE(std::abs(before - total * double(u) / double(units)), heaviest / 2);
      }
    }
  }
}

// With block weights, a part's units are cut at equal weight, not at equal counts.
TEST(Schedule, WeightsCutThePartsIntoUnits) {
  const miniamr::stencil::BlockShape shape{2, 2, 2, 1};
  const std::size_t blocks = 12;
  GhostPlan plan;
  plan.needs_remote.assign(blocks, 0);
  std::vector<double> weights(blocks, 1.0);
  for (std::size_t b = 0; b < 3; ++b) weights[b] = 3.0;  // the first three: half the weight
  const SchedulePolicy policy{SchedulePolicy::Order::kProducersFirst, 2};
  const StageGraph graph = build_stage_graph(plan, shape, blocks, false);
  const Schedule counted = build_schedule(graph, shape, policy);
  const Schedule weighed = build_schedule(graph, shape, policy, weights);
  EXPECT_EQ(counted.blocks_in(0), 6u);
  EXPECT_EQ(weighed.blocks_in(0), 3u);
  EXPECT_EQ(weighed.blocks_in(1), 9u);
}

// Units are cut again when the slowest of a part took longer than the part's mean by more than
// the tolerance; a part of one unit has nothing to even out.
TEST(Schedule, UnevenUnitsBeyondTheTolerance) {
  const miniamr::stencil::BlockShape shape{2, 2, 2, 1};
  const std::size_t blocks = 8;
  GhostPlan plan;
  plan.needs_remote.assign(blocks, 0);
  for (std::size_t b = 0; b < 2; ++b) plan.needs_remote[b] = 1;  // a remote part of two blocks
  const StageGraph graph = build_stage_graph(plan, shape, blocks, false);
  const Schedule two = build_schedule(graph, shape, {SchedulePolicy::Order::kInteriorFirst, 2});
  const Schedule one = build_schedule(graph, shape, {SchedulePolicy::Order::kInteriorFirst, 1});
  ASSERT_EQ(two.units(), 4u);
  std::vector<double> seconds(blocks, 1.0);
  EXPECT_FALSE(units_uneven(two, seconds, 0.1));
  // One block of the interior part's first unit (3 blocks each) takes 0.3 s longer: that unit
  // is 0.15 s above the part's mean.
  seconds[two.order[0]] = 1.3;
  EXPECT_TRUE(units_uneven(two, seconds, 0.1));
  EXPECT_FALSE(units_uneven(two, seconds, 0.2));
  EXPECT_FALSE(units_uneven(one, seconds, 0.0));
  // The same in the remote part (one block a unit).
  seconds.assign(blocks, 1.0);
  seconds[two.order[blocks - 1]] = 1.3;
  EXPECT_TRUE(units_uneven(two, seconds, 0.1));
  EXPECT_FALSE(units_uneven(two, seconds, 0.2));
}

TEST(Schedule, ARankWithoutBlocksHasNoUnit) {
  const miniamr::stencil::BlockShape shape{2, 2, 2, 1};
  for (const SchedulePolicy& policy : policies()) {
    const Schedule s =
        build_schedule(build_stage_graph(GhostPlan{}, shape, 0, false), shape, policy);
    EXPECT_EQ(s.units(), 0u);
    EXPECT_EQ(s.second_part, 0u);
  }
}

TEST(Schedule, EveryOnRankFaceOnceBeforeItsSenderChanges) {
  std::mt19937 rng(3);
  const miniamr::stencil::BlockShape shape{2, 2, 2, 1};
  using Kind = GhostTask::Kind;
  using Read = FaceRead::Kind;
  for (const SchedulePolicy& policy : policies()) {
    for (const std::size_t blocks : {1u, 2u, 7u, 40u}) {
      const GhostPlan plan = random_plan(blocks, rng);
      const StageGraph graph = build_stage_graph(plan, shape, blocks, false);
      const Schedule s = build_schedule(graph, shape, policy);
      ASSERT_EQ(s.steps, 1);
      std::vector<std::size_t> pos(blocks);
      for (std::size_t p = 0; p < blocks; ++p) pos[s.order[p]] = p;
      const auto unit = [&](std::size_t b) { return s.unit_of[b]; };
      const auto linked = [&](std::size_t a, std::size_t b) {
        const auto l = s.links[a];
        return std::find(l.begin(), l.end(), std::uint32_t(b)) != l.end();
      };
      std::map<Face, int> seen;
      std::map<std::size_t, Face> deferred;               // slot -> face packed there within a unit
      std::map<std::size_t, std::pair<Face, int>> local;  // local slot -> face, unpacks + reads
      std::vector<std::pair<std::size_t, std::size_t>> deferred_ranges, local_ranges;
      // Faces packed for another unit, at their sender's position.
      for (std::size_t p = 0; p < blocks; ++p)
        for (const OutFace& o : s.outs[p]) {
          ASSERT_EQ(o.at.in, PackedAt::In::kLocal) << "a message without peers";
          const std::size_t src = s.order[p];
          EXPECT_EQ(o.at.per_var, face_size(shape, o.link));
          local_ranges.emplace_back(o.at.offset, o.at.offset + o.at.per_var);
          EXPECT_TRUE(
              local.emplace(o.at.offset, std::pair{Face{0, src, o.link.face, false}, 0}).second);
        }
      const auto from_local = [&](const PackedAt& at, std::size_t dst, int face) {
        const auto it = local.find(at.offset);
        ASSERT_NE(it, local.end()) << "read a local face nothing packed";
        auto& [packed, uses] = it->second;
        const std::size_t src = std::get<1>(packed);
        EXPECT_EQ(std::get<2>(packed), face);
        EXPECT_NE(unit(src), unit(dst)) << "packed between blocks of one unit";
        EXPECT_TRUE(linked(unit(dst), unit(src)) && linked(unit(src), unit(dst)));
        ++uses;
        ++seen[{dst, src, face, false}];
      };
      for (std::size_t p = 0; p < blocks; ++p)
        for (const GhostTask& t : s.tasks[p]) {
          const Face face{t.dst, t.src, t.link.face, false};
          EXPECT_NE(t.link.relation, GhostRelation::kSameLevel) << "same-level faces are read";
          switch (t.kind) {
            case Kind::kDirect:  // at the receiver's sweep, the sender swept later, same unit
              EXPECT_EQ(p, pos[t.dst]);
              EXPECT_LT(p, pos[t.src]);
              EXPECT_EQ(unit(t.dst), unit(t.src));
              ++seen[face];
              break;
            case Kind::kDefer:  // at the sender's sweep, for a later receiver of its unit
              EXPECT_EQ(p, pos[t.src]);
              EXPECT_LT(p, pos[t.dst]);
              EXPECT_EQ(unit(t.dst), unit(t.src));
              EXPECT_TRUE(deferred.emplace(t.slot.slot, face).second) << "slot used twice";
              EXPECT_EQ(t.slot.size, face_size(shape, t.link));
              deferred_ranges.emplace_back(t.slot.slot, t.slot.slot + t.slot.size);
              break;
            case Kind::kUndefer: {
              EXPECT_EQ(p, pos[t.dst]);
              const auto it = deferred.find(t.slot.slot);
              ASSERT_NE(it, deferred.end()) << "unpacked before it was packed";
              EXPECT_EQ(it->second, face);
              deferred.erase(it);
              ++seen[face];
              break;
            }
            case Kind::kUnpack:
              EXPECT_EQ(p, pos[t.dst]);
              from_local(t.at, t.dst, t.link.face);
              break;
            case Kind::kBoundary:
              ADD_FAILURE() << "a boundary fill in a face-only schedule";
              break;
          }
        }
      // Same-level faces for a later receiver of the unit: the sender's sweep copies them out.
      std::map<std::size_t, std::pair<std::size_t, int>> copied;  // slot -> sender, its face
      for (std::size_t src = 0; src < blocks; ++src)
        for (int f = 0; f < 6; ++f)
          if (const FaceSlot& c = s.copies[src][std::size_t(f)]; c.size > 0) {
            EXPECT_TRUE(copied.emplace(c.slot, std::pair{src, f}).second) << "slot used twice";
            deferred_ranges.emplace_back(c.slot, c.slot + c.size);
          }
      std::map<std::size_t, int> copy_reads;
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
              EXPECT_EQ(unit(dst), unit(r.from));
              ++seen[{dst, r.from, f, false}];
              break;
            case Read::kDeferred: {
              const auto it = copied.find(r.slot.slot);
              ASSERT_NE(it, copied.end()) << "read from a slot nothing was copied into";
              const auto [src, face] = it->second;
              EXPECT_EQ(face, f ^ 1) << "the sender copied another layer";
              EXPECT_LT(pos[src], pos[dst]);
              EXPECT_EQ(unit(src), unit(dst));
              ++seen[{dst, src, f, false}];
              ++copy_reads[r.slot.slot];
              break;
            }
            case Read::kPacked:
              from_local(r.at, dst, f);
              break;
          }
        }
      EXPECT_TRUE(deferred.empty()) << "a deferred face was never unpacked";
      EXPECT_EQ(copy_reads.size(), copied.size()) << "a copied face was never read";
      for (const auto& [slot, packed] : local) EXPECT_EQ(packed.second, 1) << "local slot " << slot;
      expect_apart(deferred_ranges, s.deferred_per_var, "deferred");
      expect_apart(local_ranges, s.local_per_var[0], "local");
      std::map<Face, int> want;
      for (const auto& axis : plan.local)
        for (const LocalLink& l : axis) ++want[{l.dst, l.src, l.link.face, false}];
      for (const auto& axis : plan.boundary)
        for (const BoundaryFace& b : axis) ++want[{b.block, b.block, b.face, true}];
      EXPECT_EQ(seen, want);
      const ScheduleCounts counts = count_faces(s);
      EXPECT_EQ(counts.packed_between_units, local.size());
      if (s.units() == 1 + (s.second_part > 0 ? 1 : 0) && blocks == 1) {
        EXPECT_EQ(counts.packed_between_units, 0u);
      }
    }
  }
}

// Every face received from another rank reaches its receiver exactly once: a same-level face
// read from its message where it lies there, a face across a level change unpacked into the
// ghosts; the unit step that reads it lists the message, and the message its readers.
TEST(Schedule, EveryReceivedFaceReadOrUnpackedOnce) {
  std::mt19937 rng(5);
  const miniamr::stencil::BlockShape shape{2, 2, 2, 1};
  for (const SchedulePolicy& policy : policies())
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
      const Schedule s = build_schedule(graph, shape, policy);
      std::map<std::tuple<std::size_t, std::size_t>, int> reached;  // message, offset
      const auto reads_message = [&](std::size_t b, std::uint32_t m) {
        const auto c = s.consumes[s.node(s.unit_of[b], 0)];
        EXPECT_NE(std::find(c.begin(), c.end(), m), c.end()) << "the unit does not wait for it";
        const auto r = s.readers[m];
        EXPECT_NE(std::find(r.begin(), r.end(), std::uint32_t(s.node(s.unit_of[b], 0))), r.end());
      };
      for (std::size_t p = 0; p < blocks; ++p)
        for (const GhostTask& t : s.tasks[p]) {
          ASSERT_EQ(t.kind, GhostTask::Kind::kUnpack);
          ASSERT_EQ(t.at.in, PackedAt::In::kMessage);
          EXPECT_NE(t.link.relation, GhostRelation::kSameLevel);
          reads_message(t.dst, t.at.message);
          ++reached[{t.at.message, t.at.offset}];
        }
      for (std::size_t b = 0; b < blocks; ++b)
        for (const FaceRead& r : s.reads[b])
          if (r.kind == FaceRead::Kind::kPacked) {
            ASSERT_EQ(r.at.in, PackedAt::In::kMessage);
            reads_message(b, r.at.message);
            ++reached[{r.at.message, r.at.offset}];
          }
      std::size_t total = 0;
      for (std::size_t m = 0; m < graph.recvs.size(); ++m) {
        EXPECT_EQ(s.consumers[m], s.readers[m].size());
        for (const FaceSlice& f : graph.recvs[m].faces) {
          EXPECT_EQ((reached[{m, f.offset}]), 1) << "message " << m << " face at " << f.offset;
          ++total;
        }
      }
      EXPECT_EQ(total, links);
    }
}

// Stencils that read edges fill axis by axis: step g fills group g, a face for another unit is
// packed after the sender's step g - 1 (its sweep for group 0), and step g waits for the units
// whose faces it reads (feeds).
TEST(Schedule, EdgeStepsFillAxisByAxis) {
  std::mt19937 rng(7);
  const miniamr::stencil::BlockShape shape{2, 2, 2, 1};
  for (const SchedulePolicy& policy : policies())
    for (const std::size_t blocks : {2u, 40u}) {
      const GhostPlan plan = random_plan(blocks, rng);
      const StageGraph graph = build_stage_graph(plan, shape, blocks, true);
      const Schedule s = build_schedule(graph, shape, policy);
      ASSERT_EQ(s.steps, 4);
      EXPECT_TRUE(s.reads.empty());
      std::map<std::size_t, std::size_t> packed_at[3];  // group -> slot -> sender
      for (std::size_t p = 0; p < blocks; ++p)
        for (int k = 0; k < 4; ++k)
          for (const OutFace& o : s.outs[p * 4 + std::size_t(k)]) {
            EXPECT_EQ(k, o.group == 0 ? 3 : o.group - 1) << "packed after the wrong step";
            packed_at[o.group][o.at.offset] = s.order[p];
            if (o.at.in == PackedAt::In::kLocal) {
              EXPECT_EQ(o.at.per_var, miniamr::stencil::packed_size(shape, o.link.relation,
                                                                    o.link.face / 2, 1, true));
            }
          }
      std::size_t fills = 0;
      for (std::size_t p = 0; p < blocks; ++p)
        for (int k = 0; k < 4; ++k)
          for (const GhostTask& t : s.tasks[p * 4 + std::size_t(k)]) {
            ASSERT_LT(k, 3) << "the sweep step fills nothing";
            EXPECT_EQ(t.link.face / 2, k) << "filled in the step of another axis";
            ++fills;
            if (t.kind != GhostTask::Kind::kUnpack) continue;
            const auto it = packed_at[k].find(t.at.offset);
            ASSERT_NE(it, packed_at[k].end());
            EXPECT_EQ(it->second, t.src);
            if (k > 0) {
              const auto f = s.feeds[s.node(s.unit_of[t.dst], k)];
              EXPECT_NE(std::find(f.begin(), f.end(), s.unit_of[t.src]), f.end());
            }
          }
      std::size_t want = 0;
      for (int a = 0; a < 3; ++a)
        want += plan.local[std::size_t(a)].size() + plan.boundary[std::size_t(a)].size();
      EXPECT_EQ(fills, want);
    }
}

// A compact sweep's dense ghost layers: one per face read from the ghost layer, none for the
// rest, each holding the sweep's variables one after the other, apart from every other layer.
TEST(Schedule, DenseGhostLayersOnePerFaceReadAsAGhost) {
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

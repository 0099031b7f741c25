// Ghost filling (spec §3.5). Blocks hold a function of the global cell position, so the value a
// ghost must receive follows from geometry alone: same level = the global function at the
// ghost's position, coarse->fine = the covering coarse cell / 4, fine->coarse = the sum of the
// 2x2 fine face cells. These checks do not share index formulas with the implementation.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "stencil/block.hpp"
#include "stencil/ghost_fill.hpp"

namespace miniamr::stencil {
namespace {

using Vec = std::array<int, 3>;
constexpr double kSentinel = -7.0;

// Non-cubic on purpose: swapping two axes anywhere shows up as a wrong value or a crash.
const BlockShape kShape{4, 2, 6, 3};
const Vec kOddN{kShape.nx, kShape.ny, kShape.nz};
// The geometric checks also run on the cubes whose faces have fixed-size fill loops.
const BlockShape kShapes[] = {kShape, {8, 8, 8, 3}, {16, 16, 16, 3}};

Vec dims(const BlockShape& s) {
  return {s.nx, s.ny, s.nz};
}

// The coded field of one level: exact integers, so /4 and 4-term sums are exact.
double field(int level, int v, Vec g) {
  return level * 1e10 + v * 1e9 + (g[0] + 8) * 1e6 + (g[1] + 8) * 1e3 + (g[2] + 8);
}

// A block of shape `s` at block coordinates `bc` of `level`: interior = field, ghosts = sentinel.
Block make_block(const BlockShape& s, int level, Vec bc) {
  const Vec kN = dims(s);
  Block b(s);
  std::fill_n(b.data(), s.doubles(), kSentinel);
  for (int v = 0; v < s.num_vars; ++v)
    for (int i = 1; i <= kN[0]; ++i)
      for (int j = 1; j <= kN[1]; ++j)
        for (int k = 1; k <= kN[2]; ++k)
          b.var(v)[s.at(i, j, k)] = field(
              level, v, {bc[0] * kN[0] + i - 1, bc[1] * kN[1] + j - 1, bc[2] * kN[2] + k - 1});
  return b;
}

Block make_block(int level, Vec bc) {
  return make_block(kShape, level, bc);
}

double& cell(Block& b, int v, Vec l) {
  return b.var(v)[b.shape().at(l[0], l[1], l[2])];
}

Vec global_of(const BlockShape& s, Vec bc, Vec local) {
  const Vec kN = dims(s);
  return {bc[0] * kN[0] + local[0] - 1, bc[1] * kN[1] + local[1] - 1, bc[2] * kN[2] + local[2] - 1};
}

// In-plane axes of a face on axis a (x,y,z order).
std::array<int, 2> in_plane(int a) {
  if (a == 0) return {1, 2};
  if (a == 1) return {0, 2};
  return {0, 1};
}

Vec global_of(Vec bc, Vec local) {
  return global_of(kShape, bc, local);
}

// Face ghost cells (in-plane interior only) of face f of a block of shape `s`, as local indices.
std::vector<Vec> face_ghosts(const BlockShape& s, int f) {
  const Vec kN = dims(s);
  const int a = f / 2;
  const auto [b, c] = in_plane(a);
  std::vector<Vec> out;
  for (int ib = 1; ib <= kN[b]; ++ib)
    for (int ic = 1; ic <= kN[c]; ++ic) {
      Vec l{};
      l[a] = (f & 1) ? kN[a] + 1 : 0;
      l[b] = ib;
      l[c] = ic;
      out.push_back(l);
    }
  return out;
}

// Every cell of dst other than `written` must be unchanged from `before`.
void expect_only(const Block& before, const Block& after, const std::vector<Vec>& written) {
  const BlockShape& s = before.shape();
  Block mask(s);  // 1 where written
  for (const Vec& l : written)
    for (int v = 0; v < s.num_vars; ++v) mask.var(v)[s.at(l[0], l[1], l[2])] = 1;
  for (std::size_t n = 0; n < s.doubles(); ++n)
    if (mask.data()[n] == 0) {
      ASSERT_EQ(before.data()[n], after.data()[n]) << "cell " << n;
    }
}

// Fills dst via direct, and via pack + unpack; checks both agree bitwise and returns direct's.
Block fill_both_ways(const Block& dst0, const Block& src, const FaceLink& link, VarRange vars,
                     bool edges) {
  const BlockShape& s = dst0.shape();
  Block direct = dst0;
  fill_direct(direct, src, link, vars, edges);
  Block packed = dst0;
  const std::size_t n = packed_size(s, link.relation, link.face / 2, vars.count(), edges);
  std::vector<double> buf(n + 3, 12345.0);
  EXPECT_EQ(pack(src, link, vars, edges, buf), n);
  EXPECT_EQ(buf[n], 12345.0);  // nothing written past the end
  EXPECT_EQ(unpack(packed, link, vars, edges, buf), n);
  EXPECT_EQ(std::memcmp(direct.data(), packed.data(), s.doubles() * sizeof(double)), 0);
  return direct;
}

Vec unit(int f) {
  Vec d{0, 0, 0};
  d[f / 2] = (f & 1) ? 1 : -1;
  return d;
}

class StencilGhostShapes : public ::testing::TestWithParam<BlockShape> {};

std::string shape_name(const ::testing::TestParamInfo<BlockShape>& p) {
  std::ostringstream name;
  name << 'n' << p.param.nx << 'x' << p.param.ny << 'x' << p.param.nz;
  return name.str();
}

INSTANTIATE_TEST_SUITE_P(Shapes, StencilGhostShapes, ::testing::ValuesIn(kShapes), shape_name);

TEST(StencilGhost, PackedSizes) {
  const BlockShape s{4, 4, 4, 1};
  using R = GhostRelation;
  for (int a = 0; a < 3; ++a) {
    EXPECT_EQ(packed_size(s, R::kSameLevel, a, 1, false), 16u);
    EXPECT_EQ(packed_size(s, R::kCoarseToFine, a, 1, false), 4u);
    EXPECT_EQ(packed_size(s, R::kFineToCoarse, a, 1, true), 4u);
  }
  EXPECT_EQ(packed_size(s, R::kSameLevel, 0, 3, true), 48u);
  EXPECT_EQ(packed_size(s, R::kSameLevel, 1, 3, true), 3u * 6 * 4);
  EXPECT_EQ(packed_size(s, R::kSameLevel, 2, 3, true), 3u * 6 * 6);
  EXPECT_EQ(packed_size(kShape, R::kSameLevel, 0, 1, false), 12u);
  EXPECT_EQ(packed_size(kShape, R::kSameLevel, 2, 2, true), 2u * 6 * 4);
  EXPECT_EQ(packed_size(kShape, R::kFineToCoarse, 1, 2, false), 2u * 2 * 3);
}

TEST_P(StencilGhostShapes, SameLevelEveryFace) {
  const BlockShape& s = GetParam();
  const Vec dc{1, 1, 1};
  for (int f = 0; f < 6; ++f) {
    const Vec d = unit(f);
    const Block src = make_block(s, 0, {dc[0] + d[0], dc[1] + d[1], dc[2] + d[2]});
    const Block dst0 = make_block(s, 0, dc);
    const VarRange vars{1, 3};
    const Block dst = fill_both_ways(dst0, src, {GhostRelation::kSameLevel, f, {}}, vars, false);
    const auto ghosts = face_ghosts(s, f);
    Block got = dst;
    for (const Vec& l : ghosts)
      for (int v = 0; v < 3; ++v)
        EXPECT_EQ(cell(got, v, l), v < 1 ? kSentinel : field(0, v, global_of(s, dc, l))) << f;
    expect_only(dst0, dst, ghosts);
  }
}

TEST_P(StencilGhostShapes, BoundaryEveryFace) {
  const BlockShape& s = GetParam();
  const Vec kN = dims(s);
  for (int f = 0; f < 6; ++f) {
    const Block b0 = make_block(s, 0, {0, 0, 0});
    Block b = b0;
    fill_boundary(b, f, {0, 2}, false);
    const auto ghosts = face_ghosts(s, f);
    for (const Vec& l : ghosts) {
      Vec in = l;
      in[f / 2] = std::clamp(in[f / 2], 1, kN[f / 2]);
      for (int v = 0; v < 3; ++v) EXPECT_EQ(cell(b, v, l), v < 2 ? cell(b, v, in) : kSentinel) << f;
    }
    expect_only(b0, b, ghosts);
  }
}

// Block coordinates (fine level) of the fine block across face f of a coarse block at cb,
// covering quadrant q of that face.
Vec fine_across(Vec cb, int f, Quadrant q) {
  const int a = f / 2;
  const auto [b, c] = in_plane(a);
  Vec fb{};
  fb[b] = 2 * cb[b] + q.q1;
  fb[c] = 2 * cb[c] + q.q2;
  fb[a] = (f & 1) ? 2 * cb[a] + 2 : 2 * cb[a] - 1;
  return fb;
}

int opposite(int f) {
  return f ^ 1;
}

TEST_P(StencilGhostShapes, CoarseToFineEveryFaceAndQuadrant) {
  const BlockShape& s = GetParam();
  const Vec kN = dims(s);
  const Vec cb{2, 2, 2};
  for (int cf = 0; cf < 6; ++cf)  // the coarse block's face toward the fine block
    for (int q = 0; q < 4; ++q) {
      const Quadrant quad{q & 1, q >> 1};
      const Vec fb = fine_across(cb, cf, quad);
      const int f = opposite(cf);  // the fine receiver's ghost face
      const Block coarse = make_block(s, 0, cb);
      const Block fine0 = make_block(s, 1, fb);
      const Block fine =
          fill_both_ways(fine0, coarse, {GhostRelation::kCoarseToFine, f, quad}, {0, 3}, false);
      Block got = fine;
      Block cc = coarse;
      const auto ghosts = face_ghosts(s, f);
      for (const Vec& l : ghosts) {
        const Vec g = global_of(s, fb, l);  // fine-level global cell of the ghost
        Vec cl{};                           // coarse local cell covering it
        for (int d = 0; d < 3; ++d) cl[d] = g[d] / 2 - cb[d] * kN[d] + 1;
        for (int d = 0; d < 3; ++d) ASSERT_TRUE(cl[d] >= 1 && cl[d] <= kN[d]);
        for (int v = 0; v < 3; ++v)
          ASSERT_EQ(cell(got, v, l), cell(cc, v, cl) / 4) << cf << " q" << q;
      }
      expect_only(fine0, fine, ghosts);
      // with_edges must not change a level-change fill
      Block e = fine0;
      fill_direct(e, coarse, {GhostRelation::kCoarseToFine, f, quad}, {0, 3}, true);
      EXPECT_EQ(std::memcmp(e.data(), fine.data(), s.doubles() * sizeof(double)), 0);
    }
}

TEST_P(StencilGhostShapes, FineToCoarseEveryFaceAndQuadrant) {
  const BlockShape& s = GetParam();
  const Vec kN = dims(s);
  const Vec cb{2, 2, 2};
  for (int f = 0; f < 6; ++f)  // the coarse receiver's ghost face
    for (int q = 0; q < 4; ++q) {
      const Quadrant quad{q & 1, q >> 1};
      const Vec fb = fine_across(cb, f, quad);
      const Block fine = make_block(s, 1, fb);
      const Block coarse0 = make_block(s, 0, cb);
      const Block coarse =
          fill_both_ways(coarse0, fine, {GhostRelation::kFineToCoarse, f, quad}, {0, 3}, false);
      Block got = coarse;
      Block ff = fine;
      const int a = f / 2;
      const auto [b, c] = in_plane(a);
      std::vector<Vec> written;
      for (const Vec& l : face_ghosts(s, f)) {
        const Vec g = global_of(s, cb, l);
        // Is this ghost in the fine block's quadrant?
        if (g[b] / (kN[b] / 2) % 2 != quad.q1 || g[c] / (kN[c] / 2) % 2 != quad.q2) continue;
        written.push_back(l);
        for (int v = 0; v < 3; ++v) {
          double want = 0;
          for (int db = 0; db < 2; ++db)
            for (int dc = 0; dc < 2; ++dc) {
              Vec fg{};
              fg[a] = 2 * g[a] + ((f & 1) ? 0 : 1);  // the fine layer touching the coarse block
              fg[b] = 2 * g[b] + db;
              fg[c] = 2 * g[c] + dc;
              Vec fl{};
              for (int d = 0; d < 3; ++d) fl[d] = fg[d] - fb[d] * kN[d] + 1;
              for (int d = 0; d < 3; ++d) ASSERT_TRUE(fl[d] >= 1 && fl[d] <= kN[d]);
              want += cell(ff, v, fl);
            }
          ASSERT_EQ(cell(got, v, l), want) << f << " q" << q;
        }
      }
      EXPECT_EQ(written.size(), face_ghosts(s, f).size() / 4);
      expect_only(coarse0, coarse, written);
    }
}

// Hand-checked numbers on 2x2x2 blocks.
TEST(StencilGhost, HandCheckedTiny) {
  const BlockShape s{2, 2, 2, 1};
  auto idx = [&](int i, int j, int k) { return s.at(i, j, k); };
  Block fine(s), coarse(s);
  // fine +x neighbour of coarse, covering quadrant (q1,q2) = (y,z) = (1,0)
  fine.var(0)[idx(1, 1, 1)] = 1;
  fine.var(0)[idx(1, 1, 2)] = 2;
  fine.var(0)[idx(1, 2, 1)] = 4;
  fine.var(0)[idx(1, 2, 2)] = 8;
  fine.var(0)[idx(2, 1, 1)] = 100;  // not on the face
  fill_direct(coarse, fine, {GhostRelation::kFineToCoarse, 1, {1, 0}}, {0, 1}, false);
  EXPECT_EQ(coarse.var(0)[idx(3, 2, 1)], 15.0);
  EXPECT_EQ(coarse.var(0)[idx(3, 1, 1)], 0.0);
  EXPECT_EQ(coarse.var(0)[idx(3, 2, 2)], 0.0);

  // coarse -z neighbour of a fine block in quadrant (x,y) = (0,1): the coarse cell (1,2,2)
  // feeds all four fine -z ghosts.
  Block c2(s), f2(s);
  c2.var(0)[idx(1, 2, 2)] = 12;
  c2.var(0)[idx(1, 2, 1)] = 99;  // not on the face
  c2.var(0)[idx(1, 1, 2)] = 40;  // other quadrant
  fill_direct(f2, c2, {GhostRelation::kCoarseToFine, 4, {0, 1}}, {0, 1}, false);
  for (int i = 1; i <= 2; ++i)
    for (int j = 1; j <= 2; ++j) EXPECT_EQ(f2.var(0)[idx(i, j, 0)], 3.0);

  // same level +y: ghost (i,3,k) = neighbour (i,1,k)
  Block n(s), d(s);
  n.var(0)[idx(2, 1, 1)] = 5;
  n.var(0)[idx(2, 2, 1)] = 6;
  fill_direct(d, n, {GhostRelation::kSameLevel, 3, {}}, {0, 1}, false);
  EXPECT_EQ(d.var(0)[idx(2, 3, 1)], 5.0);

  // boundary -x: ghost (0,j,k) = (1,j,k)
  Block bb(s);
  bb.var(0)[idx(1, 2, 1)] = 9;
  fill_boundary(bb, 0, {0, 1}, false);
  EXPECT_EQ(bb.var(0)[idx(0, 2, 1)], 9.0);
}

// A 2x2x2 arrangement of same-level blocks with reflective domain boundaries: after the x, y,
// z phases every ghost, including edges and corners when requested, equals the global field at
// its position mirrored into the domain.
void run_phases(std::vector<Block>& blocks, bool edges, bool packed) {
  auto id = [](Vec b) { return b[0] + 2 * b[1] + 4 * b[2]; };
  const VarRange vars{0, kShape.num_vars};
  for (int a = 0; a < 3; ++a)
    for (int n = 0; n < 8; ++n) {
      const Vec bc{n & 1, n >> 1 & 1, n >> 2 & 1};
      for (int f = 2 * a; f < 2 * a + 2; ++f) {
        Vec nb = bc;
        nb[a] += (f & 1) ? 1 : -1;
        if (nb[a] < 0 || nb[a] > 1) {
          fill_boundary(blocks[n], f, vars, edges);
          continue;
        }
        const FaceLink link{GhostRelation::kSameLevel, f, {}};
        if (!packed) {
          fill_direct(blocks[n], blocks[id(nb)], link, vars, edges);
        } else {
          std::vector<double> buf(packed_size(kShape, link.relation, a, vars.count(), edges));
          pack(blocks[id(nb)], link, vars, edges, buf);
          unpack(blocks[n], link, vars, edges, buf);
        }
      }
    }
}

TEST(StencilGhost, EdgesAndCornersFillInSequence) {
  for (const bool edges : {false, true})
    for (const bool packed : {false, true}) {
      std::vector<Block> blocks;
      for (int n = 0; n < 8; ++n) {
        blocks.push_back(make_block(0, {n & 1, n >> 1 & 1, n >> 2 & 1}));
        // ghosts start at 0 as in a fresh block
        Block& b = blocks.back();
        for (std::size_t c = 0; c < kShape.doubles(); ++c)
          if (b.data()[c] == kSentinel) b.data()[c] = 0;
      }
      run_phases(blocks, edges, packed);
      for (int n = 0; n < 8; ++n) {
        const Vec bc{n & 1, n >> 1 & 1, n >> 2 & 1};
        for (int i = 0; i <= kOddN[0] + 1; ++i)
          for (int j = 0; j <= kOddN[1] + 1; ++j)
            for (int k = 0; k <= kOddN[2] + 1; ++k) {
              const Vec l{i, j, k};
              int ghost_axes = 0;
              Vec g = global_of(bc, l);
              for (int d = 0; d < 3; ++d) {
                if (l[d] == 0 || l[d] == kOddN[d] + 1) ++ghost_axes;
                g[d] = std::clamp(g[d], 0, 2 * kOddN[d] - 1);  // reflect at the domain boundary
              }
              for (int v = 0; v < kShape.num_vars; ++v) {
                const double want = (ghost_axes <= 1 || edges) ? field(0, v, g) : 0.0;
                ASSERT_EQ(cell(blocks[n], v, l), want)
                    << "block " << n << " cell " << i << j << k << " edges " << edges;
              }
            }
      }
    }
}

// Random data, every relation, face, quadrant and edge flag: direct == pack + unpack bitwise.
TEST_P(StencilGhostShapes, DirectEqualsPackUnpackRandom) {
  const BlockShape& s = GetParam();
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  auto random_block = [&] {
    Block b(s);
    for (std::size_t n = 0; n < s.doubles(); ++n) b.data()[n] = u(rng) * 1e3;
    return b;
  };
  for (const GhostRelation r :
       {GhostRelation::kSameLevel, GhostRelation::kCoarseToFine, GhostRelation::kFineToCoarse})
    for (int f = 0; f < 6; ++f)
      for (int q = 0; q < 4; ++q)
        for (const bool edges : {false, true})
          for (const VarRange vars : {VarRange{0, 3}, VarRange{1, 2}, VarRange{2, 2}}) {
            const Block src = random_block();
            const Block dst = random_block();
            fill_both_ways(dst, src, {r, f, {q & 1, q >> 1}}, vars, edges);
          }
}

}  // namespace
}  // namespace miniamr::stencil

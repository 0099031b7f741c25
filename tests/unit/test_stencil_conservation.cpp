// Whole small meshes: ghost rules + stencils together. A uniform mesh of blocks must compute
// exactly what one big block computes, and a mesh with a level change must conserve the total
// of the 7-point stencil (the /4 and sum rules are a matched pair, spec §3.5).
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <vector>

#include "stencil/block.hpp"
#include "stencil/exact_sum.hpp"
#include "stencil/ghost_fill.hpp"
#include "stencil/init_values.hpp"
#include "stencil/split_coarsen.hpp"
#include "stencil/stencil_kernels.hpp"

namespace miniamr::stencil {
namespace {

using Vec = std::array<int, 3>;

// 2x2x2 blocks of 4x6x2 cells against one block of 8x12x4 cells, same initial data.
TEST(StencilConservation, UniformMeshEqualsOneBigBlock) {
  const BlockShape s{4, 6, 2, 2};
  const BlockShape big_shape{8, 12, 4, 2};
  for (const int stencil : {7, 27}) {
    const bool edges = stencil == 27;
    Block big(big_shape);
    fill_initial(big, {0, 0, 0}, 0, 3);
    std::vector<Block> blocks;
    for (int n = 0; n < 8; ++n) {
      blocks.emplace_back(s);
      fill_initial(blocks.back(), {(n & 1) * s.nx, (n >> 1 & 1) * s.ny, (n >> 2 & 1) * s.nz}, 0, 3);
    }
    std::vector<double> scratch(stencil_scratch_size(big_shape));
    for (int step = 0; step < 5; ++step) {
      const VarRange vars{0, 2};
      for (int f = 0; f < 6; ++f) {  // x, y, z phases in order
        fill_boundary(big, f, vars, edges);
      }
      for (int a = 0; a < 3; ++a)
        for (int n = 0; n < 8; ++n)
          for (int f = 2 * a; f < 2 * a + 2; ++f) {
            const int bit = (n >> a) & 1;
            const bool outside = (f & 1) ? bit == 1 : bit == 0;
            if (outside) {
              fill_boundary(blocks[n], f, vars, edges);
            } else {
              const FaceLink link{GhostRelation::kSameLevel, f, {}};
              // mix the two forms: direct for even blocks, packed for odd ones
              const Block& src = blocks[n ^ (1 << a)];
              if (n % 2 == 0) {
                fill_direct(blocks[n], src, link, vars, edges);
              } else {
                std::vector<double> buf(packed_size(s, link.relation, a, 2, edges));
                pack(src, link, vars, edges, buf);
                unpack(blocks[n], link, vars, edges, buf);
              }
            }
          }
      for (int v = 0; v < 2; ++v) {
        const double want = stencil == 7 ? stencil7(big, v, scratch) : stencil27(big, v, scratch);
        ExactSum total;
        for (Block& b : blocks)
          total.add(stencil == 7 ? stencil7(b, v, scratch) : stencil27(b, v, scratch));
        EXPECT_NEAR(total.value(), want, 1e-13 * want);
      }
      for (int n = 0; n < 8; ++n)
        for (int v = 0; v < 2; ++v)
          for (int i = 1; i <= s.nx; ++i)
            for (int j = 1; j <= s.ny; ++j)
              for (int k = 1; k <= s.nz; ++k)
                ASSERT_EQ(blocks[n].var(v)[s.at(i, j, k)],
                          big.var(v)[big_shape.at((n & 1) * s.nx + i, (n >> 1 & 1) * s.ny + j,
                                                  (n >> 2 & 1) * s.nz + k)])
                    << "stencil " << stencil << " step " << step;
    }
  }
}

// Domain of 2x1x1 coarse blocks; the +x one is refined into 8 fine blocks. Every face of the
// coarse block toward the fine side meets four fine blocks.
struct RefinedMesh {
  BlockShape s;
  Block coarse;
  std::array<Block, 8> fine;  // by octant

  explicit RefinedMesh(const BlockShape& shape) : s(shape), coarse(shape) {
    fill_initial(coarse, {0, 0, 0}, 0, 21);
    Block parent(s);
    fill_initial(parent, {s.nx, 0, 0}, 0, 21);
    for (int o = 0; o < 8; ++o) fine[o] = split_child(parent, o);
  }

  // One exchange of all three phases, direct or packed.
  void exchange(bool packed) {
    const VarRange vars{0, s.num_vars};
    auto link = [&](Block& dst, const Block& src, const FaceLink& l) {
      if (!packed) return fill_direct(dst, src, l, vars, false);
      std::vector<double> buf(packed_size(s, l.relation, l.face / 2, vars.count(), false));
      pack(src, l, vars, false, buf);
      unpack(dst, l, vars, false, buf);
    };
    for (int a = 0; a < 3; ++a) {
      // coarse block: everything is boundary except +x
      for (int f = 2 * a; f < 2 * a + 2; ++f) {
        if (f != 1) {
          fill_boundary(coarse, f, vars, false);
          continue;
        }
        for (int o = 0; o < 8; ++o)
          if ((o & 1) == 0)
            link(coarse, fine[o], {GhostRelation::kFineToCoarse, 1, {o >> 1 & 1, o >> 2 & 1}});
      }
      for (int o = 0; o < 8; ++o)
        for (int f = 2 * a; f < 2 * a + 2; ++f) {
          const int bit = (o >> a) & 1;
          const bool toward_sibling = (f & 1) ? bit == 0 : bit == 1;
          if (toward_sibling) {
            link(fine[o], fine[o ^ (1 << a)], {GhostRelation::kSameLevel, f, {}});
          } else if (f == 0) {  // fine -x face meets the coarse block
            link(fine[o], coarse, {GhostRelation::kCoarseToFine, 0, {o >> 1 & 1, o >> 2 & 1}});
          } else {
            fill_boundary(fine[o], f, vars, false);
          }
        }
    }
  }

  double step(int v, std::span<double> scratch) {
    ExactSum t;
    t.add(stencil7(coarse, v, scratch));
    for (Block& b : fine) t.add(stencil7(b, v, scratch));
    return t.value();
  }

  double total(int v) const {
    ExactSum t;
    t.add(interior_sum(coarse, v));
    for (const Block& b : fine) t.add(interior_sum(b, v));
    return t.value();
  }
};

TEST(StencilConservation, LevelChangeConservesSevenPoint) {
  for (const BlockShape& s : {BlockShape{4, 4, 4, 2}, BlockShape{6, 2, 4, 1}}) {
    RefinedMesh direct(s), packed(s);
    std::vector<double> scratch(stencil_scratch_size(s));
    for (int v = 0; v < s.num_vars; ++v) {
      const double before = direct.total(v);
      for (int step = 0; step < 20; ++step) {
        direct.exchange(false);
        packed.exchange(true);
        const double after = direct.step(v, scratch);
        packed.step(v, scratch);
        EXPECT_NEAR(after, before, 1e-12 * before) << "step " << step;
      }
    }
    // Direct and packed fills led to bitwise identical meshes.
    EXPECT_EQ(std::memcmp(direct.coarse.data(), packed.coarse.data(), s.doubles() * 8), 0);
    for (int o = 0; o < 8; ++o)
      EXPECT_EQ(std::memcmp(direct.fine[o].data(), packed.fine[o].data(), s.doubles() * 8), 0);
  }
}

}  // namespace
}  // namespace miniamr::stencil

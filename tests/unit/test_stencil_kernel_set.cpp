// The instruction-set variants of the kernels: each level this CPU runs gives bitwise the
// baseline's values and sums, for every stencil, the variable-work kernels and every ghost-fill
// relation, on block shapes that take the fixed-row paths (nz 8, 16) and the generic ones. The
// variants are distinct code: a level the CPU runs has its own functions.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "stencil/block.hpp"
#include "stencil/ghost_fill.hpp"
#include "stencil/ghost_layers.hpp"
#include "stencil/kernel_set.hpp"
#include "stencil/plane_sweep.hpp"
#include "stencil/variable_kernels.hpp"

namespace miniamr::stencil {
namespace {

// Values in [1, 2) with full mantissas, so every rounding difference shows.
Block random_block(const BlockShape& shape, std::uint64_t seed) {
  Block b(shape);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(1.0, 2.0);
  for (std::size_t i = 0; i < shape.doubles(); ++i) b.data()[i] = u(rng);
  return b;
}

bool same_bits(const Block& a, const Block& b) {
  return std::memcmp(a.data(), b.data(), a.shape().doubles() * sizeof(double)) == 0;
}

std::vector<Isa> wider_supported() {
  std::vector<Isa> out;
  for (const Isa isa : {Isa::kAvx2, Isa::kAvx512})
    if (isa_supported(isa)) out.push_back(isa);
  return out;
}

const std::vector<BlockShape> kShapes{{8, 8, 8, 3}, {4, 6, 16, 2}, {5, 3, 7, 2}, {6, 4, 12, 12}};

TEST(KernelSet, NamesRoundTrip) {
  for (const Isa isa : {Isa::kBaseline, Isa::kAvx2, Isa::kAvx512})
    EXPECT_EQ(parse_isa(isa_name(isa)), isa);
  EXPECT_FALSE(parse_isa("avx512"));
  EXPECT_TRUE(isa_supported(Isa::kBaseline));
  EXPECT_TRUE(isa_supported(best_isa()));
  EXPECT_EQ(kernel_set(Isa::kBaseline).isa, Isa::kBaseline);
}

TEST(KernelSet, VariantsAreTheirOwnCode) {
  const KernelSet& base = kernel_set(Isa::kBaseline);
  for (const Isa isa : wider_supported()) {
    const KernelSet& k = kernel_set(isa);
    EXPECT_EQ(k.isa, isa);
    EXPECT_NE(k.stencil7, base.stencil7) << isa_name(isa);
    EXPECT_NE(k.fill_direct, base.fill_direct) << isa_name(isa);
  }
}

TEST(KernelSet, StencilsAreBitwiseTheBaselines) {
  const KernelSet& base = kernel_set(Isa::kBaseline);
  for (const Isa isa : wider_supported()) {
    const KernelSet& k = kernel_set(isa);
    for (const BlockShape& shape : kShapes) {
      std::vector<double> scratch(stencil_scratch_size(shape));
      for (const int points : {7, 27}) {
        Block a = random_block(shape, 11), b = random_block(shape, 11);
        for (int v = 0; v < shape.num_vars; ++v) {
          const double sa = (points == 7 ? base.stencil7 : base.stencil27)(a, v, scratch);
          const double sb = (points == 7 ? k.stencil7 : k.stencil27)(b, v, scratch);
          EXPECT_EQ(std::bit_cast<std::uint64_t>(sa), std::bit_cast<std::uint64_t>(sb))
              << isa_name(isa) << " stencil " << points << " nz " << shape.nz;
        }
        EXPECT_TRUE(same_bits(a, b))
            << isa_name(isa) << " stencil " << points << " nz " << shape.nz;
      }
    }
  }
}

// The wider variants' fixed-row 7-point kernel divides by 7 with a multiplication and two fused
// multiply-adds, exact only for normal quotients; every other value must still come out as the
// division's, bit for bit: zeros of both signs, subnormals, the range ends, infinities, NaNs
// and sums near the bound below which it divides the plain way. Shapes take that kernel (nz 8,
// 16) and the generic rows with (13) and without (12) a vector tail, for both stencils, whose
// other paths keep the division. The cells must match bit for bit, NaNs included.
TEST(KernelSet, StencilsDivideExactlyForEveryValue) {
  using limits = std::numeric_limits<double>;
  const double specials[] = {
      0.0,           -0.0,           limits::infinity(), -limits::infinity(),  limits::quiet_NaN(),
      limits::max(), -limits::max(), limits::min(),      limits::denorm_min(), 0x1p-960,
      0x1p-957,      -0x1.8p-958};
  const KernelSet& base = kernel_set(Isa::kBaseline);
  for (const Isa isa : wider_supported()) {
    const KernelSet& k = kernel_set(isa);
    for (const BlockShape& shape : {BlockShape{8, 8, 8, 2}, BlockShape{4, 5, 16, 2},
                                    BlockShape{3, 4, 13, 2}, BlockShape{3, 3, 12, 2}}) {
      std::vector<double> scratch(stencil_scratch_size(shape));
      for (const int points : {7, 27}) {
        const auto sweep = [points](const KernelSet& ks) {
          return points == 7 ? ks.stencil7 : ks.stencil27;
        };
        const std::string what = std::string(isa_name(isa)) + " stencil " + std::to_string(points) +
                                 " nz " + std::to_string(shape.nz);
        for (const std::uint64_t seed : {23u, 29u, 31u}) {
          // Random signs and exponents over the whole range, a special value in one cell of 16.
          Block a(shape);
          std::mt19937_64 rng(seed);
          for (std::size_t i = 0; i < shape.doubles(); ++i) {
            const std::uint64_t r = rng();
            const double mantissa = 1.0 + double(r >> 12) * 0x1p-52;
            const int exponent = int((r >> 1) % 2098) - 1074;
            a.data()[i] = r % 16 == 0 ? specials[(r >> 4) % std::size(specials)]
                                      : std::ldexp(r & 1 ? -mantissa : mantissa, exponent);
          }
          Block b = a;
          for (int v = 0; v < shape.num_vars; ++v) {
            const double sa = sweep(base)(a, v, scratch);
            const double sb = sweep(k)(b, v, scratch);
            // A sum over NaNs is NaN in every variant, but which NaN operand an addition
            // returns (and so the sign) depends on how the compiler ordered it.
            if (std::isnan(sa))
              EXPECT_TRUE(std::isnan(sb)) << what;
            else
              EXPECT_EQ(std::bit_cast<std::uint64_t>(sa), std::bit_cast<std::uint64_t>(sb)) << what;
          }
          EXPECT_TRUE(same_bits(a, b)) << what << " seed " << seed;
        }
        // Equal values everywhere: every quotient near the bound, at it and across it.
        for (const double x : {0x1p-960, 0x1.fffffffffffffp-961, 0x1p-955, -0x1.5p-957, -0.0}) {
          Block a(shape);
          std::fill_n(a.data(), shape.doubles(), x);
          Block b = a;
          sweep(base)(a, 0, scratch);
          sweep(k)(b, 0, scratch);
          EXPECT_TRUE(same_bits(a, b)) << what << " value " << x;
        }
      }
    }
  }
}

TEST(KernelSet, VariableKernelsAreBitwiseTheBaselines) {
  const KernelSet& base = kernel_set(Isa::kBaseline);
  const BlockShape shape{6, 4, 12, 12};
  const VariableCoeffs coeffs = make_variable_coeffs(shape.num_vars, 5);
  std::vector<double> scratch(stencil_scratch_size(shape));
  for (const Isa isa : wider_supported()) {
    const KernelSet& k = kernel_set(isa);
    for (std::int64_t stage = 0; stage < 6; ++stage) {
      Block a = random_block(shape, 13), b = random_block(shape, 13);
      for (int v = 0; v < shape.num_vars; ++v) {
        const double sa = base.stencil_variable(a, v, stage, coeffs, scratch);
        const double sb = k.stencil_variable(b, v, stage, coeffs, scratch);
        EXPECT_EQ(std::bit_cast<std::uint64_t>(sa), std::bit_cast<std::uint64_t>(sb));
      }
      EXPECT_TRUE(same_bits(a, b)) << isa_name(isa) << " stage " << stage;
    }
  }
}

TEST(KernelSet, GhostFillsAreBitwiseTheBaselines) {
  const KernelSet& base = kernel_set(Isa::kBaseline);
  const VarRange vars{0, 2};
  for (const Isa isa : wider_supported()) {
    const KernelSet& k = kernel_set(isa);
    for (const BlockShape& shape : kShapes) {
      const Block src = random_block(shape, 17);
      for (const GhostRelation rel : {GhostRelation::kSameLevel, GhostRelation::kCoarseToFine,
                                      GhostRelation::kFineToCoarse}) {
        for (int face = 0; face < 6; ++face) {
          for (const bool edges : {false, true}) {
            const bool even = shape.nx % 2 == 0 && shape.ny % 2 == 0 && shape.nz % 2 == 0;
            // Level changes need even faces and never fill edges.
            if (rel != GhostRelation::kSameLevel && (edges || !even)) continue;
            const FaceLink link{rel, face, {1, 0}};
            const std::string what = std::string(isa_name(isa)) + " relation " +
                                     std::to_string(int(rel)) + " face " + std::to_string(face);
            Block a = random_block(shape, 19), b = random_block(shape, 19);
            base.fill_direct(a, src, link, vars, edges);
            k.fill_direct(b, src, link, vars, edges);
            EXPECT_TRUE(same_bits(a, b)) << what;
            std::vector<double> pa(packed_size(shape, rel, face / 2, vars.count(), edges));
            std::vector<double> pb(pa.size());
            EXPECT_EQ(base.pack(src, link, vars, edges, pa), k.pack(src, link, vars, edges, pb));
            EXPECT_EQ(pa, pb) << what;
            base.unpack(a, link, vars, edges, pa);
            k.unpack(b, link, vars, edges, pb);
            EXPECT_TRUE(same_bits(a, b)) << what;
            base.fill_boundary(a, face, vars, edges);
            k.fill_boundary(b, face, vars, edges);
            EXPECT_TRUE(same_bits(a, b)) << what;
          }
        }
      }
    }
  }
}

// The 7-point kernel reading ghost faces from other layers (ghost_layers.hpp) gives bitwise the
// values and sums of the plain kernel on a block whose ghosts were filled from those layers: a
// same-level neighbour's facing layer (fill_direct; packed by pack() for kPacked) or the block's
// own layer next to a boundary face (fill_boundary). Every variant, the fixed-row shapes and the
// generic ones (which copy the layers into the ghosts first), each face read each of the four
// ways, the layers stepped from variable to variable. The block's own ghosts start random, so a
// face the kernel read from its stale ghosts would show.
TEST(KernelSet, Stencil7FromLayersIsStencil7AfterFills) {
  using Kind = GhostSource::Kind;
  std::vector<Isa> isas = wider_supported();
  isas.insert(isas.begin(), Isa::kBaseline);
  for (const Isa isa : isas) {
    const KernelSet& k = kernel_set(isa);
    for (const BlockShape& shape : kShapes) {
      std::vector<double> scratch(stencil_scratch_size(shape));
      const VarRange all{0, shape.num_vars};
      std::vector<Block> neighbours;
      std::vector<std::vector<double>> packed;
      for (int f = 0; f < 6; ++f) {
        neighbours.push_back(random_block(shape, 40 + std::uint64_t(f)));
        const FaceLink link{GhostRelation::kSameLevel, f, {}};
        packed.emplace_back(
            packed_size(shape, GhostRelation::kSameLevel, f / 2, all.count(), false));
        k.pack(neighbours.back(), link, all, false, packed.back());
      }
      for (int pattern = 0; pattern < 4; ++pattern) {
        GhostSources sources;
        Block want = random_block(shape, 23);
        for (int f = 0; f < 6; ++f) {
          const auto kind = Kind((f + pattern) % 4);
          const auto face = std::size_t(f);
          sources[face] = {kind, &neighbours[face], packed[face].data(),
                           packed[face].size() / std::size_t(all.count()), 0};
          if (kind == Kind::kNeighbour || kind == Kind::kPacked)
            k.fill_direct(want, neighbours[face], {GhostRelation::kSameLevel, f, {}}, all, false);
          if (kind == Kind::kMirror) k.fill_boundary(want, f, all, false);
        }
        Block got = random_block(shape, 23);
        const std::string what = std::string(isa_name(isa)) + " nz " + std::to_string(shape.nz) +
                                 " pattern " + std::to_string(pattern);
        GhostLayers layers = ghost_layers(got, 0, sources);
        for (int v = 0; v < shape.num_vars; ++v) {
          if (v > 0) layers.next_var();
          const double sw = k.stencil7(want, v, scratch);
          const double sg = k.stencil7_from(got, v, layers, scratch);
          EXPECT_EQ(std::bit_cast<std::uint64_t>(sw), std::bit_cast<std::uint64_t>(sg)) << what;
          for (int i = 1; i <= shape.nx; ++i)
            for (int j = 1; j <= shape.ny; ++j)
              ASSERT_EQ(0,
                        std::memcmp(&want.var(v)[shape.at(i, j, 1)], &got.var(v)[shape.at(i, j, 1)],
                                    std::size_t(shape.nz) * sizeof(double)))
                  << what << " var " << v << " row " << i << "," << j;
        }
      }
    }
  }
}

}  // namespace
}  // namespace miniamr::stencil

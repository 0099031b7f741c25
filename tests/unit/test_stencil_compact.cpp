// The compact 7-point sweep and the ghost fills between compact senders and dense ghost layers,
// against the padded kernels and fills, bitwise (stencil/compact_stencil.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <span>
#include <vector>

#include "stencil/compact_stencil.hpp"
#include "stencil/face_geom.hpp"
#include "stencil/ghost_fill.hpp"
#include "stencil/ghost_layers.hpp"
#include "stencil/init_values.hpp"
#include "stencil/kernel_set.hpp"
#include "stencil/plane_sweep.hpp"

namespace miniamr::stencil {
namespace {

constexpr BlockShape kShape{8, 8, 8, 3};
constexpr VarRange kAll{0, 3};

// Interior and ghosts all different and non-zero, times `scale`.
Block random_block(std::uint64_t seed, double scale = 1.0) {
  Block b(kShape);
  fill_initial(b, {0, 0, 0}, 0, seed);
  for (int v = 0; v < kShape.num_vars; ++v)
    for (int i = 0; i <= 9; ++i)
      for (int j = 0; j <= 9; ++j)
        for (int k = 0; k <= 9; ++k) {
          double& x = b.var(v)[kShape.at(i, j, k)];
          if (i % 9 == 0 || j % 9 == 0 || k % 9 == 0)
            x = 1.0 + double((i * 7 + j * 3 + k + 5 * v) % 11);
          x *= scale;
        }
  return b;
}

// Ghost face `face` of variable v of a padded block, as a dense layer.
std::vector<double> dense_ghosts(const Block& b, int v, int face) {
  const FaceGeom g = face_geom(kShape, face, false);
  std::vector<double> out;
  for (int ib = 1; ib <= g.nb; ++ib)
    for (int ic = 1; ic <= g.nc; ++ic) out.push_back(b.var(v)[g.ghost + ib * g.sb + ic * g.sc]);
  return out;
}

bool same_interior(const Block& padded, CompactVars& compact, std::size_t index) {
  for (int v = kAll.v0; v < kAll.v1; ++v)
    for (int i = 0; i < 8; ++i)
      for (int j = 0; j < 8; ++j)
        if (std::memcmp(&padded.var(v)[kShape.at(i + 1, j + 1, 1)],
                        compact.var(index, v) + (i * 8 + j) * 8, 8 * sizeof(double)) != 0)
          return false;
  return true;
}

// Each face read from one of the four places a sweep finds it (kinds rotated by `turn`), and
// every own layer copied out: the compact sweep gives the padded AVX-512 kernel's values, sums
// and copies; also with values so small that the division takes its plain way (quotients near
// or below the smallest normal).
TEST(CompactStencil, SweepMatchesThePaddedKernel) {
  if (!compact_stencil7_supported()) GTEST_SKIP() << "no AVX-512 on this machine";
  const KernelSet& k = kernel_set(Isa::kAvx512);
  for (int round = 0; round < 8; ++round) {
    const int turn = round % 4;
    const double scale = round < 4 ? 1.0 : 1e-305;
    Block a = random_block(11 + std::uint64_t(turn), scale), n = random_block(31, scale);
    // The packed faces of the neighbour, as a message or a deferred face holds them.
    std::vector<std::vector<double>> packed(6);
    for (int f = 0; f < 6; ++f) {
      packed[std::size_t(f)].resize(64 * 3);
      pack(n, {GhostRelation::kSameLevel, f, {}}, kAll, false, packed[std::size_t(f)]);
    }
    std::vector<std::vector<double>> ghosts(6);  // a's ghost faces as dense layers
    for (int f = 0; f < 6; ++f)
      for (int v = 0; v < 3; ++v) {
        const auto g = dense_ghosts(a, v, f);
        ghosts[std::size_t(f)].insert(ghosts[std::size_t(f)].end(), g.begin(), g.end());
      }
    CompactVars compact;
    const std::vector<Block> pair{a, n};
    compact.load(pair, kAll);
    GhostSources sources;
    GhostLayers c;
    for (int f = 0; f < 6; ++f) {
      const auto kind = GhostSource::Kind((f + turn) % 4);
      auto& s = sources[std::size_t(f)];
      s.kind = kind;
      auto& l = c.face[std::size_t(f)];
      if (kind == GhostSource::Kind::kGhost) {
        l = {ghosts[std::size_t(f)].data(), 8, 1, 64};
      } else if (kind == GhostSource::Kind::kMirror || kind == GhostSource::Kind::kNeighbour) {
        const bool own = kind == GhostSource::Kind::kMirror;
        s.neighbour = &n;
        const LayerPlace at = compact_layer_place(f, own);
        l = {compact.var(own ? 0 : 1, 0) + at.offset, at.sb, at.sc, 512};
      } else {
        s.packed = packed[std::size_t(f)].data();
        s.packed_stride = 64;
        l = {packed[std::size_t(f)].data(), 8, 1, 64};
      }
    }
    // Every own layer copied out, by both sweeps; pack() of the block before them is the truth.
    std::vector<std::vector<double>> want(6), got_padded(6), got_compact(6);
    for (int f = 0; f < 6; ++f) {
      want[std::size_t(f)].resize(64 * 3);
      pack(a, {GhostRelation::kSameLevel, f ^ 1, {}}, kAll, false, want[std::size_t(f)]);
      got_padded[std::size_t(f)].assign(64 * 3, -1.0);
      got_compact[std::size_t(f)].assign(64 * 3, -2.0);
    }
    std::vector<double> scratch(stencil_scratch_size(kShape));
    for (int v = 0; v < 3; ++v) {
      GhostLayers p = ghost_layers(a, v, sources);
      GhostLayers cv = c;
      for (int w = 0; w < v; ++w) cv.next_var();  // variable v's faces
      for (int f = 0; f < 6; ++f) {
        p.copy[std::size_t(f)] = {got_padded[std::size_t(f)].data() + 64 * v, 64};
        cv.copy[std::size_t(f)] = {got_compact[std::size_t(f)].data() + 64 * v, 64};
      }
      const double sp = k.stencil7_from(a, v, p, scratch);
      const double sc = compact_stencil7(compact.var(0, v), cv, scratch);
      EXPECT_EQ(std::memcmp(&sp, &sc, sizeof sp), 0) << "turn " << turn << " var " << v;
    }
    EXPECT_TRUE(same_interior(a, compact, 0)) << "turn " << turn;
    for (int f = 0; f < 6; ++f) {
      EXPECT_EQ(got_padded[std::size_t(f)], want[std::size_t(f)]) << "padded copy " << f;
      EXPECT_EQ(got_compact[std::size_t(f)], want[std::size_t(f)]) << "compact copy " << f;
    }
  }
}

// Every face, relation and quadrant, at every instruction-set level this machine runs:
// fill_layer, pack_compact and unpack_layer write what the baseline's fill_direct, pack and
// unpack write.
TEST(CompactStencil, FillsFromCompactSendersMatchThePaddedFills) {
  const Block src = random_block(41);
  CompactVars compact;
  const std::vector<Block> one{src};
  compact.load(one, kAll);
  int checked = 0, levels = 0;
  for (const Isa isa : {Isa::kBaseline, Isa::kAvx2, Isa::kAvx512}) {
    if (!isa_supported(isa)) continue;
    ++levels;
    const KernelSet& k = kernel_set(isa);
    for (int face = 0; face < 6; ++face)
      for (const GhostRelation rel :
           {GhostRelation::kSameLevel, GhostRelation::kCoarseToFine, GhostRelation::kFineToCoarse})
        for (int q = 0; q < (rel == GhostRelation::kSameLevel ? 1 : 4); ++q) {
          const FaceLink link{rel, face, {q & 1, q >> 1}};
          const std::string what = std::string(isa_name(isa)) + " face " + std::to_string(face) +
                                   " relation " + std::to_string(int(rel)) + " quadrant " +
                                   std::to_string(q);
          // Direct fills: the receiver's ghost face against a dense layer that started the same.
          Block dst = random_block(43);
          std::vector<double> layer;
          for (int v = 0; v < 3; ++v) {
            const auto g = dense_ghosts(dst, v, face);
            layer.insert(layer.end(), g.begin(), g.end());
          }
          std::vector<double> layer2 = layer;
          fill_direct(dst, src, link, kAll, false);
          k.fill_layer(layer.data(), 64, compact.var(0, 0), 512, kShape, link, kAll);
          std::vector<double> want;
          for (int v = 0; v < 3; ++v) {
            const auto g = dense_ghosts(dst, v, face);
            want.insert(want.end(), g.begin(), g.end());
          }
          EXPECT_EQ(layer, want) << what;
          // Packed faces, and unpacking them.
          const std::size_t size = packed_size(kShape, rel, face / 2, 3, false);
          std::vector<double> a(size, -1.0), b(size, -2.0);
          EXPECT_EQ(pack(src, link, kAll, false, a), size) << what;
          EXPECT_EQ(k.pack_compact(compact.var(0, 0), 512, kShape, link, kAll, b), size) << what;
          EXPECT_EQ(a, b) << what;
          Block dst2 = random_block(43);
          unpack(dst2, link, kAll, false, a);
          EXPECT_EQ(k.unpack_layer(layer2.data(), 64, kShape, link, kAll, a), size) << what;
          EXPECT_EQ(layer2, want) << what;
          for (int v = 0; v < 3; ++v)  // and what unpack() wrote into the padded ghosts
            EXPECT_TRUE(std::equal(want.begin() + 64 * v, want.begin() + 64 * (v + 1),
                                   dense_ghosts(dst2, v, face).begin()))
                << what;
          ++checked;
        }
  }
  EXPECT_EQ(checked, 6 * 9 * levels);
}

TEST(CompactStencil, LoadAndStoreRoundTrip) {
  std::vector<Block> blocks{random_block(51), random_block(52)};
  const std::vector<Block> before = blocks;
  CompactVars compact;
  compact.load(blocks, {1, 3});
  EXPECT_TRUE(compact.loaded());
  for (std::size_t b = 0; b < 2; ++b)
    for (int v = 1; v < 3; ++v) {
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(compact.var(b, v)) % 64, 0u);
      compact.var(b, v)[(3 * 8 + 4) * 8 + 5] += 1.0;  // cell (4, 5, 6)
    }
  compact.store(blocks);
  EXPECT_FALSE(compact.loaded());
  for (std::size_t b = 0; b < 2; ++b)
    for (int v = 0; v < 3; ++v)
      for (std::size_t c = 0; c < kShape.cells(); ++c) {
        const double was = before[b].var(v)[c];
        const double now = blocks[b].var(v)[c];
        EXPECT_EQ(now, v > 0 && c == kShape.at(4, 5, 6) ? was + 1.0 : was) << b << " " << v;
      }
}

}  // namespace
}  // namespace miniamr::stencil

// Micro-benchmarks of miniamr's kernels (Google Benchmark). Built by default, never run by the
// tests. Rates: bytes/s counts the doubles a kernel must read and write (8 bytes each; a stencil
// update is one read and one write, 16 bytes), items/s counts what the name says (cell-variable
// updates, ghost cell-variables, keys, lookups, weights).
//
//   build-bench/bench/miniamr_bench --benchmark_filter=Stencil
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <sys/mman.h>

#include "octree/key.hpp"
#include "octree/leaf_set.hpp"
#include "sfc/partition.hpp"
#include "sphere_octree.hpp"
#include "stencil/block.hpp"
#include "stencil/block_arena.hpp"
#include "stencil/compact_stencil.hpp"
#include "stencil/ghost_fill.hpp"
#include "stencil/ghost_layers.hpp"
#include "stencil/kernel_set.hpp"
#include "stencil/pages.hpp"
#include "stencil/plane_sweep.hpp"
#include "stencil/split_coarsen.hpp"
#include "stencil/stencil_kernels.hpp"

namespace {

using namespace miniamr;
using stencil::Block;
using stencil::BlockShape;
using stencil::GhostRelation;

// Every cell (ghosts included) set to a value in [1, 2): averaging keeps them there, so no
// denormals or overflow however long a benchmark iterates.
Block make_block(const BlockShape& shape, std::uint64_t seed) {
  Block b(shape);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(1.0, 2.0);
  for (std::size_t i = 0; i < shape.doubles(); ++i) b.data()[i] = u(rng);
  return b;
}

BlockShape cube(int n, int vars) {
  return BlockShape{n, n, n, vars};
}

// The kernels of the instruction-set level given as argument `arg` (0 x86-64, 1 x86-64-v3,
// 2 x86-64-v4), labelled with its name; nullptr (the benchmark skipped) where the CPU lacks it.
const stencil::KernelSet* kernels_for(benchmark::State& state, int arg) {
  const auto isa = static_cast<stencil::Isa>(state.range(arg));
  if (!stencil::isa_supported(isa)) {
    state.SkipWithError("this CPU does not run this instruction-set level");
    return nullptr;
  }
  state.SetLabel(std::string(stencil::isa_name(isa)));
  return &stencil::kernel_set(isa);
}

const std::vector<std::int64_t> kIsas{0, 1, 2};

// ---- stencils: one block, every variable per iteration ----------------------------------------

template <int Points>
void BM_Stencil(benchmark::State& state) {
  const stencil::KernelSet* k = kernels_for(state, 2);
  if (k == nullptr) return;
  const auto Kernel = Points == 7 ? k->stencil7 : k->stencil27;
  const BlockShape shape = cube(int(state.range(0)), int(state.range(1)));
  Block b = make_block(shape, 1);
  std::vector<double> scratch(stencil::stencil_scratch_size(shape));
  for (auto _ : state) {
    double sum = 0;
    for (int v = 0; v < shape.num_vars; ++v) sum += Kernel(b, v, scratch);
    benchmark::DoNotOptimize(sum);
  }
  const auto updates = std::int64_t(shape.interior_cells()) * shape.num_vars;
  state.SetItemsProcessed(state.iterations() * updates);
  state.SetBytesProcessed(state.iterations() * updates * 16);
}
BENCHMARK(BM_Stencil<7>)
    ->Name("BM_Stencil7")
    ->ArgNames({"nx", "vars", "isa"})
    ->ArgsProduct({{8, 16, 32}, {1, 40}, kIsas});
BENCHMARK(BM_Stencil<27>)
    ->Name("BM_Stencil27")
    ->ArgNames({"nx", "vars", "isa"})
    ->ArgsProduct({{8, 16, 32}, {1, 40}, kIsas});

// ---- a chunk's working set: many 8^3 blocks of two variables, each swept once per pass --------
// A stage of the static runtime sweeps every block of a chunk once, so its blocks come from L2
// (or further) rather than L1 as in BM_Stencil7. Blocks are allocated one after the other, as
// a mesh's are; the rate against the block count shows where the cache levels end.
void BM_Stencil7Chunk(benchmark::State& state) {
  const stencil::KernelSet* k = kernels_for(state, 1);
  if (k == nullptr) return;
  const BlockShape shape = cube(8, 2);
  std::vector<Block> blocks;
  for (std::int64_t b = 0; b < state.range(0); ++b)
    blocks.push_back(make_block(shape, 1 + std::uint64_t(b)));
  std::vector<double> scratch(stencil::stencil_scratch_size(shape));
  for (auto _ : state) {
    double sum = 0;
    for (Block& b : blocks)
      for (int v = 0; v < shape.num_vars; ++v) sum += k->stencil7(b, v, scratch);
    benchmark::DoNotOptimize(sum);
  }
  const auto updates = std::int64_t(shape.interior_cells()) * shape.num_vars * state.range(0);
  state.SetItemsProcessed(state.iterations() * updates);
  state.counters["kib"] = double(state.range(0) * std::int64_t(shape.doubles()) * 8) / 1024.0;
}
BENCHMARK(BM_Stencil7Chunk)
    ->ArgNames({"blocks", "isa"})
    ->ArgsProduct({{1, 8, 32, 64, 128, 256, 1024}, {2}});

// ---- layout study: the 7-point sweep of a compact interior -------------------------------------
// Blocks are stored with their ghosts (a 10^3 box for an 8^3 interior), so an interior row of
// eight starts 8 bytes into an 80-byte row: most row loads and stores span two cache lines, and
// a chunk's blocks bring their ghost lines along. BM_Stencil7Layout sweeps one chunk of 8^3
// blocks, two variables of 40 through 20 stages as run_stages does, with the padded AVX-512
// kernel (compact:0) or the compact one that the static mapper runs (compact:1,
// stencil/compact_stencil.hpp). neighbours:0 reads every face from the block's own layer next to
// it (domain-boundary faces), neighbours:1 from the facing layer of the next block of the chunk
// (same-level faces read in place). BM_Stencil7LayoutCheck counts the cells where their results
// differ.

// One stage of variables [v0, v0 + 2) over every block of the chunk, in either layout; block
// b's same-level neighbours are all block b + 1 (cyclically).
struct LayoutChunk {
  std::vector<Block> padded;
  stencil::CompactVars compact;
  std::vector<double> scratch;

  explicit LayoutChunk(std::size_t blocks) : padded(make_blocks(blocks)) {
    compact.load(padded, {0, 40});
    scratch.resize(stencil::stencil_scratch_size(padded.front().shape()));
  }
  static std::vector<Block> make_blocks(std::size_t n) {
    std::vector<Block> b;
    for (std::size_t i = 0; i < n; ++i) b.push_back(make_block(cube(8, 40), 1 + i));
    return b;
  }
  double stage(const stencil::KernelSet& k, bool compact_layout, bool neighbours, int v0) {
    double sum = 0;
    const std::size_t n = padded.size();
    for (std::size_t b = 0; b < n; ++b)
      for (int v = v0; v < v0 + 2; ++v) {
        const std::size_t next = (b + 1) % n;
        if (compact_layout) {
          stencil::GhostLayers l;
          for (int f = 0; f < 6; ++f) {
            const stencil::LayerPlace at = stencil::compact_layer_place(f, !neighbours);
            l.face[std::size_t(f)] = {compact.var(neighbours ? next : b, v) + at.offset, at.sb,
                                      at.sc, 512};
          }
          sum += stencil::compact_stencil7(compact.var(b, v), l, scratch);
        } else {
          stencil::GhostSources sources;
          for (auto& f : sources)
            f = neighbours
                    ? stencil::GhostSource{stencil::GhostSource::Kind::kNeighbour, &padded[next]}
                    : stencil::GhostSource{stencil::GhostSource::Kind::kMirror};
          sum +=
              k.stencil7_from(padded[b], v, stencil::ghost_layers(padded[b], v, sources), scratch);
        }
      }
    return sum;
  }
};

void BM_Stencil7Layout(benchmark::State& state) {
  if (!stencil::compact_stencil7_supported()) {
    state.SkipWithError("the compact kernel is AVX-512 code");
    return;
  }
  const stencil::KernelSet& k = stencil::kernel_set(stencil::Isa::kAvx512);
  LayoutChunk chunk(std::size_t(state.range(0)));
  const bool compact = state.range(1) != 0, neighbours = state.range(2) != 0;
  for (auto _ : state) {
    double sum = 0;
    for (int v0 = 0; v0 < 40; v0 += 2)
      for (int stage = 0; stage < 20; ++stage) sum += chunk.stage(k, compact, neighbours, v0);
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0) * 512 * 40 * 20);
  state.counters["chunk_kib"] = double(state.range(0)) * 2 * (compact ? 512 : 1000) * 8 / 1024;
}
BENCHMARK(BM_Stencil7Layout)
    ->ArgNames({"blocks", "compact", "neighbours"})
    ->ArgsProduct({{8, 32, 64, 96}, {0, 1}, {0, 1}});

// Cells (and sums) where the two layouts' results differ after three stages: 0 expected.
void BM_Stencil7LayoutCheck(benchmark::State& state) {
  if (!stencil::compact_stencil7_supported()) {
    state.SkipWithError("the compact kernel is AVX-512 code");
    return;
  }
  const stencil::KernelSet& k = stencil::kernel_set(stencil::Isa::kAvx512);
  std::int64_t differ = 0;
  for (const bool neighbours : {false, true}) {
    LayoutChunk chunk(4);
    for (int stage = 0; stage < 3; ++stage)
      differ += chunk.stage(k, false, neighbours, 6) != chunk.stage(k, true, neighbours, 6);
    for (std::size_t b = 0; b < 4; ++b)
      for (int v = 6; v < 8; ++v)
        for (int i = 0; i < 8; ++i)
          for (int j = 0; j < 8; ++j)
            for (int c = 0; c < 8; ++c)
              differ += chunk.padded[b].var(v)[chunk.padded[b].shape().at(i + 1, j + 1, c + 1)] !=
                        chunk.compact.var(b, v)[(i * 8 + j) * 8 + c];
  }
  for (auto _ : state) benchmark::DoNotOptimize(differ);
  state.counters["cells_that_differ"] = double(differ);
}
BENCHMARK(BM_Stencil7LayoutCheck);

// ---- a block's 7-point stage with its six ghost faces: filled, or read in place ---------------
// Mode 0: the six faces filled from same-level neighbours (fill_direct), then the sweep; 1: the
// sweep reading the neighbours' facing layers in place (ghost_layers.hpp); 2: six boundary
// faces filled (fill_boundary), then the sweep; 3: the sweep reading the block's own layers
// next to them. Same values and bits either way; the difference is the fills' cost.
void BM_Stencil7Faces(benchmark::State& state) {
  const stencil::KernelSet* k = kernels_for(state, 2);
  if (k == nullptr) return;
  const BlockShape shape = cube(int(state.range(0)), int(state.range(1)));
  const auto mode = state.range(3);
  Block b = make_block(shape, 1);
  std::vector<Block> neighbours;
  for (int f = 0; f < 6; ++f) neighbours.push_back(make_block(shape, 2 + std::uint64_t(f)));
  stencil::GhostSources sources;
  for (std::size_t f = 0; f < 6; ++f) {
    if (mode == 1) sources[f] = {stencil::GhostSource::Kind::kNeighbour, &neighbours[f]};
    if (mode == 3) sources[f].kind = stencil::GhostSource::Kind::kMirror;
  }
  const stencil::VarRange all{0, shape.num_vars};
  std::vector<double> scratch(stencil::stencil_scratch_size(shape));
  for (auto _ : state) {
    double sum = 0;
    for (int f = 0; f < 6 && mode == 0; ++f)
      k->fill_direct(b, neighbours[std::size_t(f)], {GhostRelation::kSameLevel, f, {}}, all, false);
    for (int f = 0; f < 6 && mode == 2; ++f) k->fill_boundary(b, f, all, false);
    stencil::GhostLayers layers = stencil::ghost_layers(b, 0, sources);
    for (int v = 0; v < shape.num_vars; ++v) {
      if (v > 0) layers.next_var();
      sum += mode == 0 || mode == 2 ? k->stencil7(b, v, scratch)
                                    : k->stencil7_from(b, v, layers, scratch);
    }
    benchmark::DoNotOptimize(sum);
  }
  const auto updates = std::int64_t(shape.interior_cells()) * shape.num_vars;
  state.SetItemsProcessed(state.iterations() * updates);
}
BENCHMARK(BM_Stencil7Faces)
    ->ArgNames({"nx", "vars", "isa", "mode"})
    ->ArgsProduct({{8, 16}, {2, 40}, kIsas, {0, 1, 2, 3}});

// ---- the harness itself ----------------------------------------------------------------------
// Debian's libbenchmark is built as DEBUG (its banner warns that timings may be affected). Only
// the library's own, out-of-line code is unoptimised: the timed loop (`for (auto _ : state)`)
// is inline in this file and built with this project's flags, and the library reads its clocks
// once per batch of iterations. BM_HarnessEmpty gives the loop's cost per iteration;
// BM_Stencil7SelfTimed runs BM_Stencil7's 8^3 sweep but times every batch of kCalls sweeps with
// std::chrono itself (manual time), so the two figures for the same work show whether the
// library's timing adds anything.
void BM_HarnessEmpty(benchmark::State& state) {
  for (auto _ : state) benchmark::ClobberMemory();
}
BENCHMARK(BM_HarnessEmpty);

void BM_Stencil7SelfTimed(benchmark::State& state) {
  const stencil::KernelSet* k = kernels_for(state, 0);
  if (k == nullptr) return;
  constexpr int kCalls = 1000;
  const BlockShape shape = cube(8, 1);
  Block b = make_block(shape, 1);
  std::vector<double> scratch(stencil::stencil_scratch_size(shape));
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    double sum = 0;
    for (int c = 0; c < kCalls; ++c) sum += k->stencil7(b, 0, scratch);
    benchmark::DoNotOptimize(sum);
    const auto t1 = std::chrono::steady_clock::now();
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
  }
  // Per sweep, in the units BM_Stencil7 reports per iteration.
  state.counters["ns_per_sweep"] = benchmark::Counter(
      double(state.iterations()) * kCalls,
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert, benchmark::Counter::kIs1000);
}
BENCHMARK(BM_Stencil7SelfTimed)->ArgName("isa")->ArgsProduct({kIsas})->UseManualTime();

// ---- ghost fills of one face, 1 or 40 variables per call ---------------------------------

enum Fill { kSame, kCoarseToFine, kFineToCoarse, kBoundary, kPackUnpack };

// Doubles read + written for one face of `vars` variables (f = interior cells of the face).
std::int64_t fill_traffic(Fill kind, std::int64_t f) {
  switch (kind) {
    case kSame:
    case kBoundary:
      return 2 * f;  // read the adjacent layer, write the ghosts
    case kCoarseToFine:
    case kFineToCoarse:
      return f + f / 4;  // one side is a quarter face
    case kPackUnpack:
      return 4 * f;  // into the buffer, out of it
  }
  return 0;
}

template <Fill kind>
void BM_GhostFill(benchmark::State& state) {
  const stencil::KernelSet* k = kernels_for(state, 3);
  if (k == nullptr) return;
  const int n = int(state.range(0));
  const int face = int(state.range(1));
  const BlockShape shape = cube(n, int(state.range(2)));
  Block dst = make_block(shape, 2);
  const Block src = make_block(shape, 3);
  const stencil::VarRange vars{0, shape.num_vars};
  stencil::FaceLink link{GhostRelation::kSameLevel, face, {1, 0}};
  if (kind == kCoarseToFine) link.relation = GhostRelation::kCoarseToFine;
  if (kind == kFineToCoarse) link.relation = GhostRelation::kFineToCoarse;
  std::vector<double> buffer(
      stencil::packed_size(shape, link.relation, face / 2, shape.num_vars, false));
  for (auto _ : state) {
    if constexpr (kind == kBoundary) {
      k->fill_boundary(dst, face, vars, false);
    } else if constexpr (kind == kPackUnpack) {
      k->pack(src, link, vars, false, buffer);
      k->unpack(dst, link, vars, false, buffer);
    } else {
      k->fill_direct(dst, src, link, vars, false);
    }
    benchmark::ClobberMemory();
  }
  const std::int64_t f = std::int64_t(n) * n * shape.num_vars;  // ghost cell-variables
  state.SetItemsProcessed(state.iterations() * f);
  state.SetBytesProcessed(state.iterations() * fill_traffic(kind, f) * 8);
}
// Faces +x, +y, +z: the ghost plane is contiguous on x, strided rows on y, single cells on z.
// One variable per call is what the runtimes make with one-variable cache chunks (--chunk_vars).
#define MINIAMR_GHOST_BENCH(kind, name)         \
  BENCHMARK(BM_GhostFill<kind>)                 \
      ->Name(name)                              \
      ->ArgNames({"nx", "face", "vars", "isa"}) \
      ->ArgsProduct({{8, 16}, {1, 3, 5}, {1, 40}, kIsas})
MINIAMR_GHOST_BENCH(kSame, "BM_FillDirectSame");
MINIAMR_GHOST_BENCH(kCoarseToFine, "BM_FillDirectCoarseToFine");
MINIAMR_GHOST_BENCH(kFineToCoarse, "BM_FillDirectFineToCoarse");
MINIAMR_GHOST_BENCH(kBoundary, "BM_FillBoundary");
MINIAMR_GHOST_BENCH(kPackUnpack, "BM_PackUnpackSame");
#undef MINIAMR_GHOST_BENCH

// ---- keys -------------------------------------------------------------------------------------

// Valid keys of the unit cube at random levels 1..kMaxLevel-1 (so child() is always allowed).
std::vector<octree::Key> random_keys(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<octree::Key> keys(n);
  for (auto& k : keys) {
    k.level = std::int8_t(1 + rng() % (octree::kMaxLevel - 1));
    for (int d = 0; d < 3; ++d)
      k.x[std::size_t(d)] = octree::Coord(rng() & ((1u << k.level) - 1))
                            << (octree::kMaxLevel - k.level);
  }
  return keys;
}

void BM_MortonSort(benchmark::State& state) {
  const auto keys = random_keys(std::size_t(state.range(0)), 4);
  std::vector<octree::Key> work;
  for (auto _ : state) {
    state.PauseTiming();
    work = keys;
    state.ResumeTiming();
    std::sort(work.begin(), work.end(), octree::MortonLess{});
    benchmark::DoNotOptimize(work.data());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_MortonSort)->Arg(100000)->Unit(benchmark::kMillisecond);

void BM_KeyChildParent(benchmark::State& state) {
  const auto keys = random_keys(100000, 5);
  for (auto _ : state) {
    std::uint32_t acc = 0;
    int o = 0;
    for (const auto& k : keys) {
      const octree::Key c = octree::child(k, o++ & 7);
      const octree::Key p = octree::parent(c);
      acc += c.x[0] ^ p.x[1] ^ std::uint32_t(p.level);
    }
    benchmark::DoNotOptimize(acc);
  }
  state.SetItemsProcessed(state.iterations() * std::int64_t(keys.size()));  // child+parent pairs
}
BENCHMARK(BM_KeyChildParent);

void BM_FaceNeighbour(benchmark::State& state) {
  const auto keys = random_keys(100000, 6);
  const octree::RootGrid grid{};
  for (auto _ : state) {
    std::uint32_t acc = 0;
    for (const auto& k : keys)
      for (const auto f : octree::kFaces)
        if (const auto n = octree::face_neighbour(k, f, grid)) acc += n->x[0] ^ n->x[2];
    benchmark::DoNotOptimize(acc);
  }
  state.SetItemsProcessed(state.iterations() * std::int64_t(keys.size()) * 6);
}
BENCHMARK(BM_FaceNeighbour);

// ---- neighbour lookup on a balanced sphere mesh ------------------------------------------------

// The unit cube refined around the sphere |p - 0.5| = 0.3 down to `level`, 2:1 face balanced.
const octree::LeafSet& sphere_mesh(int level) {
  static std::vector<std::pair<int, octree::LeafSet>> cache;
  for (const auto& [l, set] : cache)
    if (l == level) return set;
  auto keys = bench::balance_faces(bench::refine_sphere_surface(level, 0.5, 0.5, 0.5, 0.3));
  cache.emplace_back(level, octree::LeafSet(std::move(keys)));
  return cache.back().second;
}

void BM_LeafSetAcross(benchmark::State& state) {
  const octree::LeafSet& leaves = sphere_mesh(int(state.range(0)));
  const octree::RootGrid grid{};
  for (auto _ : state) {
    int acc = 0;
    for (const auto& k : leaves.keys())
      for (const auto f : octree::kFaces) acc += leaves.across(k, f, grid).count;
    benchmark::DoNotOptimize(acc);
  }
  state.counters["leaves"] = double(leaves.size());
  state.SetItemsProcessed(state.iterations() * std::int64_t(leaves.size()) * 6);
}
// 3, 5 and 7 levels of refinement around the sphere below the one root (288, 4432 and 75160
// leaves once balanced).
BENCHMARK(BM_LeafSetAcross)
    ->ArgName("level")
    ->Arg(3)
    ->Arg(5)
    ->Arg(7)
    ->Unit(benchmark::kMicrosecond);

// ---- the bench-only octree algorithms (see sphere_octree.hpp) ---------------------------------

void BM_RefineSphere(benchmark::State& state) {
  const int level = int(state.range(0));
  std::size_t n = 0;
  for (auto _ : state) {
    n = bench::refine_sphere_surface(level, 0.5, 0.5, 0.5, 0.3).size();
    benchmark::DoNotOptimize(n);
  }
  state.counters["octants"] = double(n);
  state.SetItemsProcessed(state.iterations() * std::int64_t(n));
}
BENCHMARK(BM_RefineSphere)->ArgName("level")->Arg(7)->Unit(benchmark::kMillisecond);

void BM_BalanceFaces(benchmark::State& state) {
  const auto refined = bench::refine_sphere_surface(int(state.range(0)), 0.5, 0.5, 0.5, 0.3);
  std::size_t n = 0;
  for (auto _ : state) {
    n = bench::balance_faces(refined).size();
    benchmark::DoNotOptimize(n);
  }
  state.counters["octants"] = double(n);
  state.SetItemsProcessed(state.iterations() * std::int64_t(n));
}
BENCHMARK(BM_BalanceFaces)->ArgName("level")->Arg(7)->Unit(benchmark::kMillisecond);

// ---- partition --------------------------------------------------------------------------------

void BM_SfcCut(benchmark::State& state) {
  const std::size_t n = 1000000;
  std::mt19937_64 rng(7);
  std::vector<std::int64_t> weights(n);
  std::int64_t total = 0;
  for (auto& w : weights) total += (w = std::int64_t(1 + rng() % 1000));
  const int parts = int(state.range(0));
  for (auto _ : state) {
    auto targets = sfc::cut(weights, 0, total, parts);
    benchmark::DoNotOptimize(targets.data());
  }
  state.SetItemsProcessed(state.iterations() * std::int64_t(n));
}
BENCHMARK(BM_SfcCut)->ArgName("parts")->Arg(2)->Arg(64)->Unit(benchmark::kMillisecond);

// ---- refinement: one 8^3 x 40 parent into its 8 children and back, in storage already mapped ---

void BM_SplitFamily(benchmark::State& state) {
  const BlockShape shape = cube(8, 40);
  const Block parent = make_block(shape, 10);
  std::vector<Block> children(8, Block(shape));
  for (auto _ : state) {
    for (int o = 0; o < 8; ++o) stencil::split_child_into(parent, o, children[std::size_t(o)]);
    benchmark::ClobberMemory();
  }
  // The parent read once, every cell of the children written.
  state.SetBytesProcessed(state.iterations() * std::int64_t(9 * shape.doubles() * sizeof(double)));
}
BENCHMARK(BM_SplitFamily);

void BM_CoarsenFamily(benchmark::State& state) {
  const BlockShape shape = cube(8, 40);
  std::vector<Block> children;
  for (int o = 0; o < 8; ++o) children.push_back(make_block(shape, 20 + std::uint64_t(o)));
  std::array<const Block*, 8> from{};
  for (std::size_t o = 0; o < 8; ++o) from[o] = &children[o];
  Block parent(shape);
  for (auto _ : state) {
    stencil::coarsen_into(from, parent);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * std::int64_t(9 * shape.doubles() * sizeof(double)));
}
BENCHMARK(BM_CoarsenFamily);

// Fresh storage for a refinement's new blocks, written once (as a split writes its children)
// and freed: 64 blocks of 8^3 cells and 40 variables (20 MB) an iteration. Arg 0: each block
// a memory mapping of its own, mapped in one madvise (what malloc gives storage this size);
// 1: blocks from the huge-page slabs of stencil/block_arena.hpp, as miniamr makes them. The
// slabs go back to the system when their blocks are freed (but one), so both map fresh memory.
void BM_FreshBlockStorage(benchmark::State& state) {
  const BlockShape shape = cube(8, 40);
  const std::size_t bytes = shape.doubles() * sizeof(double);
  constexpr int kBlocks = 64;
  const bool slabs = state.range(0) == 1;
  for (auto _ : state) {
    if (slabs) {
      std::vector<Block> blocks;
      for (int b = 0; b < kBlocks; ++b) {
        blocks.push_back(Block::uninitialized(shape));
        std::fill_n(blocks.back().data(), shape.doubles(), 1.0);
      }
      benchmark::ClobberMemory();
    } else {
      std::vector<void*> maps;
      for (int b = 0; b < kBlocks; ++b) {
        void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
          state.SkipWithError("mmap failed");
          break;
        }
        (void)stencil::map_pages(p, bytes);
        std::fill_n(static_cast<double*>(p), shape.doubles(), 1.0);
        maps.push_back(p);
      }
      benchmark::ClobberMemory();
      for (void* p : maps) munmap(p, bytes);
    }
  }
  state.SetBytesProcessed(state.iterations() * std::int64_t(kBlocks) * std::int64_t(bytes));
  state.SetLabel(slabs ? "huge-page slabs" : "a mapping per block");
}
BENCHMARK(BM_FreshBlockStorage)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();

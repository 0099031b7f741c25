// The mappers on 1..4 ranks: the halo exchange, threads and the conformance of every mapper against
// a one-rank reference. (shared set-up and conventions: runtime_fixtures.hpp)
#include <algorithm>

#include "runtime/mapper.hpp"
#include "runtime/schedule.hpp"
#include "runtime/trace.hpp"
#include "runtime_fixtures.hpp"

namespace {

using namespace runtime_test;

// ---------------------------------------------------------------------------------------------
// 5. Halo exchange against a one-rank reference

// Remote ghost links of each relation (same, coarse->fine, fine->coarse), summed over ranks.
std::array<std::int64_t, 3> remote_links(const Domain& d, sfc::Curve curve) {
  comm::Communicator comm(MPI_COMM_WORLD);
  const mesh::Neighbourhood nb = mesh::build_neighbourhood(d, space_of(curve, d.grid), comm);
  const mesh::GhostPlan plan = mesh::build_ghost_plan(nb);
  std::array<std::int64_t, 3> n{0, 0, 0};
  for (const auto& peer : plan.peers)
    for (const auto& axis : peer.recv)
      for (const auto& l : axis) ++n[std::size_t(l.link.relation)];
  for (auto& x : n) x = world_sum(x);
  return n;
}

TEST(Halo, AdaptiveMeshMatchesOneRank) {
  const int P = world_size(), me = world_rank();
  const RootGrid grid{{3, 2, 1}};
  const std::vector<Key> keys = random_mesh(grid, 2, 45, 77);
  // Unequal extents, so a face exchanged along the wrong axis cannot fit.
  const BlockShape shape{4, 2, 6, 4};

  // The mesh has every kind of face.
  {
    const LeafSet whole(keys);
    std::array<int, 5> relations{};
    for (const Key& k : keys)
      for (const octree::Face f : octree::kFaces)
        ++relations[std::size_t(whole.across(k, f, grid).relation)];
    for (const auto r : {octree::Relation::kBoundary, octree::Relation::kSame,
                         octree::Relation::kCoarser, octree::Relation::kFiner})
      ASSERT_GT(relations[std::size_t(r)], 0) << "relation " << int(r) << " missing";
  }

  const stencil::VariableCoeffs coeffs = stencil::make_variable_coeffs(shape.num_vars, 9);
  for (const sfc::Curve curve : kCurves) {
    const auto targets =
        cut_whole(keys, space_of(curve, grid), random_weights(keys.size(), 6, 78), P);
    // Non-blocking and blocking sends, and (Morton only, to keep the run short) two OpenMP
    // threads on every rank against the one-thread reference.
    struct Variant {
      bool blocking;
      int threads;
    };
    for (const Variant v : {Variant{false, 0}, Variant{true, 0}, Variant{false, 2}}) {
      if (v.threads > 0 && curve != sfc::Curve::kMorton) continue;
      const bool blocking = v.blocking;
      const std::string how = curve_name(curve) + (blocking ? " blocking" : " non-blocking") +
                              (v.threads > 0 ? " 2 threads" : "");
      // The distributed runtime runs with the variant's threads throughout (its plans are
      // built for the thread count of the mesh's last change); the reference with one.
      const ThreadScope threads(v.threads);
      Domain d = make_domain(grid, shape, share(keys, targets, me));
      Domain whole = make_domain(grid, shape, keys);
      runtime::StaticRuntime rt(MPI_COMM_WORLD, options(curve, blocking));
      runtime::StaticRuntime ref(MPI_COMM_SELF, options(curve));
      rt.mesh().changed(d);
      {
        const ThreadScope one(1);
        ref.mesh().changed(whole);
      }
      // With P > 1 every kind of face crosses ranks, so every kind of message is tested.
      if (P > 1) {
        const auto links = remote_links(d, curve);
        for (std::size_t r = 0; r < 3; ++r)
          EXPECT_GT(links[r], 0) << how << ": no remote link of relation " << r;
      }

      runtime::StageWork work;
      work.num_vars = shape.num_vars;
      work.checksum = true;
      work.coeffs = &coeffs;
      std::int64_t stage = 0;
      auto run = [&](int stencil_id, stencil::VarRange vars, std::int64_t calc_stage, bool blocks) {
        work.stencil = stencil_id;
        work.vars = vars;
        work.calc_stage = calc_stage;
        stage_and_compare(rt, d, ref, whole, work,
                          how + " stage " + std::to_string(stage++) + " stencil " +
                              std::to_string(stencil_id) + " vars " + std::to_string(vars.v0) +
                              ".." + std::to_string(vars.v1),
                          blocks);
      };
      // Stencil 7 on all variables, then by comm groups.
      run(7, {0, 4}, 0, true);
      if (!blocking) {
        run(7, {0, 1}, 0, false);
        run(7, {1, 4}, 0, true);
        // Blocks move in the middle of the run: the ghosts must follow the new partition.
        rt.mesh().rebalance(d, random_weights(d.leaves.size(), 5, 79 + std::uint64_t(me)));
        run(7, {0, 4}, 0, true);
      }
      // The variable kernels exchange per axis with edges, here across level changes: the line
      // kernel along x and the 27-point kernel (which reads the edges).
      run(0, {0, 4}, 1, false);
      run(0, {0, 4}, 5, true);
    }
  }
}

TEST(Halo, Stencil27OnUniformMeshMatchesOneRank) {
  const int P = world_size(), me = world_rank();
  const RootGrid grid{{2, 2, 2}};
  const std::vector<Key> keys = refine_all(octree::root_leaves(grid), grid);  // 64 leaves
  const BlockShape shape{4, 6, 2, 2};
  for (const sfc::Curve curve : kCurves) {
    const auto targets =
        cut_whole(keys, space_of(curve, grid), random_weights(keys.size(), 4, 81), P);
    for (const bool blocking : {false, true}) {
      const std::string how = curve_name(curve) + (blocking ? " blocking" : " non-blocking");
      Domain d = make_domain(grid, shape, share(keys, targets, me));
      Domain whole = make_domain(grid, shape, keys);
      runtime::StaticRuntime rt(MPI_COMM_WORLD, options(curve, blocking));
      runtime::StaticRuntime ref(MPI_COMM_SELF, options(curve));
      rt.mesh().changed(d);
      ref.mesh().changed(whole);
      runtime::StageWork work;
      work.stencil = 27;
      work.num_vars = 2;
      work.checksum = true;
      for (int s = 0; s < 3; ++s) {
        work.vars = s == 1 ? stencil::VarRange{1, 2} : stencil::VarRange{0, 2};
        stage_and_compare(rt, d, ref, whole, work, how + " stencil 27 stage " + std::to_string(s),
                          /*blocks=*/s == 2);
      }
    }
  }
}

// The thread count may change between two mesh changes (omp_set_num_threads is the host's to
// call): a stage must still give the reference's bits.
TEST(Chunks, TheAutomaticChunkHoldsOneMiBPerThread) {
  // 64 roots of 8^3 cells (8,000 doubles a variable with ghosts): the fullest rank holds 16 to 64
  // blocks, 2 to 8 variables of them in 1 MiB; a rank of two threads keeps twice as many
  // together (a mapper that kept 1 MiB per rank would give the same count).
  const int P = world_size(), me = world_rank();
  const RootGrid grid{{4, 4, 4}};
  const BlockShape shape{8, 8, 8, 40};
  const std::vector<Key> keys = octree::root_leaves(grid);
  const Domain d = make_domain(grid, shape, share(keys, even_cut(keys, grid), me));
  runtime::StageWork work;
  work.num_vars = 40;
  work.vars = {0, 40};
  const auto per_var = std::int64_t((keys.size() + std::size_t(P) - 1) / std::size_t(P)) *
                       std::int64_t(shape.var_stride() * sizeof(double));
  for (const int threads : {1, 2}) {
    runtime::StaticOptions o = options(sfc::Curve::kMorton);
    o.threads = threads;
    const runtime::StaticRuntime rt(MPI_COMM_WORLD, o);
    const auto expected = std::clamp<std::int64_t>(runtime::kCacheChunkBytes * threads / per_var, 1,
                                                   work.vars.count());
    EXPECT_EQ(rt.chunk_vars(d, work), expected) << threads << " threads";
    // In comm groups of three, whole groups once a group fits: of 4 or 5 variables 3 are taken,
    // 2 stay 2, 8 become 6.
    work.group = 3;
    EXPECT_EQ(rt.chunk_vars(d, work), expected < 3 ? expected : expected - expected % 3)
        << threads << " threads";
    work.group = 0;
    work.stencil = 0;  // the variable kernels mix every variable: one chunk of all
    EXPECT_EQ(rt.chunk_vars(d, work), 40) << threads << " threads";
    work.stencil = 7;
  }
}

TEST(Chunks, TheAutomaticChunkHoldsTwoVariablesAtLeast) {
  // 512 roots: the fullest rank of 1 to 4 holds at least 128 blocks, 1 MB a variable, so at most
  // one variable fits 1 MiB; a lane of one variable costs more than the cache saves.
  const int me = world_rank();
  const RootGrid grid{{8, 8, 8}};
  const BlockShape shape{8, 8, 8, 2};
  const std::vector<Key> keys = octree::root_leaves(grid);
  const Domain d = make_domain(grid, shape, share(keys, even_cut(keys, grid), me));
  ASSERT_GT(std::int64_t(d.blocks.size() * shape.var_stride() * sizeof(double)) * 2,
            runtime::kCacheChunkBytes);
  runtime::StageWork work;
  work.num_vars = 2;
  work.vars = {0, 2};
  runtime::StaticOptions o = options(sfc::Curve::kMorton);
  o.threads = 1;
  const runtime::StaticRuntime rt(MPI_COMM_WORLD, o);
  EXPECT_EQ(rt.chunk_vars(d, work), 2);
  work.group = 1;
  EXPECT_EQ(rt.chunk_vars(d, work), 2);
  work.num_vars = 1;
  work.vars = {0, 1};
  EXPECT_EQ(rt.chunk_vars(d, work), 1);
}

TEST(Threads, MoreThreadsAfterMeshChangedGiveTheSameBits) {
  const int me = world_rank();
  const RootGrid grid{{2, 1, 1}};
  const std::vector<Key> keys = refine_all(octree::root_leaves(grid), grid);
  const BlockShape shape{4, 4, 4, 1};
  const auto targets = even_cut(keys, grid);
  Domain d = make_domain(grid, shape, share(keys, targets, me));
  Domain whole = make_domain(grid, shape, keys);
  runtime::StaticRuntime rt(MPI_COMM_WORLD), ref(MPI_COMM_SELF);
  {
    const ThreadScope one(1);
    rt.mesh().changed(d);
    ref.mesh().changed(whole);
  }
  runtime::StageWork work;
  work.num_vars = 1;
  work.vars = {0, 1};
  work.checksum = true;
  const ThreadScope two(2);
  for (const int stencil_id : {7, 27})
    stage_and_compare(rt, d, ref, whole, (work.stencil = stencil_id, work),
                      "stencil " + std::to_string(stencil_id) + " on 2 threads");
}

// ---------------------------------------------------------------------------------------------
// 6. Conformance: every mapper of the stage graph, through the seam, against the one-rank static
//    reference. A mapper that loses a dependency edge, a face or a message shows here.

// One way of running the graph: a runtime, its worker threads, and (dynamic) a seed that runs
// ready tasks in a random order, orders a work-stealing scheduler rarely produces.
template <class Runtime, int Threads, std::uint64_t Seed = 0>
struct Mapper {
  static constexpr int kThreads = Threads;
  static constexpr std::uint64_t kSeed = Seed;
  using Type = Runtime;
};
using StaticMapper = Mapper<runtime::StaticRuntime, 1>;
using StaticTwoThreads = Mapper<runtime::StaticRuntime, 2>;
using DynamicMapper = Mapper<runtime::DynamicRuntime, 1>;
using DynamicTwoThreads = Mapper<runtime::DynamicRuntime, 2>;
using DynamicRandomOrder = Mapper<runtime::DynamicRuntime, 2, 23>;
using DynamicOneWorkerRandomOrder = Mapper<runtime::DynamicRuntime, 1, 29>;

template <class Mapper>
class Conformance : public ::testing::Test {
 protected:
  static std::unique_ptr<runtime::Runtime> make(sfc::Curve curve) {
    runtime::RuntimeOptions o = options(curve);
    o.threads = Mapper::kThreads;
    o.order_seed = Mapper::kSeed;
    return std::make_unique<typename Mapper::Type>(MPI_COMM_WORLD, o);
  }
};
using Mappers = ::testing::Types<StaticMapper, StaticTwoThreads, DynamicMapper, DynamicTwoThreads,
                                 DynamicRandomOrder, DynamicOneWorkerRandomOrder>;
TYPED_TEST_SUITE(Conformance, Mappers);

// Runs `stages` as one batch on the distributed domain and one stage at a time on the
// reference; the checksums of every checksum stage and every block (ghosts included) must agree.
void batch_and_compare(runtime::Runtime& rt, Domain& d, runtime::Runtime& ref, Domain& whole,
                       std::span<const runtime::StageWork> stages, const std::string& what,
                       bool interior_only = false) {
  const auto got = rt.run_stages(d, stages);
  ASSERT_EQ(got.size(), stages.size());
  for (std::size_t s = 0; s < stages.size(); ++s) {
    std::vector<double> want;
    {
      const ThreadScope one(1);
      want = ref.advance(whole, stages[s]);
    }
    EXPECT_EQ(got[s].size(), stages[s].checksum ? std::size_t(stages[s].vars.count()) : 0u);
    EXPECT_TRUE(same_bits(got[s], want)) << what << ": checksums of stage " << s;
  }
  compare_blocks(d, whole, what, interior_only);
}

std::vector<runtime::StageWork> stage_batch(int stencil_id, int num_vars, int group, int stages,
                                            const stencil::VariableCoeffs* coeffs) {
  std::vector<runtime::StageWork> out;
  for (int s = 0; s < stages; ++s) {
    runtime::StageWork& w = out.emplace_back();
    w.stencil = stencil_id;
    w.vars = {0, num_vars};
    w.num_vars = num_vars;
    w.group = group;
    w.calc_stage = s;
    w.checksum = s % 2 == 0;
    w.coeffs = coeffs;
  }
  return out;
}

TYPED_TEST(Conformance, BatchesOfStagesOnAnAdaptiveMeshMatchOneRank) {
  const int P = world_size(), me = world_rank();
  const RootGrid grid{{3, 2, 1}};
  const std::vector<Key> keys = random_mesh(grid, 2, 45, 177);
  const BlockShape shape{4, 2, 6, 4};
  const stencil::VariableCoeffs coeffs = stencil::make_variable_coeffs(shape.num_vars, 5);
  for (const sfc::Curve curve : kCurves) {
    const auto targets =
        cut_whole(keys, space_of(curve, grid), random_weights(keys.size(), 6, 178), P);
    Domain d = make_domain(grid, shape, share(keys, targets, me));
    Domain whole = make_domain(grid, shape, keys);
    const ThreadScope threads(TypeParam::kThreads);
    auto rt = TestFixture::make(curve);
    runtime::StaticRuntime ref(MPI_COMM_SELF, options(curve));
    rt->mesh().changed(d);
    {
      const ThreadScope one(1);
      ref.mesh().changed(whole);
    }
    const std::string how = curve_name(curve) + " " + rt->name();
    // 7-point in comm groups of 1 and 3 variables (the dynamic mapper's independent graphs),
    // the 27-point and the variable-work kernels (all stages of the variable kernels' cycle).
    batch_and_compare(*rt, d, ref, whole, stage_batch(7, 4, 1, 5, &coeffs), how + " 7-point");
    batch_and_compare(*rt, d, ref, whole, stage_batch(7, 4, 3, 4, &coeffs), how + " 7 by 3");
    batch_and_compare(*rt, d, ref, whole, stage_batch(27, 4, 2, 3, &coeffs), how + " 27-point");
    batch_and_compare(*rt, d, ref, whole, stage_batch(0, 4, 0, 7, &coeffs), how + " variable");
    // Blocks move between two batches: the graph must follow the new partition.
    rt->mesh().rebalance(d, random_weights(d.leaves.size(), 5, 179 + std::uint64_t(me)));
    batch_and_compare(*rt, d, ref, whole, stage_batch(7, 4, 2, 3, &coeffs), how + " moved");
    // Every block has a cost record of its measured time.
    // Every block has a cost record of its measured time (both mappers keep them).
    const bool costed = std::ranges::all_of(d.cost, [](double c) { return c > 0; });
    EXPECT_TRUE(all_ranks(costed, "a block without a measured cost")) << how;
  }
}

TYPED_TEST(Conformance, EmptyRanksAndBlocksThatNeedNoMessage) {
  const int me = world_rank();
  const RootGrid grid{{2, 1, 1}};
  const BlockShape shape{4, 4, 4, 2};
  const std::vector<Key> keys = refine_all(octree::root_leaves(grid), grid);
  // Everything on rank 0 and the other ranks empty, then an even share.
  for (const bool skewed : {true, false}) {
    std::vector<int> targets(keys.size(), 0);
    if (!skewed) targets = even_cut(keys, grid);
    Domain d = make_domain(grid, shape, share(keys, targets, me));
    Domain whole = make_domain(grid, shape, keys);
    const ThreadScope threads(TypeParam::kThreads);
    auto rt = TestFixture::make(sfc::Curve::kMorton);
    runtime::StaticRuntime ref(MPI_COMM_SELF, options(sfc::Curve::kMorton));
    rt->mesh().changed(d);
    {
      const ThreadScope one(1);
      ref.mesh().changed(whole);
    }
    batch_and_compare(*rt, d, ref, whole, stage_batch(7, 2, 1, 6, nullptr),
                      std::string(skewed ? "skewed " : "even ") + rt->name());
  }
}

// The seconds in unit steps (what the dynamic balancer measures speeds on) are the blocks'
// measured times over the workers, a part of compute that leaves out driving the messages.
TYPED_TEST(Conformance, StepSecondsAreTheBlocksTimesWithinCompute) {
  const int P = world_size(), me = world_rank();
  const RootGrid grid{{2, 2, 1}};
  const BlockShape shape{4, 4, 4, 4};
  const std::vector<Key> keys = random_mesh(grid, 2, 30, 181);
  const auto targets =
      cut_whole(keys, space_of(sfc::Curve::kMorton, grid), random_weights(keys.size(), 4, 182), P);
  Domain d = make_domain(grid, shape, share(keys, targets, me));
  const ThreadScope threads(TypeParam::kThreads);
  auto rt = TestFixture::make(sfc::Curve::kMorton);
  rt->mesh().changed(d);
  d.cost.clear();  // no records yet: the batch's are its own seconds
  const auto stages = stage_batch(7, 4, 2, 6, nullptr);
  rt->run_stages(d, stages);
  const runtime::Timers& t = rt->timers();
  double blocks_seconds = 0;
  for (const double c : d.cost) blocks_seconds += c;
  blocks_seconds *= double(stages.size()) / double(rt->threads());
  EXPECT_NEAR(t.steps(), blocks_seconds, 1e-9 * (1 + blocks_seconds)) << rt->name();
  EXPECT_EQ(t.steps() > 0, !d.leaves.empty()) << rt->name();
  // (the blocks' shares of a step's seconds add up to it but for rounding)
  EXPECT_LE(t.steps(), t.get(runtime::Phase::kCompute) * (1 + 1e-9)) << rt->name();
}

// The Kokkos back end really runs when asked for, and gives the native bits.
TYPED_TEST(Conformance, KernelsReportTheBackEndThatRan) {
  const int me = world_rank();
  const RootGrid grid{{2, 2, 1}};
  const std::vector<Key> keys = random_mesh(grid, 1, 50, 191);
  const BlockShape shape{4, 4, 4, 2};
  const auto targets = even_cut(keys, grid);
  Domain d = make_domain(grid, shape, share(keys, targets, me));
  const ThreadScope threads(TypeParam::kThreads);
  auto rt = TestFixture::make(sfc::Curve::kMorton);
  rt->mesh().changed(d);
  rt->run_stages(d, stage_batch(7, 2, 0, 2, nullptr));
  const runtime::KernelCalls calls = rt->kernels().calls();
  EXPECT_EQ(world_sum(calls.native), world_sum(std::int64_t(d.blocks.size())) * 2 * 2);
  EXPECT_EQ(calls.kokkos, 0);
  EXPECT_EQ(rt->kernels().backend_name(), "native");
}

// Both mappers sweep 8^3 blocks stored compact where the AVX-512 kernels run, on any number of
// threads (stencil/compact_stencil.hpp): same-level faces from the compact copies, level
// changes into dense ghost layers, messages packed from the copies. Bitwise the padded AVX2
// kernels' results on one rank, with comm groups of one and three variables, passes of one
// variable and chunks of three (the interiors: the compact sweep writes no ghost into the
// padded blocks); the dynamic mapper's steps also in a seeded random order.
template <class Mapper>
void compact_sweeps_match_the_padded_kernels(int threads) {
  const int P = world_size(), me = world_rank();
  const RootGrid grid{{2, 2, 1}};
  const std::vector<Key> keys = random_mesh(grid, 2, 40, 203);
  constexpr int kVars = 7;
  const BlockShape shape{8, 8, 8, kVars};
  struct Case {
    int sweep_vars, chunk_vars;
    std::uint64_t order_seed;
  };
  for (const auto& [sweep_vars, chunk_vars, order_seed] :
       {Case{4, 0, 0}, Case{1, 3, 0}, Case{4, 0, 37}}) {
    const auto targets = cut_whole(keys, space_of(sfc::Curve::kMorton, grid),
                                   random_weights(keys.size(), 6, 204), P);
    Domain d = make_domain(grid, shape, share(keys, targets, me));
    Domain whole = make_domain(grid, shape, keys);
    const ThreadScope team(threads);
    runtime::RuntimeOptions o = options(sfc::Curve::kMorton);
    o.sweep_vars = sweep_vars;
    o.chunk_vars = chunk_vars;  // 3: three chunks (static) or groups of at most three (dynamic)
    o.order_seed = order_seed;  // dynamic
    o.isa = stencil::Isa::kAvx512;
    Mapper rt(MPI_COMM_WORLD, o);
    o.isa = stencil::Isa::kAvx2;
    runtime::StaticRuntime ref(MPI_COMM_SELF, o);
    rt.mesh().changed(d);
    {
      const ThreadScope one(1);
      ref.mesh().changed(whole);
    }
    const std::string how = rt.name() + " threads " + std::to_string(threads) + " sweep_vars " +
                            std::to_string(sweep_vars) + " chunk_vars " +
                            std::to_string(chunk_vars) + " order_seed " +
                            std::to_string(order_seed);
    batch_and_compare(rt, d, ref, whole, stage_batch(7, kVars, 1, 5, nullptr), how + " groups of 1",
                      true);
    batch_and_compare(rt, d, ref, whole, stage_batch(7, kVars, 3, 4, nullptr), how + " groups of 3",
                      true);
    // Every 7-point sweep of the batches ran compact; none of the reference's did.
    const std::int64_t block_vars = world_sum(std::int64_t(d.blocks.size())) * kVars;
    EXPECT_EQ(world_sum(rt.kernels().calls().compact), block_vars * 9) << how;
    EXPECT_EQ(rt.kernels().calls().native, rt.kernels().calls().compact) << how;
    EXPECT_EQ(ref.kernels().calls().compact, 0) << how;
    // Stencils reading edges sweep the padded blocks.
    batch_and_compare(rt, d, ref, whole, stage_batch(27, kVars, 2, 2, nullptr), how + " 27-point",
                      true);
    EXPECT_EQ(world_sum(rt.kernels().calls().native - rt.kernels().calls().compact), block_vars * 2)
        << how;
    EXPECT_EQ(world_sum(rt.kernels().calls().compact), block_vars * 9) << how;
  }
}

TEST(Compact, StaticSweepsOfCompactInteriorsMatchThePaddedKernels) {
  if (!stencil::compact_stencil7_supported()) GTEST_SKIP() << "no AVX-512 on this machine";
  compact_sweeps_match_the_padded_kernels<runtime::StaticRuntime>(1);
  compact_sweeps_match_the_padded_kernels<runtime::StaticRuntime>(2);
}

TEST(Compact, DynamicSweepsOfCompactInteriorsMatchThePaddedKernels) {
  if (!stencil::compact_stencil7_supported()) GTEST_SKIP() << "no AVX-512 on this machine";
  compact_sweeps_match_the_padded_kernels<runtime::DynamicRuntime>(1);
  compact_sweeps_match_the_padded_kernels<runtime::DynamicRuntime>(2);
}

// The units a schedule cuts of the two parts of its order, `per_part` asked for in each: one a
// block in a part with fewer (one rank's remote part is empty).
std::size_t units_for(const runtime::Schedule& s, std::size_t per_part) {
  const std::size_t first = s.unit_begin[s.second_part], blocks = s.order.size();
  return std::min(first, per_part) + std::min(blocks - first, per_part);
}

// The dynamic mapper cuts each part of its order into one unit per worker: faces between units go
// through the kit's local face buffers, faces within a unit are read in place or deferred, and the
// bits stay those of one rank, on one worker and on two.
TEST(DynamicUnits, OnePerWorkerInEachPartWithTheSameBits) {
  const int me = world_rank();
  const RootGrid grid{{4, 4, 4}};
  const std::vector<Key> keys = refine_all(octree::root_leaves(grid), grid);  // 512 leaves
  const BlockShape shape{2, 2, 2, 1};
  const auto targets = even_cut(keys, grid);
  Domain d = make_domain(grid, shape, share(keys, targets, me));
  Domain whole = make_domain(grid, shape, keys);
  runtime::DynamicRuntime rt(MPI_COMM_WORLD, options(sfc::Curve::kMorton));
  runtime::StaticRuntime ref(MPI_COMM_SELF, options(sfc::Curve::kMorton));
  rt.mesh().changed(d);
  {
    const ThreadScope one(1);
    ref.mesh().changed(whole);
  }
  const auto batch = stage_batch(7, 1, 0, 4, nullptr);
  for (const int threads : {1, 2}) {
    const ThreadScope team(threads);
    const std::string how = std::to_string(threads) + " worker(s)";
    batch_and_compare(rt, d, ref, whole, batch, how);
    const runtime::Schedule& s = *rt.schedule(false);
    EXPECT_EQ(s.units(), units_for(s, std::size_t(threads))) << how;
    const runtime::ScheduleCounts c = runtime::count_faces(s);
    // Within a unit, same-level faces are read where the values are; between units (several
    // per part with two workers) they are packed.
    EXPECT_TRUE(all_ranks(d.blocks.size() < 8 || c.read_in_place > 0,
                          how + ": faces read in place " + std::to_string(c.read_in_place)));
    EXPECT_TRUE(all_ranks(d.blocks.size() < 8 || threads == 1 || c.packed_between_units > 0,
                          how + ": faces between units " + std::to_string(c.packed_between_units)));
  }
}

// A unit step that reads and packs no message takes with it the same step of the later lanes of
// its stage that are ready, one pass over its blocks for all their variables. On one rank no
// step has a message: with four one-variable groups a stage, the trace (one event a pass, four
// variables a pass) has fewer sweeps than lanes times units, and the bits stay those of the
// static runtime on one worker.
TEST(DynamicUnits, MessageFreeStepsTakeTheReadyLanesOfTheirStage) {
  const RootGrid grid{{2, 2, 2}};
  const std::vector<Key> keys = refine_all(octree::root_leaves(grid), grid);  // 64 leaves
  const BlockShape shape{2, 2, 2, 4};
  Domain d = make_domain(grid, shape, keys);
  Domain whole = make_domain(grid, shape, keys);
  runtime::StaticRuntime ref(MPI_COMM_SELF, options(sfc::Curve::kMorton));
  {
    const ThreadScope one(1);
    ref.mesh().changed(whole);
  }
  const ThreadScope two(2);
  runtime::DynamicRuntime rt(MPI_COMM_SELF, options(sfc::Curve::kMorton));
  rt.mesh().changed(d);
  runtime::Trace trace(2);
  rt.set_trace(&trace);
  const auto batch = stage_batch(7, 4, 1, 3, nullptr);  // 4 lanes a stage
  batch_and_compare(rt, d, ref, whole, batch, "dynamic, two workers, one-variable groups");
  const std::size_t lanes = batch.size() * 4, units = rt.schedule(false)->units();
  ASSERT_EQ(units, 2u);
  EXPECT_TRUE(all_ranks(trace.size() < lanes * units,
                        std::to_string(trace.size()) + " sweeps for " + std::to_string(lanes) +
                            " lanes of " + std::to_string(units) + " units"));
}

// Both mappers' schedules put the blocks that exchange faces with other ranks where the mapper
// wants them: the static one after the rest (swept while the messages fly), the dynamic one
// first (its messages leave early); with threads, the static one cuts each part into one unit
// per thread.
TEST(Mappers, OrderAndUnitsOfTheSchedule) {
  const int me = world_rank();
  const RootGrid grid{{2, 2, 2}};
  const std::vector<Key> keys = refine_all(octree::root_leaves(grid), grid);
  const BlockShape shape{4, 4, 4, 2};
  Domain d = make_domain(grid, shape, share(keys, even_cut(keys, grid), me));
  const auto batch = stage_batch(7, 2, 0, 2, nullptr);
  for (const int threads : {1, 2}) {
    const ThreadScope team(threads);
    runtime::StaticRuntime st(MPI_COMM_WORLD, options(sfc::Curve::kMorton));
    runtime::DynamicRuntime dy(MPI_COMM_WORLD, options(sfc::Curve::kMorton));
    for (runtime::Mapper* m :
         {static_cast<runtime::Mapper*>(&st), static_cast<runtime::Mapper*>(&dy)}) {
      m->mesh().changed(d);
      m->run_stages(d, batch);
      const runtime::Schedule& s = *m->schedule(false);
      const bool interior_first = m->name() == "static";
      EXPECT_EQ(m->last_policy(false)->order,
                interior_first ? runtime::SchedulePolicy::Order::kInteriorFirst
                               : runtime::SchedulePolicy::Order::kProducersFirst);
      bool ok = true;
      for (std::size_t p = 0; p < s.order.size(); ++p) {
        const bool second = p >= s.unit_begin[s.second_part];
        // needs_remote is not kept in the schedule: a block in the second part of a static
        // order reads some face from a message.
        bool reads_message = false;
        for (const runtime::FaceRead& r : s.reads[s.order[p]])
          reads_message |= r.kind == runtime::FaceRead::Kind::kPacked &&
                           r.at.in == runtime::PackedAt::In::kMessage;
        for (const runtime::GhostTask& t : s.tasks[p])
          reads_message |= t.kind == runtime::GhostTask::Kind::kUnpack &&
                           t.at.in == runtime::PackedAt::In::kMessage;
        if (reads_message && second != interior_first) ok = false;
      }
      EXPECT_TRUE(all_ranks(ok, m->name() + ": a block that reads a message in the wrong part"));
      if (interior_first) {
        EXPECT_EQ(s.units(), units_for(s, std::size_t(threads)));
      }
    }
  }
}

// With several workers, the dynamic mapper cuts each part of the order into units of equal
// measured cost (mesh::Domain::cost), the static one into units of equal block counts; the bits
// stay those of one rank.
TEST(Mappers, UnitsOfEqualMeasuredCost) {
  const int me = world_rank();
  const RootGrid grid{{4, 4, 4}};
  const std::vector<Key> keys = refine_all(octree::root_leaves(grid), grid);  // 512 leaves
  const BlockShape shape{2, 2, 2, 1};
  const auto batch = stage_batch(7, 1, 0, 2, nullptr);
  runtime::StaticRuntime ref(MPI_COMM_SELF, options(sfc::Curve::kMorton));
  for (const std::string kind : {"static", "dynamic"}) {
    Domain d = make_domain(grid, shape, share(keys, even_cut(keys, grid), me));
    Domain whole = make_domain(grid, shape, keys);
    {
      const ThreadScope one(1);
      ref.mesh().changed(whole);
    }
    // The first tenth of the rank's blocks (by index) cost five times as much as the others.
    d.cost.assign(d.blocks.size(), 1e-6);
    for (std::size_t b = 0; b < d.cost.size() / 10; ++b) d.cost[b] = 5e-6;
    const std::vector<double> weights = d.cost;
    const ThreadScope two(2);
    std::unique_ptr<runtime::Mapper> m;
    if (kind == "static")
      m = std::make_unique<runtime::StaticRuntime>(MPI_COMM_WORLD, options(sfc::Curve::kMorton));
    else
      m = std::make_unique<runtime::DynamicRuntime>(MPI_COMM_WORLD, options(sfc::Curve::kMorton));
    m->mesh().changed(d);
    batch_and_compare(*m, d, ref, whole, batch, kind + " on two workers, uneven costs");
    const runtime::Schedule& s = *m->schedule(false);
    bool even = true, counted = true;
    for (std::size_t u = 0; u < s.units(); ++u) {
      const bool first = u < s.second_part;
      const std::size_t u0 = first ? 0 : s.second_part, u1 = first ? s.second_part : s.units();
      double mine = 0, part = 0, heaviest = 0;
      for (std::size_t p = s.unit_begin[u0]; p < s.unit_begin[u1]; ++p) {
        const double w = weights[s.order[p]];
        part += w;
        heaviest = std::max(heaviest, w);
        if (s.unit_of[s.order[p]] == u) mine += w;
      }
      const double share = part / double(u1 - u0);
      if (std::abs(mine - share) > heaviest) even = false;
      const std::size_t blocks = s.unit_begin[u1] - s.unit_begin[u0];
      if (s.blocks_in(u) > blocks / (u1 - u0) + 1 || s.blocks_in(u) < blocks / (u1 - u0))
        counted = false;
    }
    if (kind == "dynamic") {
      EXPECT_TRUE(all_ranks(even, kind + ": a unit's cost is not its share of the part's"));
      // The heavy blocks are few enough that equal counts would not be equal costs.
      EXPECT_TRUE(all_ranks(!counted, kind + ": units of equal block counts"));
    } else {
      EXPECT_TRUE(all_ranks(counted, kind + ": units not of equal block counts"));
    }
  }
}

}  // namespace

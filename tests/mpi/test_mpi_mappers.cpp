// The mappers on 1..4 ranks: the halo exchange, threads and the conformance of every mapper against
// a one-rank reference. (shared set-up and conventions: runtime_fixtures.hpp)
#include "runtime_fixtures.hpp"

namespace {

using namespace runtime_test;

// ---------------------------------------------------------------------------------------------
// 5. Halo exchange against a one-rank reference

// Remote ghost links of each relation (same, coarse->fine, fine->coarse), summed over ranks.
std::array<std::int64_t, 3> remote_links(const Domain& d, sfc::Curve curve) {
  runtime::Communicator comm(MPI_COMM_WORLD);
  const runtime::Neighbourhood nb = runtime::build_neighbourhood(d, space_of(curve, d.grid), comm);
  const runtime::GhostPlan plan = runtime::build_ghost_plan(d, nb);
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
      // built for the thread count of mesh_changed); the reference with one.
      const ThreadScope threads(v.threads);
      Domain d = make_domain(grid, shape, share(keys, targets, me));
      Domain whole = make_domain(grid, shape, keys);
      runtime::StaticRuntime rt(MPI_COMM_WORLD, options(curve, blocking));
      runtime::StaticRuntime ref(MPI_COMM_SELF, options(curve));
      rt.mesh_changed(d);
      {
        const ThreadScope one(1);
        ref.mesh_changed(whole);
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
        rt.rebalance(d, random_weights(d.leaves.size(), 5, 79 + std::uint64_t(me)));
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
      rt.mesh_changed(d);
      ref.mesh_changed(whole);
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
    rt.mesh_changed(d);
    ref.mesh_changed(whole);
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
using DynamicOneWorkerRandomOrder = Mapper<runtime::DynamicRuntime, 1, 29>;  // deferred faces

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
    rt->mesh_changed(d);
    {
      const ThreadScope one(1);
      ref.mesh_changed(whole);
    }
    const std::string how = curve_name(curve) + " " + rt->name();
    // 7-point in comm groups of 1 and 3 variables (the dynamic mapper's independent graphs),
    // the 27-point and the variable-work kernels (all stages of the variable kernels' cycle).
    batch_and_compare(*rt, d, ref, whole, stage_batch(7, 4, 1, 5, &coeffs), how + " 7-point");
    batch_and_compare(*rt, d, ref, whole, stage_batch(7, 4, 3, 4, &coeffs), how + " 7 by 3");
    batch_and_compare(*rt, d, ref, whole, stage_batch(27, 4, 2, 3, &coeffs), how + " 27-point");
    batch_and_compare(*rt, d, ref, whole, stage_batch(0, 4, 0, 7, &coeffs), how + " variable");
    // Blocks move between two batches: the graph must follow the new partition.
    rt->rebalance(d, random_weights(d.leaves.size(), 5, 179 + std::uint64_t(me)));
    batch_and_compare(*rt, d, ref, whole, stage_batch(7, 4, 2, 3, &coeffs), how + " moved");
    // Every block has a cost record of its measured time.
    const bool costed = std::ranges::all_of(d.cost, [](double c) { return c > 0; });
    if (std::string(rt->name()) == "dynamic") {
      EXPECT_TRUE(all_ranks(costed, "a block without a measured cost")) << how;
    }
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
    rt->mesh_changed(d);
    {
      const ThreadScope one(1);
      ref.mesh_changed(whole);
    }
    batch_and_compare(*rt, d, ref, whole, stage_batch(7, 2, 1, 6, nullptr),
                      std::string(skewed ? "skewed " : "even ") + rt->name());
  }
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
  rt->mesh_changed(d);
  rt->run_stages(d, stage_batch(7, 2, 0, 2, nullptr));
  const runtime::KernelCalls calls = rt->kernels().calls();
  EXPECT_EQ(world_sum(calls.native), world_sum(std::int64_t(d.blocks.size())) * 2 * 2);
  EXPECT_EQ(calls.kokkos, 0);
  EXPECT_EQ(rt->kernels().backend_name(), "native");
}

// Both mappers sweep 8^3 blocks stored compact where the AVX-512 kernels run on one thread
// (stencil/compact_stencil.hpp): same-level faces from the compact copies, level changes into
// dense ghost layers, messages packed from the copies. Bitwise the padded AVX2 kernels' results
// on one rank, with comm groups of one and three variables and passes of one variable (the
// interiors: the compact sweep writes no ghost into the padded blocks). The dynamic mapper runs
// a batch per variable group: seven of one variable, or three, three and one; and its tasks
// also in a seeded random order.
template <class Mapper>
void compact_sweeps_match_the_padded_kernels() {
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
    const ThreadScope one(1);
    runtime::RuntimeOptions o = options(sfc::Curve::kMorton);
    o.sweep_vars = sweep_vars;
    o.chunk_vars = chunk_vars;  // 3: three chunks (static) or groups of at most three (dynamic)
    o.order_seed = order_seed;  // dynamic
    o.isa = stencil::Isa::kAvx512;
    Mapper rt(MPI_COMM_WORLD, o);
    o.isa = stencil::Isa::kAvx2;
    runtime::StaticRuntime ref(MPI_COMM_SELF, o);
    rt.mesh_changed(d);
    ref.mesh_changed(whole);
    const std::string how = rt.name() + " sweep_vars " + std::to_string(sweep_vars) +
                            " chunk_vars " + std::to_string(chunk_vars) + " order_seed " +
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
  compact_sweeps_match_the_padded_kernels<runtime::StaticRuntime>();
}

TEST(Compact, DynamicSweepsOfCompactInteriorsMatchThePaddedKernels) {
  if (!stencil::compact_stencil7_supported()) GTEST_SKIP() << "no AVX-512 on this machine";
  compact_sweeps_match_the_padded_kernels<runtime::DynamicRuntime>();
}

// Blocks far too small to pay for a task each are run several to a task, chosen from the
// measured time per block, with the same bits.
TEST(DynamicTasks, SmallBlocksAreGroupedFromMeasuredTimes) {
  const int me = world_rank();
  const RootGrid grid{{4, 4, 4}};
  const std::vector<Key> keys = refine_all(octree::root_leaves(grid), grid);  // 512 leaves
  const BlockShape shape{2, 2, 2, 1};
  const auto targets = even_cut(keys, grid);
  Domain d = make_domain(grid, shape, share(keys, targets, me));
  Domain whole = make_domain(grid, shape, keys);
  runtime::DynamicRuntime rt(MPI_COMM_WORLD, options(sfc::Curve::kMorton));
  runtime::StaticRuntime ref(MPI_COMM_SELF, options(sfc::Curve::kMorton));
  const ThreadScope one(1);
  rt.mesh_changed(d);
  ref.mesh_changed(whole);
  const auto batch = stage_batch(7, 1, 0, 4, nullptr);
  batch_and_compare(rt, d, ref, whole, batch, "first batch");
  EXPECT_EQ(rt.blocks_per_task(), 1u);  // nothing measured yet
  batch_and_compare(rt, d, ref, whole, batch, "second batch");
  // A 2^3 block's stage takes well under a microsecond: far below the task target.
  EXPECT_TRUE(all_ranks(rt.blocks_per_task() > 1,
                        "blocks per task " + std::to_string(rt.blocks_per_task())));
  // One worker: faces between tasks are deferred (packed at the sender's sweep), with the
  // same bits; several workers: none are.
  EXPECT_TRUE(all_ranks(d.blocks.empty() || rt.deferred_faces() > 0,
                        "deferred faces " + std::to_string(rt.deferred_faces())));
  // The sweeps read same-level faces where the values are, not from filled ghosts.
  EXPECT_TRUE(all_ranks(d.blocks.empty() || rt.faces_read_in_place() > 0,
                        "faces read in place " + std::to_string(rt.faces_read_in_place())));
  {
    const ThreadScope two(2);
    batch_and_compare(rt, d, ref, whole, batch, "two workers");
  }
  EXPECT_EQ(rt.deferred_faces(), 0u);
  // Still in place: a face from a block later in the reader's task, or from another rank.
  EXPECT_TRUE(all_ranks(d.blocks.empty() || rt.faces_read_in_place() > 0,
                        "faces read in place " + std::to_string(rt.faces_read_in_place())));
}

// Several workers defer faces between tasks only when enough independent variable groups keep
// them busy (a deferred face orders the tasks of a stage); the bits stay those of one rank,
// in the scheduler's order and in a seeded random one.
TEST(DynamicTasks, ManyVariableGroupsDeferFacesOnSeveralWorkers) {
  const int me = world_rank();
  const RootGrid grid{{2, 2, 2}};
  const std::vector<Key> keys = refine_all(octree::root_leaves(grid), grid);  // 64 leaves
  const BlockShape shape{4, 4, 4, 8};
  const auto targets = even_cut(keys, grid);
  for (const std::uint64_t seed : {0u, 31u}) {
    Domain d = make_domain(grid, shape, share(keys, targets, me));
    Domain whole = make_domain(grid, shape, keys);
    runtime::RuntimeOptions o = options(sfc::Curve::kMorton);
    o.order_seed = seed;
    runtime::DynamicRuntime rt(MPI_COMM_WORLD, o);
    runtime::StaticRuntime ref(MPI_COMM_SELF, options(sfc::Curve::kMorton));
    const ThreadScope two(2);
    rt.mesh_changed(d);
    {
      const ThreadScope one(1);
      ref.mesh_changed(whole);
    }
    const std::string how = "seed " + std::to_string(seed);
    // Four variable groups for two workers: not enough, no face is deferred.
    batch_and_compare(rt, d, ref, whole, stage_batch(7, 4, 1, 3, nullptr), how + ", 4 groups");
    EXPECT_EQ(rt.deferred_faces(), 0u) << how;
    // Eight: faces between tasks are deferred, and same-level faces read in place.
    batch_and_compare(rt, d, ref, whole, stage_batch(7, 8, 1, 3, nullptr), how + ", 8 groups");
    EXPECT_TRUE(all_ranks(d.blocks.size() < 2 || rt.deferred_faces() > 0,
                          how + ": deferred faces " + std::to_string(rt.deferred_faces())));
    EXPECT_TRUE(
        all_ranks(d.blocks.size() < 2 || rt.faces_read_in_place() > 0,
                  how + ": faces read in place " + std::to_string(rt.faces_read_in_place())));
  }
}

}  // namespace

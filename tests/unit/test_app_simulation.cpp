// The driver on small meshes whose block counts are worked out by hand in the comments.
#include <bit>
#include <cmath>
#include <filesystem>

#include <limits>

#include <gtest/gtest.h>
#include <mpi.h>

#include "app/config.hpp"
#include "app/errors.hpp"
#include "app/simulation.hpp"
#include "runtime/dynamic_runtime.hpp"
#include "runtime/static_runtime.hpp"
#include "stencil/hash.hpp"

using namespace miniamr;
using app::Config;
using app::Object;

namespace {

class MpiEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { MPI_Init(nullptr, nullptr); }
  void TearDown() override { MPI_Finalize(); }
};
const auto* const kMpi = ::testing::AddGlobalTestEnvironment(new MpiEnvironment);

Config small(int refine) {
  Config c;
  c.nx = c.ny = c.nz = 4;
  c.num_vars = 2;
  c.num_refine = refine;
  c.num_tsteps = 1;
  c.num_tsteps_given = true;
  c.stages_per_ts = 2;
  c.checksum_freq = 1;
  c.report_perf = 0;
  return c;
}

Object solid_box(std::array<double, 3> centre, std::array<double, 3> size) {
  Object o;
  o.type = 1;
  o.center = centre;
  o.size = size;
  return o;
}

app::RunStats run(const Config& c) {
  runtime::StaticRuntime rt;
  app::Simulation sim(c, rt, nullptr);
  sim.run();
  return sim.stats();
}

using Levels = std::vector<std::int64_t>;

}  // namespace

TEST(Simulation, UniformRefinementOfTwoRoots) {
  Config c = small(2);
  c.init_x = 2;
  c.uniform_refine = 1;
  EXPECT_EQ(run(c).final_level_counts, (Levels{0, 0, 128}));  // 2 * 8^2
}

TEST(Simulation, UniformRefinementOfAnOddRootGrid) {
  Config c = small(1);
  c.init_x = 3;
  c.npz = 5;  // 3 x 1 x 5 roots
  c.uniform_refine = 1;
  EXPECT_EQ(run(c).final_level_counts, (Levels{0, 15 * 8}));
}

TEST(Simulation, SolidBoxRefinesOnlyTheOctantsItOverlaps) {
  // Box (0,0.5)^3: the root overlaps it -> 8 children; only child 0 ([0,.5]^3) overlaps it
  // strictly -> 8 grandchildren; its 7 siblings stay (family rule): 7 + 8 blocks.
  Config c = small(2);
  c.objects = {solid_box({0.25, 0.25, 0.25}, {0.25, 0.25, 0.25})};
  EXPECT_EQ(run(c).final_level_counts, (Levels{0, 7, 8}));
}

TEST(Simulation, SolidBoxOnTheFirstRootOfAnOddGrid) {
  // Roots are 1/3 wide in x; the box (0,1/3) x (0,1)^2 overlaps root 0 only (root 1 starts at
  // x = 1/3, and the test is strict).
  Config c = small(1);
  c.init_x = 3;
  c.objects = {solid_box({1.0 / 6, 0.5, 0.5}, {1.0 / 6, 0.5, 0.5})};
  EXPECT_EQ(run(c).final_level_counts, (Levels{2, 8}));
}

TEST(Simulation, RefineGhostSeesAnObjectOneCellOutside) {
  // Box x in (1.1, 2): outside the cube. Grown by one level-0 cell (1/4 with nx = 4) the root
  // reaches x = 1.25 > 1.1, so with --refine_ghost it refines.
  Config c = small(1);
  c.objects = {solid_box({1.55, 0.5, 0.5}, {0.45, 0.6, 0.6})};
  EXPECT_EQ(run(c).final_level_counts, (Levels{1, 0}));
  c.refine_ghost = true;
  EXPECT_EQ(run(c).final_level_counts, (Levels{0, 8}));
}

TEST(Simulation, BlockChangeLimitsCoarseningPerStep) {
  // A solid box covering the cube refines it uniformly to level 3 at ts 0 (512 blocks); its
  // size then goes negative at the first move, so every family may coarsen: one level per
  // refinement step with --block_change 1, all the way down with the default (= num_refine).
  Config c = small(3);
  c.num_vars = 1;
  c.refine_freq = 1;
  c.num_tsteps = 2;
  Object o = solid_box({0.5, 0.5, 0.5}, {0.6, 0.6, 0.6});
  o.inc = {-1.0, -1.0, -1.0};
  c.objects = {o};
  EXPECT_EQ(run(c).final_level_counts, (Levels{1, 0, 0, 0}));
  c.block_change = 1;
  EXPECT_EQ(run(c).final_level_counts, (Levels{0, 8, 0, 0}));  // 512 -> 64 -> 8
  c.num_tsteps = 1;
  EXPECT_EQ(run(c).final_level_counts, (Levels{0, 0, 64, 0}));
}

TEST(Simulation, RefineFreqZeroRefinesOnlyAtTimestepZero) {
  Config c = small(2);
  c.refine_freq = 0;
  c.num_tsteps = 10;
  Object o = solid_box({0.25, 0.25, 0.25}, {0.25, 0.25, 0.25});
  o.move = {0.05, 0.05, 0.05};  // would be at (0.75, 0.75, 0.75) by the end
  c.objects = {o};
  EXPECT_EQ(run(c).final_level_counts, (Levels{0, 7, 8}));
}

TEST(Simulation, RefinementFollowsUpToTheLastMultipleOfRefineFreq) {
  Config c = small(2);
  c.refine_freq = 5;
  c.num_tsteps = 20;
  EXPECT_TRUE(refinement_follows(c, 0));
  EXPECT_TRUE(refinement_follows(c, 10));
  EXPECT_TRUE(refinement_follows(c, 15));  // at 20, the last timestep
  EXPECT_TRUE(refinement_follows(c, 16));
  EXPECT_FALSE(refinement_follows(c, 20));
  c.num_tsteps = 19;
  EXPECT_FALSE(refinement_follows(c, 15));
  // No end known: with --time alone one is assumed; with both, --num_tsteps bounds it.
  c.time_given = true;
  c.num_tsteps_given = false;
  EXPECT_TRUE(refinement_follows(c, 15));
  c.num_tsteps_given = true;
  EXPECT_FALSE(refinement_follows(c, 15));
  // Never with refinement only at timestep 0, a uniform mesh or no levels, and no overflow.
  c.refine_freq = 0;
  EXPECT_FALSE(refinement_follows(c, 0));
  c.refine_freq = 5;
  c.uniform_refine = 1;
  EXPECT_FALSE(refinement_follows(c, 0));
  c.uniform_refine = 0;
  c.num_refine = 0;
  EXPECT_FALSE(refinement_follows(c, 0));
  c.num_refine = 2;
  c.refine_freq = std::numeric_limits<int>::max();
  c.num_tsteps = std::numeric_limits<int>::max();
  EXPECT_TRUE(refinement_follows(c, 1));
  EXPECT_FALSE(refinement_follows(c, std::numeric_limits<int>::max()));
}

TEST(Simulation, TimeModeAdaptsTheStepToTheFastestObject) {
  // delta = 1 / (|m| * M * n) with M = 1 * 2^(R+1) = 8 and n = 4: 1 / (0.01 * 32) = 3.125,
  // so --time 10 takes 4 steps and ends at t = 12.5.
  Config c = small(2);
  c.num_tsteps_given = false;
  c.time_given = true;
  c.time = 10.0;
  Object o = solid_box({0.25, 0.25, 0.25}, {0.1, 0.1, 0.1});
  o.move = {0.01, 0.0, 0.0};
  c.objects = {o};
  auto s = run(c);
  EXPECT_EQ(s.timesteps_done, 4);
  EXPECT_DOUBLE_EQ(s.sim_time, 12.5);
  // With --num_tsteps too, delta = T / n and the run ends at n steps.
  c.num_tsteps_given = true;
  c.num_tsteps = 5;
  s = run(c);
  EXPECT_EQ(s.timesteps_done, 5);
  EXPECT_DOUBLE_EQ(s.sim_time, 10.0);
}

TEST(Simulation, BounceReflectsTheCentre) {
  Config c = small(1);
  c.num_tsteps = 1;
  Object o = solid_box({0.95, 0.5, 0.5}, {0.1, 0.1, 0.1});
  o.move = {0.1, 0.0, 0.0};
  o.bounce = 1;
  c.objects = {o};
  runtime::StaticRuntime rt;
  app::Simulation sim(c, rt, nullptr);
  sim.run();
  EXPECT_NEAR(sim.objects()[0].center[0], 0.95, 1e-15);  // 1.05 reflected to 2 - 1.05
  EXPECT_EQ(sim.objects()[0].move[0], -0.1);
}

TEST(Simulation, ChecksumsAreConservedThroughRefinementAndCoarsening) {
  Config c = small(3);
  c.num_vars = 3;
  c.num_tsteps = 12;
  c.refine_freq = 2;
  Object o;
  o.type = 2;
  o.center = {0.1, 0.2, 0.3};
  o.move = {0.05, 0.04, 0.03};
  o.size = {0.3, 0.3, 0.3};
  c.objects = {o};
  const auto s = run(c);
  EXPECT_GT(s.blocks_split, 0);
  EXPECT_GT(s.blocks_reformed, 0);
  ASSERT_EQ(s.final_checksums.size(), 3u);
  for (std::size_t v = 0; v < 3; ++v)
    EXPECT_NEAR(s.final_checksums[v] / s.initial_checksums[v], 1.0, 1e-12);
}

TEST(Simulation, TwentySevenPointConservesOnAUniformMesh) {
  // Level changes fill no edge or corner ghosts, so like the reference the 27-point stencil
  // conserves only without them.
  Config c = small(2);
  c.init_x = 2;
  c.uniform_refine = 1;
  c.stencil = 27;
  c.num_tsteps = 3;
  const auto s = run(c);
  for (std::size_t v = 0; v < s.final_checksums.size(); ++v)
    EXPECT_NEAR(s.final_checksums[v] / s.initial_checksums[v], 1.0, 1e-12);
}

TEST(Simulation, ChecksumOutsideToleranceIsARunError) {
  Config c = small(2);
  c.objects = {solid_box({0.25, 0.25, 0.25}, {0.25, 0.25, 0.25})};
  c.error_tol = 40;  // rounding alone exceeds 1e-40
  EXPECT_THROW(run(c), app::RunError);
}

TEST(Simulation, MaxBlocksCapIsARunError) {
  Config c = small(2);
  c.uniform_refine = 1;
  c.max_blocks = 20;
  c.max_blocks_given = true;
  EXPECT_THROW(run(c), app::RunError);  // level 2 needs 64 blocks plus the splits in flight
}

TEST(Simulation, BatchesOfTimestepsEndWhereTheBlocksAreReadOrChanged) {
  // Twelve timesteps of three stages, at most five a batch; one variable a cache chunk, so the
  // first variable goes through a whole batch before the second starts.
  Config c = small(2);
  c.num_tsteps = 12;
  c.stages_per_ts = 3;
  c.checksum_freq = 2;  // stages 0 and 2 of each timestep
  c.chunk_vars = 1;
  c.batch_tsteps = 5;
  c.objects = {solid_box({0.25, 0.25, 0.25}, {0.25, 0.25, 0.25})};
  c.refine_freq = 5;  // refinement after 5 and 10: 1-5, 6-10, 11-12
  const app::RunStats five = run(c);
  EXPECT_EQ(five.stage_batches, 3);
  EXPECT_EQ(five.stages_done, 36);
  c.plot_freq = 3;  // plots after 3, 6, 9, 12 too: 1-3, 4-5, 6, 7-9, 10, 11-12
  const std::string files = ::testing::TempDir() + "miniamr_batches";  // plots, checkpoints
  std::filesystem::create_directories(files);
  c.plot_dir = files;
  EXPECT_EQ(run(c).stage_batches, 6);
  c.plot_freq = 0;
  c.checkpoint_freq = 4;  // checkpoints after 4, 8, 12: 1-4, 5, 6-8, 9-10, 11-12
  c.checkpoint_dir = files;
  EXPECT_EQ(run(c).stage_batches, 5);
  std::filesystem::remove_all(files);
  c.checkpoint_freq = 0;
  c.refine_freq = 0;
  c.batch_tsteps = 8;  // nothing in the way: 1-8, 9-12
  EXPECT_EQ(run(c).stage_batches, 2);

  // Timestep by timestep: the same stages in the same order per variable, so the same bits.
  c.refine_freq = 5;
  c.batch_tsteps = 1;
  const app::RunStats one = run(c);
  EXPECT_EQ(one.stage_batches, 12);
  EXPECT_EQ(one.final_checksums, five.final_checksums);
  EXPECT_EQ(one.field_digest, five.field_digest);
  EXPECT_EQ(one.stages_done, five.stages_done);
  EXPECT_EQ(one.block_stage_sum, five.block_stage_sum);
  EXPECT_EQ(one.cell_var_updates_rank, five.cell_var_updates_rank);
  EXPECT_EQ(one.timesteps_done, five.timesteps_done);
  EXPECT_EQ(one.final_level_counts, five.final_level_counts);

  // The dynamic runtime batches as the static one (on one rank its balancer never decides,
  // so no batch ends for a decision: tests/mpi/test_mpi_balance_simulation.cpp).
  c.runtime = "dynamic";
  c.batch_tsteps = 5;
  c.lb_freq = 2;
  runtime::DynamicRuntime dynamic;
  app::Simulation sim(c, dynamic, nullptr);
  sim.run();
  EXPECT_EQ(sim.stats().stage_batches, 3);
  EXPECT_EQ(sim.stats().field_digest, five.field_digest);
  EXPECT_EQ(sim.stats().final_checksums, five.final_checksums);
}

TEST(Simulation, FieldDigestHashesEachBlockInOrder) {
  // The digest against its definition, one block at a time, for block counts that leave every
  // remainder of the four blocks hashed together.
  for (const int roots : {1, 2, 3, 5, 7}) {
    Config c = small(0);
    c.init_x = roots;
    runtime::StaticRuntime rt;
    app::Simulation sim(c, rt, nullptr);
    sim.run();
    const mesh::Domain& d = sim.domain();
    ASSERT_EQ(d.blocks.size(), std::size_t(roots));
    std::uint64_t digest = 0;
    for (std::size_t b = 0; b < d.blocks.size(); ++b) {
      const octree::Key& k = d.leaves[b];
      std::uint64_t h = stencil::hash_combine(std::uint64_t(k.level), k.x[0]);
      h = stencil::hash_combine(stencil::hash_combine(h, k.x[1]), k.x[2]);
      for (int v = 0; v < d.shape.num_vars; ++v)
        for (int i = 1; i <= d.shape.nx; ++i)
          for (int j = 1; j <= d.shape.ny; ++j)
            for (int z = 1; z <= d.shape.nz; ++z)
              h = stencil::hash_combine(
                  h, std::bit_cast<std::uint64_t>(d.blocks[b].var(v)[d.shape.at(i, j, z)]));
      digest += h;
    }
    EXPECT_EQ(sim.stats().field_digest, digest) << roots << " blocks";
  }
}

TEST(Simulation, TimeModeRunsTimestepByTimestep) {
  // --time: the run ends at a simulated time, known to be reached only when it is.
  Config c = small(2);
  Object o = solid_box({0.25, 0.25, 0.25}, {0.25, 0.25, 0.25});
  o.move = {0.01, 0.0, 0.0};
  c.objects = {o};
  c.num_tsteps = 20;  // would allow batches, were the end known
  c.num_tsteps_given = false;
  c.time_given = true;
  c.time = 10;
  const app::RunStats s = run(c);
  EXPECT_GT(s.timesteps_done, 1);
  EXPECT_EQ(s.stage_batches, s.timesteps_done);
}

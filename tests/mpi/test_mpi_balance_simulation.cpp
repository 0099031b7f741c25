// The dynamic runtime's balancer inside the driver on 1..4 ranks: batches of timesteps end where
// a decision is due (--lb_freq) or a refinement step comes; every refinement step is cut by the
// ranks' speeds and logged; decisions come between refinement steps only; and none of it
// changes a bit of the results (the static runtime's digest and checksums). A slow rank is slow
// at every piece of work on block values, in both runtimes.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/config.hpp"
#include "app/simulation.hpp"
#include "comm/mpi.hpp"
#include "mpi_checks.hpp"
#include "runtime/dynamic_runtime.hpp"
#include "runtime/static_runtime.hpp"

namespace {

using namespace miniamr;

bool everywhere(bool ok) {
  int flag = ok ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &flag, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return flag != 0;
}

// Twelve timesteps of two stages on a mesh refined around a box, refinement after 5 and 10.
app::Config deck() {
  app::Config c;
  c.nx = c.ny = c.nz = 4;
  c.num_vars = 2;
  c.num_refine = 2;
  c.num_tsteps = 12;
  c.num_tsteps_given = true;
  c.stages_per_ts = 2;
  c.checksum_freq = 1;
  c.report_perf = 0;
  c.refine_freq = 5;
  c.batch_tsteps = 5;
  c.init_x = 2;
  app::Object box;
  box.type = 1;
  box.center = {0.3, 0.3, 0.3};
  box.size = {0.2, 0.2, 0.2};
  box.move = {0.02, 0.0, 0.0};
  c.objects = {box};
  return c;
}

// deck() with the box standing still and refinement after every 2 timesteps of 8: the mesh is
// made at timestep 0, and the steps after 2, 4, 6 and 8 change nothing.
app::Config still_deck() {
  app::Config c = deck();
  c.num_tsteps = 8;
  c.refine_freq = 2;
  c.objects[0].move = {0.0, 0.0, 0.0};
  return c;
}

struct Outcome {
  app::RunStats stats;
  app::BalanceStats balance;
};

Outcome run_static(const app::Config& c) {
  runtime::StaticRuntime rt;
  app::Simulation sim(c, rt, nullptr);
  sim.run();
  return {sim.stats(), {}};
}

Outcome run_dynamic(const app::Config& c) {
  runtime::DynamicRuntime rt;
  app::Simulation sim(c, rt, nullptr);
  sim.run();
  return {sim.stats(), sim.balancer()->stats()};
}

// A path in the test folder for a file named `name` of this run alone: ctest runs this binary on
// 1 to 4 ranks at once, and each run writes its own logs and replays.
std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + std::to_string(mpi_checks::run_id()) + "." + name;
}

// Runs `c` in the dynamic runtime replaying a log of `lines` (after its header, written on rank 0
// to the test folder as `name`, removed after).
Outcome run_replayed(app::Config c, const std::string& name, const std::string& lines) {
  int P = 1, me = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  c.lb_replay_path = temp_path(name);
  if (me == 0) {
    std::ofstream out(c.lb_replay_path);
    out << nlohmann::json{{"miniamr_lb_log", 1}, {"ranks", P}}.dump() << "\n" << lines;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const Outcome d = run_dynamic(c);
  MPI_Barrier(MPI_COMM_WORLD);
  if (me == 0) std::remove(c.lb_replay_path.c_str());
  return d;
}

// A logged refinement cut at `ts` giving rank 0 twice the share of each other rank.
std::string rank_0_twice(int ts) {
  int P = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  std::vector<double> shares(std::size_t(P), 1.0);
  shares[0] = 2.0;
  return nlohmann::json{{"timestep", ts}, {"kind", "refinement"}, {"shares", shares}}.dump() + "\n";
}

std::vector<nlohmann::json> log_lines(const std::string& path) {
  std::vector<nlohmann::json> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

TEST(BalanceInTheDriver, BatchesEndAtDecisionsAndResultsStayBitwise) {
  int P = 1, me = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  app::Config c = deck();
  const Outcome reference = run_static(c);
  c.runtime = "dynamic";
  c.lb_freq = 3;
  const std::string log = temp_path("miniamr_balance_driver.jsonl");
  c.lb_log_path = log;
  const Outcome d = run_dynamic(c);
  EXPECT_TRUE(everywhere(d.stats.field_digest == reference.stats.field_digest));
  EXPECT_TRUE(everywhere(d.stats.final_checksums == reference.stats.final_checksums));
  EXPECT_EQ(d.stats.stages_done, reference.stats.stages_done);
  if (P == 1) {
    // One rank never decides: 1-5, 6-10, 11-12, as the static runtime.
    EXPECT_EQ(d.stats.stage_batches, reference.stats.stage_batches);
    EXPECT_EQ(d.stats.stage_batches, 3);
    EXPECT_EQ(d.balance.decisions_taken + d.balance.decisions_skipped, 0);
    EXPECT_EQ(d.balance.refinement_cuts, 0);
    return;
  }
  // Decisions due after 3, 6, 12, and after 1: the refinement step at 0 made many blocks of
  // two roots (a recheck; the steps at 5 and 10 grow the mesh less than twice, so none after 11).
  // None after 9: the refinement step after 10 cuts from the same measurements. With refinement
  // after 5 and 10: 1, 2-3, 4-5, 6, 7-10, 11-12.
  EXPECT_EQ(d.stats.stage_batches, 6);
  EXPECT_EQ(d.balance.decisions_taken + d.balance.decisions_skipped, 4);
  // The refinement steps at 0, 5 and 10 are cut by the speeds.
  EXPECT_EQ(d.balance.refinement_cuts, 3);
  EXPECT_EQ(d.balance.blocks_migrated_at_refinement, d.stats.blocks_moved_lb);
  EXPECT_GE(d.balance.blocks_migrated, d.balance.blocks_migrated_at_refinement);
  if (me != 0) return;
  ASSERT_EQ(d.balance.final_shares.size(), std::size_t(P));
  std::vector<int> cuts, decisions;
  for (const auto& l : log_lines(log)) {
    if (l.contains("miniamr_lb_log")) continue;
    (l.at("kind") == "refinement" ? cuts : decisions).push_back(l.at("timestep").get<int>());
    if (l.at("kind") == "refinement") {
      EXPECT_EQ(l.at("shares").size(), std::size_t(P));
    }
  }
  EXPECT_EQ(cuts, (std::vector<int>{0, 5, 10}));
  EXPECT_EQ(decisions, (std::vector<int>{1, 3, 6, 12}));
  std::remove(log.c_str());
}

TEST(BalanceInTheDriver, NoneNeitherCutsNorMoves) {
  app::Config c = deck();
  c.runtime = "dynamic";
  c.lb = "none";
  const Outcome d = run_dynamic(c);
  EXPECT_EQ(d.balance.refinement_cuts, 0);
  EXPECT_EQ(d.balance.blocks_migrated, 0);
  EXPECT_EQ(d.stats.blocks_moved_lb, 0);
  EXPECT_EQ(d.balance.decisions_taken, 0);
}

// A refinement step that more than doubles the mesh gets a decision after its next timestep (a
// recheck) only when its cut is in doubt: here the shares come from a replayed log, so that no
// measurement decides. The box enters the domain only by the step after timestep 5, which makes
// many blocks of two roots.
TEST(BalanceInTheDriver, GrownMeshIsRecheckedOnlyWhenItsCutSetsRanksApart) {
  int P = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  if (P == 1) GTEST_SKIP() << "one rank never decides";
  app::Config c = deck();
  c.num_tsteps = 8;
  c.objects[0].center = {-0.2, 0.3, 0.3};
  c.objects[0].move = {0.1, 0.0, 0.0};
  c.runtime = "dynamic";
  c.lb_freq = 100;  // no decision but the recheck
  // Equal shares (no cut logged): 1-5, 6-8, no decision.
  const Outcome equal = run_replayed(c, "miniamr_recheck_equal.jsonl", "");
  ASSERT_EQ(equal.stats.mesh_history.size(), 2u);
  std::int64_t roots = 0, grown = 0;
  for (const auto n : equal.stats.mesh_history[0].blocks_per_level) roots += n;
  for (const auto n : equal.stats.mesh_history[1].blocks_per_level) grown += n;
  EXPECT_EQ(equal.stats.mesh_history[1].timestep, 5);
  EXPECT_GT(grown, 2 * roots);
  EXPECT_EQ(equal.stats.stage_batches, 2);
  EXPECT_EQ(equal.balance.decisions_taken + equal.balance.decisions_skipped, 0);
  // Rank 0 at twice the share of the others: 1-5, 6, 7-8, and the recheck after 6.
  const Outcome apart = run_replayed(c, "miniamr_recheck_apart.jsonl", rank_0_twice(5));
  EXPECT_EQ(apart.stats.stage_batches, 3);
  EXPECT_EQ(apart.balance.decisions_taken + apart.balance.decisions_skipped, 1);
  EXPECT_TRUE(everywhere(apart.stats.field_digest == equal.stats.field_digest));
}

// A re-cut after a refinement step is a function of the leaves, their weights and the shares:
// after steps that change nothing it would move nothing, and it is not made again.
TEST(BalanceInTheDriver, ACutStandsUntilTheMeshChanges) {
  int P = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  if (P == 1) GTEST_SKIP() << "one rank is never cut";
  app::Config c = still_deck();
  // The count cut keeps families whole: on these 2 roots, refined around the box, it leaves the
  // ranks' counts at least 2 apart on 2, 3 and 4 ranks, so every step after the first asks for
  // a re-cut: made once.
  const Outcome counts = run_static(c);
  ASSERT_EQ(counts.stats.refine_steps, 5);
  EXPECT_EQ(counts.stats.load_balances, 1);
  // The dynamic runtime's cuts by shares (replayed, rank 0 at twice the share of the others at
  // every step): re-cut once, after the first step that changes nothing.
  c.runtime = "dynamic";
  c.lb_freq = 100;
  std::string cuts;
  for (int ts = 0; ts <= c.num_tsteps; ts += c.refine_freq) cuts += rank_0_twice(ts);
  const Outcome cut = run_replayed(c, "miniamr_standing_cut.jsonl", cuts);
  EXPECT_EQ(cut.stats.load_balances, 1);
  EXPECT_TRUE(everywhere(cut.stats.field_digest == counts.stats.field_digest));
}

// After a refinement step that changed nothing, the dynamic balancer's re-cut by the step's
// shares moves blocks as a decision does, and is made only when it pays as one. With rank 0 four
// times slower the shares differ from the first cut's (made before any measurement); over a link
// of 1 s a message no move pays, and every step keeps its partition, counted as a skipped
// decision and logged as "recut": false. Replaying that log keeps them too.
TEST(BalanceInTheDriver, ARecutOfAnUnchangedMeshIsMadeOnlyWhenItPays) {
  int P = 1, me = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  if (P == 1) GTEST_SKIP() << "one rank is never cut";
  app::Config c = still_deck();
  c.runtime = "dynamic";
  c.lb_freq = 100;
  c.lb_link_model_path = temp_path("miniamr_slow_link.yaml");
  const std::string log = temp_path("miniamr_recut.jsonl");
  c.lb_log_path = log;
  if (me == 0) {
    std::ofstream out(c.lb_link_model_path);
    out << "model: alpha-beta\npair_classes:\n  same_node:\n    latency_s: 1.0\n"
           "    bandwidth_Bps: 1000.0\n";
  }
  MPI_Barrier(MPI_COMM_WORLD);
  runtime::RuntimeOptions options;
  options.slow_factor = me == 0 ? 4.0 : 1.0;
  const auto run = [&](const app::Config& config) {
    runtime::DynamicRuntime rt(MPI_COMM_WORLD, options);
    app::Simulation sim(config, rt, nullptr);
    sim.run();
    return Outcome{sim.stats(), sim.balancer()->stats()};
  };
  const Outcome live = run(c);
  EXPECT_EQ(live.stats.load_balances, 0);
  EXPECT_GE(live.balance.decisions_skipped, 1);
  EXPECT_EQ(live.balance.refinement_cuts + live.balance.decisions_skipped, 5);
  int kept = 0;
  if (me == 0) {
    for (const auto& l : log_lines(log))
      if (l.contains("recut")) {
        EXPECT_EQ(l.at("recut"), false);
        EXPECT_EQ(l.at("blocks"), 0);
        ++kept;
      }
    EXPECT_EQ(kept, live.balance.decisions_skipped);
  }
  c.lb_replay_path = log;
  c.lb_log_path.clear();
  options.slow_factor = 1.0;
  const Outcome replayed = run(c);
  EXPECT_EQ(replayed.stats.load_balances, 0);
  EXPECT_EQ(replayed.balance.decisions_skipped, live.balance.decisions_skipped);
  EXPECT_EQ(replayed.stats.blocks_moved_lb, live.stats.blocks_moved_lb);
  EXPECT_TRUE(everywhere(replayed.stats.field_digest == live.stats.field_digest));
  MPI_Barrier(MPI_COMM_WORLD);
  if (me == 0) {
    std::remove(log.c_str());
    std::remove(c.lb_link_model_path.c_str());
  }
}

// --slow_rank on the last rank: its stages, its compact copies (where the kernels sweep compact
// interiors) and refinement's splits and merges are all slowed, nothing on the other ranks, and
// no value changes.
TEST(SlowRank, SlowsEveryPieceOfWorkOnBlockValues) {
  int P = 1, me = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  using Work = runtime::Slowdown::Work;
  const app::Config c = deck();
  const Outcome reference = run_static(c);
  runtime::RuntimeOptions options;
  options.slow_factor = me == P - 1 ? 2.0 : 1.0;
  const auto check = [&](runtime::Runtime& rt, const char* name) {
    SCOPED_TRACE(name);
    app::Simulation sim(c, rt, nullptr);
    sim.run();
    EXPECT_TRUE(everywhere(sim.stats().field_digest == reference.stats.field_digest));
    const runtime::Slowdown& slow = rt.slowdown();
    if (me != P - 1) {
      for (const Work w : {Work::kStages, Work::kCopies, Work::kAdaptation})
        EXPECT_EQ(slow.spent(w), 0.0);
      return;
    }
    EXPECT_GT(slow.spent(Work::kStages), 0.0);
    EXPECT_GT(slow.spent(Work::kAdaptation), 0.0);  // the last rank splits blocks of the box
    if (rt.kernels().calls().compact > 0)
      EXPECT_GT(slow.spent(Work::kCopies), 0.0);
    else
      EXPECT_EQ(slow.spent(Work::kCopies), 0.0);
  };
  runtime::StaticRuntime s(MPI_COMM_WORLD, options);
  check(s, "static");
  runtime::DynamicRuntime d(MPI_COMM_WORLD, options);
  check(d, "dynamic");
}

}  // namespace

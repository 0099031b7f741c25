// model.yaml as miniamr-netbench writes it is what miniamr reads (app/link_model_file.hpp);
// and the scheduler's pairs and steps for the layouts of ranks over nodes.
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "app/link_model_file.hpp"
#include "netbench/model_file.hpp"
#include "netbench/models.hpp"
#include "netbench/schedule.hpp"

namespace miniamr::netbench {
namespace {

using ::testing::HasSubstr;

TEST(NetbenchModelFile, TheReaderReadsWhatTheWriterWrites) {
  ClassModel same{PairClass::kSameNode, {3.1e-7, 1.8e9, 10, 0.2}, LogGP{1e-7, 1e-7, 2e-7, 5e-10}};
  ClassModel other{PairClass::kOtherNode, {1.5e-6, 1.2e10, 10, 0.1}, std::nullopt};
  const std::vector<ClassModel> classes = {same, other};
  const std::string text =
      model_yaml("0.1.0", {"it's.yaml", 4, 2, "2024-01-01T00:00:00Z"}, classes);
  EXPECT_THAT(text, HasSubstr("model: alpha-beta\n"));
  EXPECT_THAT(text, HasSubstr("source: {config: 'it''s.yaml', ranks: 4, nodes: 2"));
  const app::LinkModels m = app::parse_link_models(text, "model.yaml");
  ASSERT_TRUE(m.same_node && m.other_node);
  EXPECT_NEAR(m.same_node->latency_s, 3.1e-7, 1e-12);
  EXPECT_NEAR(m.same_node->bandwidth_Bps, 1.8e9, 1e3);
  EXPECT_NEAR(m.other_node->latency_s, 1.5e-6, 1e-12);
  EXPECT_NEAR(m.other_node->bandwidth_Bps, 1.2e10, 1e4);
}

TEST(NetbenchModelFile, OneNodeGivesSameNodeOnly) {
  const std::vector<ClassModel> classes = {{PairClass::kSameNode, {0, 1e9, 2, 0}, std::nullopt}};
  const std::string text = model_yaml("0.1.0", {"c.yaml", 2, 1, "d"}, classes);
  EXPECT_THAT(text, ::testing::Not(HasSubstr("loggp")));
  const app::LinkModels m = app::parse_link_models(text, "model.yaml");
  EXPECT_TRUE(m.same_node);
  EXPECT_FALSE(m.other_node);
}

TEST(NetbenchModels, PingPongRowsFeedTheFitOfTheirClass) {
  std::vector<ResultRow> rows;
  for (double n = 8; n <= 8192; n *= 4) {
    ResultRow r;
    r.test = TestKind::kPingPong;
    r.pair_class = "same_node";
    r.bytes = std::int64_t(n);
    r.t_median_s = 1e-6 + n / 1e9;
    rows.push_back(r);
    r.pair_class = "all";  // a collective's row never feeds a pair class's fit
    r.t_median_s = 1;
    rows.push_back(r);
  }
  std::vector<std::string> notes;
  const std::vector<ClassModel> m = fit_models(rows, notes);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].pair_class, PairClass::kSameNode);
  EXPECT_NEAR(m[0].alpha_beta.latency_s, 1e-6, 1e-12);
  EXPECT_NEAR(m[0].alpha_beta.bandwidth_Bps, 1e9, 1e3);
  EXPECT_FALSE(m[0].loggp);
}

BenchConfig all_tests() {
  BenchConfig c;
  for (TestKind k : {TestKind::kPingPong, TestKind::kAllreduce, TestKind::kStream})
    c.tests.push_back({k, {8, 8, 2}, 1, 0, 1, 1});
  return c;
}

TEST(NetbenchSchedule, PairsPerLayout) {
  // Two nodes of two ranks: rank 0 and its neighbour, rank 0 and the other node's first rank.
  Topology two_by_two{{0, 0, 1, 1}, 2};
  std::vector<RankPair> p = representative_pairs(two_by_two);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].pair_class, PairClass::kSameNode);
  EXPECT_EQ(p[0].a, 0);
  EXPECT_EQ(p[0].b, 1);
  EXPECT_EQ(p[1].pair_class, PairClass::kOtherNode);
  EXPECT_EQ(p[1].b, 2);
  // Rank 0 alone on its node: the same-node pair is on the next node.
  p = representative_pairs(Topology{{0, 1, 1}, 2});
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].a, 1);
  EXPECT_EQ(p[0].b, 2);
  EXPECT_EQ(p[1].b, 1);
  // One rank per node: no same-node pair.
  p = representative_pairs(Topology{{0, 1}, 2});
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].pair_class, PairClass::kOtherNode);
  EXPECT_TRUE(representative_pairs(Topology{{0}, 1}).empty());
}

TEST(NetbenchSchedule, PointToPointPerPairCollectivesOnce) {
  const Schedule s = make_schedule(all_tests(), Topology{{0, 0, 1, 1}, 2});
  ASSERT_EQ(s.steps.size(), 5u);  // pingpong x2, allreduce, stream x2
  EXPECT_EQ(s.steps[0].pair, 0);
  EXPECT_EQ(s.steps[1].pair, 1);
  EXPECT_EQ(s.steps[2].pair, -1);
  const Schedule one = make_schedule(all_tests(), Topology{{0}, 1});
  ASSERT_EQ(one.steps.size(), 1u);  // allreduce only
  EXPECT_THAT(one.notes.at(0), HasSubstr("pingpong skipped: it needs two ranks"));
}

}  // namespace
}  // namespace miniamr::netbench

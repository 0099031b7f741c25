// Placement plans: the --plan value's two forms, the plan file's lines, a server's answer.
#include <gtest/gtest.h>

#include "app/errors.hpp"
#include "app/placement_plan.hpp"

namespace miniamr::app {
namespace {

using Nodes = std::vector<std::string>;

TEST(PlanSource, HostAndPortOrFile) {
  const PlanSource server = parse_plan_source("planner.example.org:7000");
  EXPECT_TRUE(server.server());
  EXPECT_EQ(server.host, "planner.example.org");
  EXPECT_EQ(server.port, 7000);
  EXPECT_EQ(parse_plan_source("[::1]:80").host, "::1");
  // Not ending in ':' and digits: a file, whatever it contains.
  EXPECT_FALSE(parse_plan_source("plans/run:a.txt").server());
  EXPECT_FALSE(parse_plan_source("plan.txt").server());
}

TEST(PlanSource, UnparsableAddressesAreRefused) {
  EXPECT_THROW(parse_plan_source("host:0"), UsageError);
  EXPECT_THROW(parse_plan_source("host:65536"), UsageError);
  EXPECT_THROW(parse_plan_source("host:99999999999999999999"), UsageError);
  EXPECT_THROW(parse_plan_source(":7000"), UsageError);
  EXPECT_THROW(parse_plan_source("two words:7000"), UsageError);
  EXPECT_THROW(parse_plan_source(""), UsageError);
}

TEST(PlanFile, EachProcessGetsItsOwnLine) {
  const std::string text =
      "# the plan of one job\n"
      "init.0: node0, node1\n"
      "\n"
      "init.2.0: node0,node2,node4,node2  # a grandchild\n";
  EXPECT_EQ(plan_nodes_from_file(text, "p", "init.0"), (Nodes{"node0", "node1"}));
  EXPECT_EQ(plan_nodes_from_file(text, "p", "init.2.0"),
            (Nodes{"node0", "node2", "node4", "node2"}));
  EXPECT_EQ(plan_nodes_from_file(text, "p", "init.1"), std::nullopt);
}

TEST(PlanFile, MalformedLinesNameTheLine) {
  const auto message = [](const std::string& text) {
    try {
      (void)plan_nodes_from_file(text, "plan.txt", "init.0");
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("init.0: a\nfoo\n"), "plan.txt:2: expected 'KEY: node,node,...', got 'foo'");
  EXPECT_EQ(message("main.0: a\n"),
            "plan.txt:1: 'main.0' is not a plan key (init, then .N one or more times)");
  EXPECT_EQ(message("init: a\n"),
            "plan.txt:1: 'init' is not a plan key (init, then .N one or more times)");
  EXPECT_EQ(message("init.x: a\n"),
            "plan.txt:1: 'init.x' is not a plan key (init, then .N one or more times)");
  EXPECT_EQ(message("init.0:\n"), "plan.txt:1: '' is not a comma-separated list of host names");
  EXPECT_EQ(message("init.0: a,,b\n"),
            "plan.txt:1: 'a,,b' is not a comma-separated list of host names");
  EXPECT_EQ(message("init.0: a\ninit.0: b\n"), "plan.txt:2: the key init.0 appears twice");
}

TEST(NodeList, OnlyHostNames) {
  EXPECT_EQ(parse_node_list("vm"), (Nodes{"vm"}));
  EXPECT_EQ(parse_node_list("n-1.cluster,n_2"), (Nodes{"n-1.cluster", "n_2"}));
  EXPECT_EQ(parse_node_list("%%%"), std::nullopt);
  EXPECT_EQ(parse_node_list("ERROR no plan for init.0"), std::nullopt);
  EXPECT_EQ(parse_node_list(""), std::nullopt);
  EXPECT_EQ(parse_node_list("a,"), std::nullopt);
  EXPECT_EQ(parse_node_list(std::string("a\0b", 3)), std::nullopt);
}

TEST(PlanRequest, TheChildJobIsNotKnownYet) {
  EXPECT_EQ(plan_request(SpawnerId{"547946497", 0}), "547946497;0;?");
  EXPECT_EQ(plan_key(SpawnerId{"547946497", 3}), "init.3");
}

TEST(Placement, AWrongNodeCountIsAnError) {
  EXPECT_TRUE(resolve_placement(PlanOptions{}, 3).hosts.empty());
  EXPECT_EQ(resolve_placement(PlanOptions{}, 3).source, "none");
  EXPECT_THROW(resolve_placement(PlanOptions{"/nonexistent/plan.txt"}, 3), UsageError);
}

}  // namespace
}  // namespace miniamr::app

// The progress line's time left: the mesh forecast from the objects' motion against the meshes
// the scenario decks really make (the reference's tables), and the work left it implies.
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "app/mesh_forecast.hpp"
#include "app/options.hpp"
#include "app/progress.hpp"

using namespace miniamr;
using app::MeshForecast;

namespace {

app::Config deck(const std::string& name) {
  const std::vector<std::string> args{std::string(MINIAMR_INPUTS) + "/" + name + "-ci.deck"};
  return app::parse_options(args).config;
}

// Timestep -> total blocks after its refinement step, from the reference's table.
std::map<int, double> table(const std::string& name) {
  std::ifstream in(std::string(MINIAMR_TEST_DATA) + "/tables/" + name + ".txt");
  std::map<int, double> blocks;
  for (std::string line; std::getline(in, line);) {
    int ts = 0;
    double total = 0;
    const auto at = line.find("Total number of blocks at timestep ");
    if (at != std::string::npos &&
        std::sscanf(line.c_str() + at, "Total number of blocks at timestep %d is %lf", &ts,
                    &total) == 2)
      blocks[ts] = total;
  }
  return blocks;
}

class Forecast : public ::testing::TestWithParam<const char*> {};

// The model leaves out the 2:1 closure, which only adds blocks: at every refinement step it
// holds between half the real mesh and all of it, so its rises and falls are the mesh's.
TEST_P(Forecast, FollowsTheRealMeshAtEveryRefinementStep) {
  const app::Config c = deck(GetParam());
  const MeshForecast f(c, c.objects, 1, 1.0);
  const auto real = table(GetParam());
  ASSERT_GT(real.size(), 10u);
  for (const auto& [ts, blocks] : real) {
    EXPECT_LE(f.leaves(ts), blocks) << "timestep " << ts;
    EXPECT_GE(f.leaves(ts), 0.55 * blocks) << "timestep " << ts;
  }
}

INSTANTIATE_TEST_SUITE_P(Decks, Forecast,
                         ::testing::Values("expanding_sphere", "moving_sphere", "two_spheres"));

TEST(Forecast, UniformMeshesNeedNone) {
  app::Config c = deck("expanding_sphere");
  c.uniform_refine = 1;
  EXPECT_TRUE(MeshForecast(c, c.objects, 1, 1.0).empty());
}

// Without a forecast the mesh is taken to stay as it is: updates left at the rate so far.
TEST(TimeLeft, AtTheRateSoFarOnTheMeshAsItIs) {
  const double left = app::Progress::time_left(10, 30, 2.0, 1e6, 50, 1000.0, MeshForecast{});
  EXPECT_DOUBLE_EQ(left, 2.0 / 1e6 * (20 * 50 * 1000.0));
  EXPECT_EQ(app::Progress::time_left(30, 30, 2.0, 1e6, 50, 1000.0, MeshForecast{}), 0.0);
}

// The moving sphere's mesh grows from 135 blocks to about 2200 soon after timestep 20: the
// time left then is many times what the mesh of timestep 20 alone would take.
TEST(TimeLeft, CountsTheMeshTheObjectsWillMake) {
  const app::Config c = deck("moving_sphere");
  const MeshForecast f(c, c.objects, 1, 1.0);
  const double flat = app::Progress::time_left(20, 100, 1.0, 1e6, 135, 1.0, MeshForecast{});
  const double forecast = app::Progress::time_left(20, 100, 1.0, 1e6, 135, 1.0, f);
  EXPECT_GT(forecast, 4 * flat);
  // The forecast scaled to the 135 blocks there are, summed over the timesteps left.
  double blocks = 0;
  for (int k = 21; k <= 100; ++k) blocks += 135.0 / f.leaves(20) * f.leaves(k - 1);
  EXPECT_NEAR(forecast, blocks / 1e6, 1e-12 * blocks);
}

}  // namespace

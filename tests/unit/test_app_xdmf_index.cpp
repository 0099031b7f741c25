// The XDMF index of xdmf plots: one uniform grid per step in a temporal collection, each naming
// the datasets of its own HDF5 file with their dimensions; and where plot files go.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "app/plot_files.hpp"
#include "app/xdmf_index.hpp"

namespace {

using miniamr::app::Config;
using miniamr::app::XdmfStep;

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(XdmfIndex, OneGridPerStepWithItsOwnFileAndDimensions) {
  const std::vector<XdmfStep> steps{{0, 0.0, "plot.000.h5", 2}, {5, 5.5, "plot.005.h5", 912}};
  const std::vector<int> vars{0, 3};
  const std::string text = miniamr::app::xdmf_index_text(steps, vars);
  EXPECT_EQ(count(text, "CollectionType=\"Temporal\""), 1u);
  EXPECT_EQ(count(text, "GridType=\"Uniform\""), 2u);
  EXPECT_EQ(count(text, "<Time Value="), 2u);
  EXPECT_NE(text.find("<Time Value=\"5.5\"/>"), std::string::npos);
  EXPECT_NE(text.find("TopologyType=\"Hexahedron\" NumberOfElements=\"912\""), std::string::npos);
  EXPECT_NE(text.find("Dimensions=\"7296 3\" NumberType=\"Float\" Precision=\"8\" "
                      "Format=\"HDF\">plot.005.h5:/mesh/points<"),
            std::string::npos);
  EXPECT_NE(text.find("Dimensions=\"912 8\" NumberType=\"Int\" Precision=\"8\" "
                      "Format=\"HDF\">plot.005.h5:/mesh/hexahedra<"),
            std::string::npos);
  EXPECT_NE(text.find("Dimensions=\"2 4\" NumberType=\"UInt\" Precision=\"4\" "
                      "Format=\"HDF\">plot.000.h5:/cells/key<"),
            std::string::npos);
  for (const char* name : {"level", "rank", "key", "var0_mean", "var3_mean"})
    EXPECT_EQ(count(text, std::string("Attribute Name=\"") + name + "\""), 2u) << name;
  EXPECT_EQ(count(text, "Center=\"Cell\""), 10u);
  EXPECT_TRUE(text.ends_with("</Xdmf>\n"));
}

TEST(PlotFiles, NamesFollowTheReferenceAndGoToThePlotFolder) {
  Config c;
  c.num_tsteps = 100;
  EXPECT_EQ(miniamr::app::plot_file_name(c, 5), "plot.005");
  EXPECT_EQ(miniamr::app::first_plot_path(c), "plot.000");
  c.plot_format = "xdmf";
  EXPECT_EQ(miniamr::app::first_plot_path(c), "plot.000.h5");
  EXPECT_EQ(miniamr::app::xdmf_index_path(c), "plot.xmf");
  c.plot_dir = "out/plots";
  EXPECT_EQ(miniamr::app::xdmf_index_path(c), "out/plots/plot.xmf");
  EXPECT_EQ(miniamr::app::in_plot_dir(c, "plot.005.h5"), "out/plots/plot.005.h5");
}

TEST(PlotFiles, TheFolderIsCreatedOrRefusedWithAReason) {
  namespace fs = std::filesystem;
  const fs::path top =
      fs::temp_directory_path() / ("miniamr_plot_dir_" + std::to_string(::getpid()));
  Config c;
  c.plot_dir = (top / "a" / "b").string();
  EXPECT_EQ(miniamr::app::make_plot_dir(c), "");
  EXPECT_TRUE(fs::is_directory(top / "a" / "b"));
  EXPECT_EQ(miniamr::app::make_plot_dir(c), "");  // already there
  std::ofstream(top / "file") << "x";
  c.plot_dir = (top / "file").string();
  EXPECT_EQ(miniamr::app::make_plot_dir(c), "'" + c.plot_dir + "' exists and is not a folder");
  c.plot_dir = (top / "file" / "below").string();
  EXPECT_NE(miniamr::app::make_plot_dir(c).find("cannot create the folder"), std::string::npos);
  fs::remove_all(top);
}

}  // namespace

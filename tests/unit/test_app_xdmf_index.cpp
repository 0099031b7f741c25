// The indexes of HDF5 plots: XDMF's (a uniform grid per step in two temporal collections, the
// blocks and the cells, each naming the datasets of its step's file with their dimensions) and
// VTKHDF's file series; and where plot files go.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "app/plot_files.hpp"
#include "app/vtkhdf_plot.hpp"
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
  const std::vector<XdmfStep> steps{{0, 0.0, "plot.000.h5", 2, 512, 729},
                                    {5, 5.5, "plot.005.h5", 912, 512, 729}};
  const std::vector<int> vars{0, 3};
  const std::string text = miniamr::app::xdmf_index_text(steps, vars);
  // Two time series, the blocks and the cells, each with a grid per step.
  EXPECT_EQ(count(text, "CollectionType=\"Temporal\""), 2u);
  EXPECT_EQ(count(text, "Grid Name=\"blocks\""), 1u);
  EXPECT_EQ(count(text, "Grid Name=\"cells\""), 1u);
  EXPECT_EQ(count(text, "GridType=\"Uniform\""), 4u);
  EXPECT_EQ(count(text, "<Time Value="), 4u);
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
  for (const char* name : {"rank", "key", "var0_mean", "var3_mean"})
    EXPECT_EQ(count(text, std::string("Attribute Name=\"") + name + "\""), 2u) << name;
  // The cells grid: 912 blocks of 512 cells, each block's 729 corner points.
  EXPECT_NE(text.find("TopologyType=\"Hexahedron\" NumberOfElements=\"466944\""),
            std::string::npos);
  EXPECT_NE(text.find("Dimensions=\"664848 3\" NumberType=\"Float\" Precision=\"4\" "
                      "Format=\"HDF\">plot.005.h5:/cell_mesh/points<"),
            std::string::npos);
  EXPECT_NE(text.find("Dimensions=\"466944 1\" NumberType=\"Float\" Precision=\"8\" "
                      "Format=\"HDF\">plot.005.h5:/cell_data/var3<"),
            std::string::npos);
  for (const char* name : {"level", "var0", "var3"})
    EXPECT_EQ(count(text, std::string("Attribute Name=\"") + name + "\""),
              std::string(name) == "level" ? 4u : 2u)
        << name;
  EXPECT_EQ(count(text, "Center=\"Cell\""), 16u);
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
  EXPECT_EQ(miniamr::app::plot_index_path(c), "out/plots/plot.xmf");
  c.plot_format = "vtkhdf";
  EXPECT_EQ(miniamr::app::first_plot_path(c), "out/plots/plot.000.vtkhdf");
  EXPECT_EQ(miniamr::app::plot_index_path(c), "out/plots/plot.vtkhdf.series");
  c.plot_format = "text";
  EXPECT_EQ(miniamr::app::plot_index_path(c), "");
}

// ParaView's file-series index: the step files in order, each with its time.
TEST(VtkhdfSeries, ListsEveryStepWithItsTime) {
  const std::string text =
      miniamr::app::vtkhdf_series_text({{0, 0.0, "plot.000.vtkhdf"}, {5, 5.5, "plot.005.vtkhdf"}});
  EXPECT_NE(text.find("\"file-series-version\": \"1.0\""), std::string::npos);
  EXPECT_LT(text.find("\"plot.000.vtkhdf\""), text.find("\"plot.005.vtkhdf\""));
  EXPECT_NE(text.find("\"time\": 5.5"), std::string::npos);
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

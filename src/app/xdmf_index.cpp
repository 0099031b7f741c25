#include "app/xdmf_index.hpp"

#include <fmt/format.h>

namespace miniamr::app {

namespace xdmf_layout {

std::string mean_name(int var) {
  return fmt::format("var{}_mean", var);
}

std::string mean_dataset(int var) {
  return fmt::format("cells/{}", mean_name(var));
}

std::string cell_value_name(int var) {
  return fmt::format("var{}", var);
}

std::string cell_value_dataset(int var) {
  return fmt::format("cell_data/{}", cell_value_name(var));
}

}  // namespace xdmf_layout

namespace {

// A DataItem that names one dataset of the step's file; Dimensions are the dataset's, so a
// reader checks what it finds against them.
std::string data_item(const XdmfStep& step, std::string_view dataset, std::int64_t rows, int width,
                      std::string_view type, int precision) {
  return fmt::format(
      "        <DataItem Dimensions=\"{} {}\" NumberType=\"{}\" Precision=\"{}\" "
      "Format=\"HDF\">{}:/{}</DataItem>\n",
      rows, width, type, precision, step.h5_name, dataset);
}

std::string cell_attribute(const XdmfStep& step, std::int64_t rows, std::string_view name,
                           std::string_view kind, std::string_view dataset, int width,
                           std::string_view type, int precision) {
  return fmt::format("      <Attribute Name=\"{}\" AttributeType=\"{}\" Center=\"Cell\">\n", name,
                     kind) +
         data_item(step, dataset, rows, width, type, precision) + "      </Attribute>\n";
}

// One step's grid: its time, hexahedra and points.
std::string grid_head(const XdmfStep& s, std::int64_t cells, std::int64_t points,
                      std::string_view hexahedra, std::string_view xyz, int xyz_precision) {
  // Times are written with 17 significant digits so that the reader sees the run's values.
  std::string text =
      fmt::format("    <Grid Name=\"timestep {}\" GridType=\"Uniform\">\n", s.timestep);
  text += fmt::format("      <Time Value=\"{:.17g}\"/>\n", s.time);
  text +=
      fmt::format("      <Topology TopologyType=\"Hexahedron\" NumberOfElements=\"{}\">\n", cells);
  text += data_item(s, hexahedra, cells, 8, "Int", 8) + "      </Topology>\n";
  text += "      <Geometry GeometryType=\"XYZ\">\n";
  text += data_item(s, xyz, points, 3, "Float", xyz_precision) + "      </Geometry>\n";
  return text;
}

}  // namespace

std::string xdmf_index_text(std::span<const XdmfStep> steps, std::span<const int> vars) {
  namespace L = xdmf_layout;
  std::string text =
      "<?xml version=\"1.0\" ?>\n"
      "<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n"
      "<Xdmf Version=\"2.0\">\n"
      "  <Domain>\n"
      "    <Grid Name=\"blocks\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
  for (const XdmfStep& s : steps) {
    text += grid_head(s, s.blocks, 8 * s.blocks, L::kHexahedra, L::kPoints, 8);
    text += cell_attribute(s, s.blocks, "level", "Scalar", L::kLevel, 1, "Int", 4);
    text += cell_attribute(s, s.blocks, "rank", "Scalar", L::kRank, 1, "Int", 4);
    text += cell_attribute(s, s.blocks, "key", "Matrix", L::kKey, 4, "UInt", 4);
    for (const int v : vars)
      text +=
          cell_attribute(s, s.blocks, L::mean_name(v), "Scalar", L::mean_dataset(v), 1, "Float", 8);
    text += "    </Grid>\n";
  }
  text += "    </Grid>\n";
  text += "    <Grid Name=\"cells\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
  for (const XdmfStep& s : steps) {
    if (s.cells_per_block == 0) continue;
    const std::int64_t cells = s.blocks * s.cells_per_block;
    text +=
        grid_head(s, cells, s.blocks * s.points_per_block, L::kCellHexahedra, L::kCellPoints, 4);
    text += cell_attribute(s, cells, "level", "Scalar", L::kCellLevel, 1, "UChar", 1);
    for (const int v : vars)
      text += cell_attribute(s, cells, L::cell_value_name(v), "Scalar", L::cell_value_dataset(v), 1,
                             "Float", 8);
    text += "    </Grid>\n";
  }
  text +=
      "    </Grid>\n"
      "  </Domain>\n"
      "</Xdmf>\n";
  return text;
}

}  // namespace miniamr::app

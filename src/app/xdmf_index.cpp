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

std::string cell_attribute(const XdmfStep& step, std::string_view name, std::string_view kind,
                           std::string_view dataset, int width, std::string_view type,
                           int precision) {
  return fmt::format("      <Attribute Name=\"{}\" AttributeType=\"{}\" Center=\"Cell\">\n", name,
                     kind) +
         data_item(step, dataset, step.blocks, width, type, precision) + "      </Attribute>\n";
}

}  // namespace

std::string xdmf_index_text(std::span<const XdmfStep> steps, std::span<const int> vars) {
  namespace L = xdmf_layout;
  std::string text =
      "<?xml version=\"1.0\" ?>\n"
      "<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n"
      "<Xdmf Version=\"2.0\">\n"
      "  <Domain>\n"
      "    <Grid Name=\"miniamr\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
  for (const XdmfStep& s : steps) {
    // Times are written with 17 significant digits so that the reader sees the run's values.
    text += fmt::format("    <Grid Name=\"timestep {}\" GridType=\"Uniform\">\n", s.timestep);
    text += fmt::format("      <Time Value=\"{:.17g}\"/>\n", s.time);
    text += fmt::format("      <Topology TopologyType=\"Hexahedron\" NumberOfElements=\"{}\">\n",
                        s.blocks);
    text += data_item(s, L::kHexahedra, s.blocks, 8, "Int", 8) + "      </Topology>\n";
    text += "      <Geometry GeometryType=\"XYZ\">\n";
    text += data_item(s, L::kPoints, 8 * s.blocks, 3, "Float", 8) + "      </Geometry>\n";
    text += cell_attribute(s, "level", "Scalar", L::kLevel, 1, "Int", 4);
    text += cell_attribute(s, "rank", "Scalar", L::kRank, 1, "Int", 4);
    text += cell_attribute(s, "key", "Matrix", L::kKey, 4, "UInt", 4);
    for (const int v : vars)
      text += cell_attribute(s, L::mean_name(v), "Scalar", L::mean_dataset(v), 1, "Float", 8);
    text += "    </Grid>\n";
  }
  text +=
      "    </Grid>\n"
      "  </Domain>\n"
      "</Xdmf>\n";
  return text;
}

}  // namespace miniamr::app

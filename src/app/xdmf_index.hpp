// The XDMF side of the xdmf plots: where each value lies in a step's HDF5 file, and the
// time-series index that tells ParaView (or any XDMF reader) how to read those files as a
// temporal collection of unstructured hexahedron meshes, one cell per block.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace miniamr::app {

// The datasets of one step's HDF5 file. Rows follow the blocks along the ownership curve.
namespace xdmf_layout {
inline constexpr std::string_view kPoints = "mesh/points";        // 8 corners per block, x y z
inline constexpr std::string_view kHexahedra = "mesh/hexahedra";  // 8 point indices per block
inline constexpr std::string_view kLevel = "cells/level";         // refinement level (int32)
inline constexpr std::string_view kRank = "cells/rank";           // owning rank (int32)
inline constexpr std::string_view kKey = "cells/key";             // x y z level (uint32 x 4)
// The cell-data name of variable `var`'s block means, and its dataset.
std::string mean_name(int var);
std::string mean_dataset(int var);
// The cells grid: every interior cell of every block, rows in block order.
inline constexpr std::string_view kCellPoints = "cell_mesh/points";        // x y z (float32)
inline constexpr std::string_view kCellHexahedra = "cell_mesh/hexahedra";  // 8 point indices
inline constexpr std::string_view kCellLevel = "cell_data/level";          // uint8
// The cell-data name of variable `var`'s cell values, and its dataset.
std::string cell_value_name(int var);
std::string cell_value_dataset(int var);
}  // namespace xdmf_layout

// One plotted step as the index lists it.
struct XdmfStep {
  int timestep = 0;
  double time = 0.0;
  std::string h5_name;  // relative to the index's folder
  std::int64_t blocks = 0;
  std::int64_t cells_per_block = 0;   // interior cells; 0: the step file has no cells grid
  std::int64_t points_per_block = 0;  // corner points of those cells
};

// The whole index: an XDMF 2 document with two temporal collections, "blocks" (one uniform
// grid per step, in the order given, with the level, rank and key of every block and the means
// of `vars` as cell data) and "cells" (every cell, with its level and the values of `vars`).
std::string xdmf_index_text(std::span<const XdmfStep> steps, std::span<const int> vars);

}  // namespace miniamr::app

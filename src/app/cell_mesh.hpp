// The cells of this rank's blocks as an unstructured grid of hexahedra, for the plot files
// that hold a value per cell (VTKHDF, and XDMF's cells grid): each block's interior cells with
// corner points of its own, their level, and the values of the plotted variables.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "mesh/domain.hpp"

namespace miniamr::app {

struct CellMesh {
  std::int64_t points = 0;            // this rank's
  std::int64_t cells = 0;             // this rank's
  std::vector<float> xyz;             // 3 per point, in the unit cube
  std::vector<std::int64_t> corners;  // 8 per cell (VTK's hexahedron order), from this rank's 0
  std::vector<std::uint8_t> level;    // per cell: its block's refinement level
  std::vector<std::vector<double>> values;  // per plotted variable, per cell
};

// The blocks in curve order, each block's cells x fastest, then y, then z (VTK's order).
CellMesh cell_mesh(const mesh::Domain& domain, std::span<const int> vars);

// Bytes of a rank's CellMesh of `blocks` blocks of `shape`, as the files store it (for the
// room a step file needs).
std::int64_t cell_mesh_bytes(std::int64_t blocks, const stencil::BlockShape& shape,
                             std::size_t vars);

}  // namespace miniamr::app

#include "app/cell_mesh.hpp"

namespace miniamr::app {

namespace {

// Corner c of a cell in VTK's hexahedron order: the lower face counter-clockwise, then the
// upper face.
constexpr int kCorners[8][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0},
                                {0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}};

}  // namespace

CellMesh cell_mesh(const mesh::Domain& domain, std::span<const int> vars) {
  const stencil::BlockShape& s = domain.shape;
  const std::int64_t px = s.nx + 1, py = s.ny + 1, pz = s.nz + 1;
  const std::size_t blocks = domain.leaves.size();
  CellMesh m;
  m.points = std::int64_t(blocks) * px * py * pz;
  m.cells = std::int64_t(blocks) * std::int64_t(s.interior_cells());
  m.xyz.reserve(std::size_t(m.points) * 3);
  m.corners.reserve(std::size_t(m.cells) * 8);
  m.level.reserve(std::size_t(m.cells));
  m.values.assign(vars.size(), {});
  for (auto& v : m.values) v.reserve(std::size_t(m.cells));
  const int n[3] = {s.nx, s.ny, s.nz};
  for (std::size_t b = 0; b < blocks; ++b) {
    const octree::Key& k = domain.leaves.keys()[b];
    const std::int64_t first = std::int64_t(b) * px * py * pz;
    // The domain is the unit cube whatever the root grid: a coordinate over its extent.
    double lower[3], step[3];
    for (int d = 0; d < 3; ++d) {
      const double extent = double(domain.grid.extent(d));
      lower[d] = double(k.x[d]) / extent;
      step[d] = double(octree::side(k.level)) / extent / n[d];
    }
    for (std::int64_t z = 0; z < pz; ++z)
      for (std::int64_t y = 0; y < py; ++y)
        for (std::int64_t x = 0; x < px; ++x) {
          m.xyz.push_back(float(lower[0] + double(x) * step[0]));
          m.xyz.push_back(float(lower[1] + double(y) * step[1]));
          m.xyz.push_back(float(lower[2] + double(z) * step[2]));
        }
    const auto point = [&](int x, int y, int z) { return first + (z * py + y) * px + x; };
    const stencil::Block& block = domain.blocks[b];
    for (int z = 0; z < s.nz; ++z)
      for (int y = 0; y < s.ny; ++y)
        for (int x = 0; x < s.nx; ++x) {
          for (const auto& c : kCorners) m.corners.push_back(point(x + c[0], y + c[1], z + c[2]));
          m.level.push_back(std::uint8_t(k.level));
          for (std::size_t v = 0; v < vars.size(); ++v)
            m.values[v].push_back(block.var(vars[v])[s.at(x + 1, y + 1, z + 1)]);
        }
  }
  return m;
}

std::int64_t cell_mesh_bytes(std::int64_t blocks, const stencil::BlockShape& s, std::size_t vars) {
  const std::int64_t points = std::int64_t(s.nx + 1) * (s.ny + 1) * (s.nz + 1);
  const std::int64_t cells = std::int64_t(s.interior_cells());
  // Points (3 floats), corners (8 int64), offsets (int64), type and level (1 byte each), rank
  // (int32) and the values (doubles).
  return blocks * (points * 12 + cells * (64 + 8 + 1 + 1 + 4 + 8 * std::int64_t(vars)));
}

}  // namespace miniamr::app

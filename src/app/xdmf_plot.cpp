#include "app/xdmf_plot.hpp"

#include <array>
#include <cstdint>

#include <fmt/format.h>

#include "app/cell_mesh.hpp"
#include "app/plot_files.hpp"
#include "app/plot_step_file.hpp"
#include "app/root_io.hpp"
#include "h5/h5file.hpp"
#include "stencil/stencil_kernels.hpp"

namespace miniamr::app {

namespace L = xdmf_layout;

namespace {

// This rank's rows of every dataset, for its blocks in curve order.
struct BlockRows {
  std::vector<double> points;              // 8 corners x (x, y, z) per block
  std::vector<std::int64_t> hexahedra;     // 8 global point indices per block
  std::vector<std::int32_t> level, rank;   // one per block
  std::vector<std::uint32_t> key;          // x, y, z, level per block
  std::vector<std::vector<double>> means;  // per plotted variable, one per block
};

// Corner c of a block is (c&1, c&2, c&4) in VTK's hexahedron order: the lower face
// counter-clockwise, then the upper face.
constexpr std::array<std::array<int, 3>, 8> kCorners{
    {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}}};

BlockRows block_rows(const mesh::Domain& domain, int rank, std::int64_t first_block,
                     std::span<const int> vars) {
  const auto& keys = domain.leaves.keys();
  const std::size_t n = keys.size();
  BlockRows rows;
  rows.points.reserve(n * 24);
  rows.hexahedra.reserve(n * 8);
  rows.level.reserve(n);
  rows.rank.assign(n, rank);
  rows.key.reserve(n * 4);
  rows.means.assign(vars.size(), std::vector<double>(n));
  const double cells = double(domain.shape.interior_cells());
  for (std::size_t b = 0; b < n; ++b) {
    const octree::Key& k = keys[b];
    // The domain is the unit cube whatever the root grid: a coordinate over its extent.
    for (const auto& corner : kCorners)
      for (int d = 0; d < 3; ++d)
        rows.points.push_back(
            double(std::uint64_t(k.x[d]) + std::uint64_t(corner[d]) * octree::side(k.level)) /
            double(domain.grid.extent(d)));
    for (std::int64_t c = 0; c < 8; ++c)
      rows.hexahedra.push_back(8 * (first_block + std::int64_t(b)) + c);
    rows.level.push_back(k.level);
    rows.key.insert(rows.key.end(), {k.x[0], k.x[1], k.x[2], std::uint32_t(k.level)});
    for (std::size_t v = 0; v < vars.size(); ++v)
      rows.means[v][b] = stencil::interior_sum(domain.blocks[b], vars[v]) / cells;
  }
  return rows;
}

// An upper bound of a step file's size: the datasets exactly, and room for HDF5's own records
// (superblock, groups, object headers, attributes: about 7 KiB in practice).
std::int64_t plot_file_bytes(std::int64_t blocks, std::size_t vars) {
  const std::int64_t per_block = 8 * 3 * 8 + 8 * 8 + 4 + 4 + 4 * 4 + std::int64_t(vars) * 8;
  return blocks * per_block + 64 * 1024 + std::int64_t(vars) * 2048;
}

std::int64_t cells_per_block_points(const stencil::BlockShape& s) {
  return std::int64_t(s.nx + 1) * (s.ny + 1) * (s.nz + 1);
}

}  // namespace

XdmfPlot::XdmfPlot(const Config& config) : config_(config), vars_(config.plot_variables()) {}

void XdmfPlot::write(const mesh::Domain& domain, const comm::Communicator& comm, int timestep,
                     double time) {
  const std::int64_t mine = std::int64_t(domain.leaves.size());
  // Ranks own consecutive stretches of the curve, so rank r's rows start after the blocks of
  // ranks 0..r-1.
  const auto [first, total] = comm.prefix_sum(mine);
  const BlockRows rows = block_rows(domain, comm.rank(), first, vars_);
  CellMesh cells = cell_mesh(domain, vars_);
  const auto [first_point, points] = comm.prefix_sum(cells.points);
  const auto [first_cell, all_cells] = comm.prefix_sum(cells.cells);
  for (std::int64_t& p : cells.corners) p += first_point;  // one grid: the points of every rank

  const std::string name = plot_file_name(config_, timestep) + ".h5";
  const std::int64_t bound =
      plot_file_bytes(total, vars_.size()) + cell_mesh_bytes(total, domain.shape, vars_.size());
  write_plot_step(
      comm, in_plot_dir(config_, name), bound, [&](h5::File& file, const Attempt& attempt) {
        attempt([&] {
          file.write_rows<double>(std::string(L::kPoints), rows.points, 8 * first, 8 * total, 3);
        });
        attempt([&] {
          file.write_rows<std::int64_t>(std::string(L::kHexahedra), rows.hexahedra, first, total,
                                        8);
        });
        attempt([&] {
          file.write_rows<std::int32_t>(std::string(L::kLevel), rows.level, first, total);
        });
        attempt(
            [&] { file.write_rows<std::int32_t>(std::string(L::kRank), rows.rank, first, total); });
        attempt([&] {
          file.write_rows<std::uint32_t>(std::string(L::kKey), rows.key, first, total, 4);
        });
        for (std::size_t v = 0; v < vars_.size(); ++v)
          attempt([&] {
            file.write_rows<double>(L::mean_dataset(vars_[v]), rows.means[v], first, total);
          });
        // The cells grid: every interior cell of every block, with its values.
        attempt([&] {
          file.write_rows<float>(std::string(L::kCellPoints), cells.xyz, first_point, points, 3);
        });
        attempt([&] {
          file.write_rows<std::int64_t>(std::string(L::kCellHexahedra), cells.corners, first_cell,
                                        all_cells, 8);
        });
        attempt([&] {
          file.write_rows<std::uint8_t>(std::string(L::kCellLevel), cells.level, first_cell,
                                        all_cells);
        });
        for (std::size_t v = 0; v < vars_.size(); ++v)
          attempt([&] {
            file.write_rows<double>(L::cell_value_dataset(vars_[v]), cells.values[v], first_cell,
                                    all_cells);
          });
        attempt([&] {
          file.set_attribute("program", "miniamr");
          file.set_attribute("timestep", std::int64_t{timestep});
          file.set_attribute("time", time);
        });
      });
  steps_.push_back({timestep, time, name, total, std::int64_t(domain.shape.interior_cells()),
                    cells_per_block_points(domain.shape)});
  write_on_root(comm.get(), xdmf_index_path(config_),
                comm.is_root() ? xdmf_index_text(steps_, vars_) : std::string(), "plot index");
}

void XdmfPlot::resume(const comm::Communicator& comm, int timestep) {
  steps_.clear();
  const stencil::BlockShape shape = config_.block_shape();
  for (const auto& [ts, name] : plotted_steps(comm, config_, timestep, ".h5")) {
    try {
      const h5::File f = h5::File::open(in_plot_dir(config_, name), comm.get());
      steps_.push_back({ts, f.real_attribute("time"), name, f.rows(std::string(L::kLevel)),
                        std::int64_t(shape.interior_cells()), cells_per_block_points(shape)});
    } catch (const h5::Error&) {
      // Not a whole step file (a damaged or foreign one): the index leaves it out.
    }
  }
}

}  // namespace miniamr::app

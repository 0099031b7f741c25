#include "app/vtkhdf_plot.hpp"

#include <cstdint>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/cell_mesh.hpp"
#include "app/plot_files.hpp"
#include "app/plot_step_file.hpp"
#include "app/root_io.hpp"

namespace miniamr::app {

namespace {

constexpr std::uint8_t kVtkHexahedron = 12;

// The datasets of VTKHDF 1.0's unstructured grid: per piece (rank) counts, then every piece's
// points, connectivity (indices from the piece's first point), offsets (one more than the
// piece's cells) and cell types, concatenated in rank order.
std::string in_vtkhdf(std::string_view name) {
  return fmt::format("VTKHDF/{}", name);
}

}  // namespace

std::string vtkhdf_series_text(const std::vector<VtkhdfStep>& steps) {
  nlohmann::ordered_json files = nlohmann::ordered_json::array();
  for (const VtkhdfStep& s : steps) files.push_back({{"name", s.name}, {"time", s.time}});
  nlohmann::ordered_json index{{"file-series-version", "1.0"}, {"files", files}};
  return index.dump(1) + "\n";
}

VtkhdfPlot::VtkhdfPlot(const Config& config) : config_(config), vars_(config.plot_variables()) {}

void VtkhdfPlot::write(const mesh::Domain& domain, const comm::Communicator& comm, int timestep,
                       double time) {
  const CellMesh m = cell_mesh(domain, vars_);
  const std::int64_t pieces = comm.size(), piece = comm.rank();
  const std::int64_t blocks = comm.prefix_sum(std::int64_t(domain.leaves.size())).total;
  const auto [first_point, points] = comm.prefix_sum(m.points);
  const auto [first_cell, cells] = comm.prefix_sum(m.cells);
  std::vector<std::int64_t> offsets(std::size_t(m.cells) + 1);
  for (std::size_t c = 0; c < offsets.size(); ++c) offsets[c] = 8 * std::int64_t(c);
  const std::vector<std::uint8_t> types(std::size_t(m.cells), kVtkHexahedron);
  const std::vector<std::int32_t> rank(std::size_t(m.cells), std::int32_t(piece));
  const std::int64_t counts[3] = {m.points, m.cells, 8 * m.cells};

  const std::string name = plot_file_name(config_, timestep) + ".vtkhdf";
  const std::int64_t bound =
      cell_mesh_bytes(blocks, domain.shape, vars_.size()) + 24 * pieces + 64 * 1024;
  write_plot_step(
      comm, in_plot_dir(config_, name), bound, [&](h5::File& f, const Attempt& attempt) {
        const auto count = [&](std::string_view dataset, std::size_t i) {
          attempt([&] {
            f.write_vector<std::int64_t>(in_vtkhdf(dataset), std::span(&counts[i], 1), piece,
                                         pieces);
          });
        };
        count("NumberOfPoints", 0);
        count("NumberOfCells", 1);
        count("NumberOfConnectivityIds", 2);
        attempt([&] { f.write_rows<float>(in_vtkhdf("Points"), m.xyz, first_point, points, 3); });
        attempt([&] {
          f.write_vector<std::int64_t>(in_vtkhdf("Connectivity"), m.corners, 8 * first_cell,
                                       8 * cells);
        });
        attempt([&] {
          f.write_vector<std::int64_t>(in_vtkhdf("Offsets"), offsets, first_cell + piece,
                                       cells + pieces);
        });
        attempt(
            [&] { f.write_vector<std::uint8_t>(in_vtkhdf("Types"), types, first_cell, cells); });
        attempt([&] {
          f.write_vector<std::uint8_t>(in_vtkhdf("CellData/level"), m.level, first_cell, cells);
        });
        attempt([&] {
          f.write_vector<std::int32_t>(in_vtkhdf("CellData/rank"), rank, first_cell, cells);
        });
        for (std::size_t v = 0; v < vars_.size(); ++v)
          attempt([&] {
            f.write_vector<double>(in_vtkhdf(fmt::format("CellData/var{}", vars_[v])), m.values[v],
                                   first_cell, cells);
          });
        attempt([&] {
          const std::int64_t version[2] = {1, 0};
          f.set_attribute("VTKHDF", "Version", version);
          f.set_attribute("VTKHDF", "Type", "UnstructuredGrid");
          f.set_attribute("program", "miniamr");
          f.set_attribute("timestep", std::int64_t{timestep});
          f.set_attribute("time", time);
          f.set_attribute("blocks", blocks);
        });
      });
  steps_.push_back({timestep, time, name});
  write_on_root(comm.get(), plot_index_path(config_),
                comm.is_root() ? vtkhdf_series_text(steps_) : std::string(), "plot index");
}

void VtkhdfPlot::resume(const comm::Communicator& comm, int timestep) {
  steps_.clear();
  for (const auto& [ts, name] : plotted_steps(comm, config_, timestep, ".vtkhdf")) {
    try {
      const h5::File f = h5::File::open(in_plot_dir(config_, name), comm.get());
      steps_.push_back({ts, f.real_attribute("time"), name});
    } catch (const h5::Error&) {
      // Not a whole step file (a damaged or foreign one): the index leaves it out.
    }
  }
}

}  // namespace miniamr::app

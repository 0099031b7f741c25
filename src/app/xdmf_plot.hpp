// --plot_format xdmf: at each plotted step, one HDF5 file written by every rank at once (each
// rank its own blocks' rows, no gathering on one rank) holding two grids: the blocks, one
// hexahedron each with its level, owning rank, key and the mean of each chosen variable; and
// the cells, every interior cell of every block as a hexahedron with its level and the value of
// each chosen variable. The XDMF index of every step written so far holds both grids as time
// series, which ParaView (and VisIt) open.
#pragma once

#include <string>
#include <vector>

#include "app/config.hpp"
#include "app/field_plot.hpp"
#include "app/xdmf_index.hpp"
#include "comm/mpi.hpp"
#include "mesh/domain.hpp"

namespace miniamr::app {

class XdmfPlot final : public FieldPlot {
 public:
  explicit XdmfPlot(const Config& config);
  void write(const mesh::Domain& domain, const comm::Communicator& comm, int timestep,
             double time) override;
  void resume(const comm::Communicator& comm, int timestep) override;

 private:
  Config config_;
  std::vector<int> vars_;
  std::vector<XdmfStep> steps_;  // written so far
};

}  // namespace miniamr::app

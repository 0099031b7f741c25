// Plots that ParaView opens: at each plotted step, one HDF5 file written by every rank at once
// (each rank its own blocks' rows, no gathering on one rank) holding one hexahedron per block
// with its level, owning rank, key and the mean of each chosen variable; and the XDMF index of
// every step written so far, which ParaView opens as a time series.
#pragma once

#include <string>
#include <vector>

#include "app/config.hpp"
#include "app/xdmf_index.hpp"
#include "runtime/domain.hpp"
#include "runtime/mpi.hpp"

namespace miniamr::app {

class XdmfPlot {
 public:
  explicit XdmfPlot(const Config& config);

  // Collective over `comm`. Writes the step's file under a temporary name, renames it once every
  // rank has closed it, then rank 0 rewrites the index through io::OutputFile: a run stopped at
  // any point leaves whole files and an index of the steps whose files are whole. A failure on
  // any rank (a full disk, a folder that vanished) ends every rank with a RunError naming the
  // file, and leaves the previous index as it was.
  void write(const runtime::Domain& domain, const runtime::Communicator& comm, int timestep,
             double time);

  // Collective. A run restarted after `timestep` lists the steps its first part plotted up to
  // then (those whose files are whole), so the index still covers the whole run.
  void resume(const runtime::Communicator& comm, int timestep);

 private:
  Config config_;
  std::vector<int> vars_;
  std::vector<XdmfStep> steps_;  // written so far
};

}  // namespace miniamr::app

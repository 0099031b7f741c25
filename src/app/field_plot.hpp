// The field plots ParaView opens (--plot_format xdmf and vtkhdf): at each plotted step one HDF5
// file written by every rank at once, and an index of the steps written so far that ParaView
// reads as a time series.
#pragma once

#include <memory>

#include "app/config.hpp"
#include "comm/mpi.hpp"
#include "mesh/domain.hpp"

namespace miniamr::app {

class FieldPlot {
 public:
  virtual ~FieldPlot() = default;
  // Collective over `comm`. Writes the step's file (whole, or not at all), then rank 0 rewrites
  // the index through io::OutputFile: a run stopped at any point leaves whole files and an index
  // of the steps whose files are whole. A failure on any rank ends every rank with a RunError
  // naming the file, and leaves the previous index as it was.
  virtual void write(const mesh::Domain& domain, const comm::Communicator& comm, int timestep,
                     double time) = 0;
  // Collective. A run restarted after `timestep` lists the steps its first part plotted up to
  // then (those whose files are whole), so the index still covers the whole run.
  virtual void resume(const comm::Communicator& comm, int timestep) = 0;
};

// The plot of config.plot_format (xdmf or vtkhdf).
std::unique_ptr<FieldPlot> make_field_plot(const Config& config);

}  // namespace miniamr::app

// --plot_format vtkhdf: VTK's own HDF5 format (VTKHDF 1.0, an unstructured grid), which VTK's
// vtkHDFReader (VTK 9.1 on) and ParaView (5.10 on) open without an XDMF reader. Each plotted
// step is one file, plot.NNN.vtkhdf, holding every cell of every block as a hexahedron with the
// values of --plot_vars, its level and its owning rank as cell data; each rank writes its blocks
// as one piece (partition) of the grid, all at once through parallel HDF5. The time series is
// plot.vtkhdf.series, the JSON file-series index ParaView reads.
#pragma once

#include <string>
#include <vector>

#include "app/field_plot.hpp"

namespace miniamr::app {

// One plotted step as the series index lists it.
struct VtkhdfStep {
  int timestep = 0;
  double time = 0.0;
  std::string name;  // relative to the index's folder
};

// The series index ParaView reads: {"file-series-version": "1.0", "files": [{name, time}...]}.
std::string vtkhdf_series_text(const std::vector<VtkhdfStep>& steps);

class VtkhdfPlot final : public FieldPlot {
 public:
  explicit VtkhdfPlot(const Config& config);
  void write(const mesh::Domain& domain, const comm::Communicator& comm, int timestep,
             double time) override;
  void resume(const comm::Communicator& comm, int timestep) override;

 private:
  Config config_;
  std::vector<int> vars_;
  std::vector<VtkhdfStep> steps_;  // written so far
};

}  // namespace miniamr::app

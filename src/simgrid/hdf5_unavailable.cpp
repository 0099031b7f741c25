// Checkpoints and HDF5 plots (xdmf, vtkhdf) in the simulation build: parallel HDF5 is linked
// against the real Open MPI, which cannot run inside SMPI's simulator, so this build writes no HDF5
// file at all. The options are refused before a run starts (app/options.cpp); these only keep the
// driver whole.
#include <fmt/format.h>

#include "app/checkpoint.hpp"
#include "app/errors.hpp"
#include "app/field_plot.hpp"

namespace miniamr::app {

namespace {

[[noreturn]] void unavailable() {
  throw UsageError(
      "checkpoints and HDF5 plots (xdmf, vtkhdf) are not available in the simulation build");
}

}  // namespace

std::vector<std::pair<std::string, std::string>> numerics_of(const Config&) {
  unavailable();
}

std::string checkpoint_path(const std::string& dir, int ts) {
  return fmt::format("{}/checkpoint.{:06}.h5", dir, ts);
}

void write_checkpoint(const Config&, const comm::Communicator&, const mesh::Domain&,
                      const RunPoint&) {
  unavailable();
}

io::FolderLock lock_checkpoint_dir(const Config&, MPI_Comm) {
  return {};  // no checkpoints here (refused with the options)
}

RunPoint read_checkpoint(const std::string&, const Config&, const comm::Communicator&, sfc::Curve,
                         mesh::Domain&) {
  unavailable();
}

RunPoint restart(const Config&, const comm::Communicator&, sfc::Curve, mesh::Domain&, std::FILE*) {
  unavailable();
}

std::unique_ptr<FieldPlot> make_field_plot(const Config&) {
  unavailable();
}

}  // namespace miniamr::app

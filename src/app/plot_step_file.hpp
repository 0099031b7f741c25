// How every HDF5 plot file of a step is written (XDMF's and VTKHDF's): by every rank at once,
// under a temporary name beside its final one, with the room checked before HDF5 writes a
// byte, then renamed once every rank has closed it; and which step files a restarted run finds.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "app/config.hpp"
#include "comm/mpi.hpp"
#include "h5/h5file.hpp"

namespace miniamr::app {

// Runs one collective HDF5 call; a rank whose call failed keeps the first failure and still
// makes the calls after it, so that no rank waits in a call the others have left.
using Attempt = std::function<void(const std::function<void()>&)>;

// Collective. Writes the step file `path`: every rank checks its file-size limit, rank 0
// reserves `bytes_bound` on disk, then `fill` makes every HDF5 call through `attempt`; the file
// is closed, synced and renamed into place. Any rank's failure (a full disk, a folder that
// vanished) ends every rank with a RunError naming `path`, and leaves no file behind.
void write_plot_step(const comm::Communicator& comm, const std::string& path,
                     std::int64_t bytes_bound,
                     const std::function<void(h5::File& file, const Attempt& attempt)>& fill);

// Collective. The step files `plot.NNN<suffix>` of --plot_dir up to `timestep` (the plotted
// ones: 0 and every --plot_freq), in timestep order, as rank 0 finds them: what a restarted
// run's index lists before its own steps.
std::vector<std::pair<int, std::string>> plotted_steps(const comm::Communicator& comm,
                                                       const Config& config, int timestep,
                                                       const std::string& suffix);

}  // namespace miniamr::app

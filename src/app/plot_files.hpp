// Where plot files go: their names (the reference's plot.NNN, with .h5 for xdmf plots), the
// --plot_dir folder they are written to, and the check that this folder can be used.
#pragma once

#include <string>
#include <string_view>

#include "app/config.hpp"

namespace miniamr::app {

// The reference's plot file name for timestep `ts`: "plot." and ts with one digit more than the
// number of timesteps needs.
std::string plot_file_name(const Config& config, int ts);

// `name` inside --plot_dir ("." leaves it as it is, so messages keep the reference's names).
std::string in_plot_dir(const Config& config, std::string_view name);

// The first plot file of a run (timestep 0: plot.NNN, plot.NNN.h5 for xdmf plots,
// plot.NNN.vtkhdf for vtkhdf plots), for the check of output paths before the run.
std::string first_plot_path(const Config& config);

// The XDMF time-series index of an xdmf run.
std::string xdmf_index_path(const Config& config);

// The time-series index of an xdmf or vtkhdf run (plot.xmf, plot.vtkhdf.series); "" for text.
std::string plot_index_path(const Config& config);

// Creates --plot_dir (and its parents) when missing. Returns "" or why it cannot be a folder
// for plots, in words with the system's reason.
std::string make_plot_dir(const Config& config);

}  // namespace miniamr::app

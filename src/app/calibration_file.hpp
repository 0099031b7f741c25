// Reading a compute calibration (tools/calibrate_compute.py writes it): what each stencil
// kernel costs per cell-variable update on the machine it was measured on, for --compute model.
#pragma once

#include <string>
#include <string_view>

#include "runtime/compute_model.hpp"

namespace miniamr::app {

// Parses the text of a calibration file: `seconds_per_update` maps each runtime (static,
// dynamic: their kernels reuse caches differently) to stencil7, stencil27 and variable, each a
// finite number > 0; an optional `working_sets` list holds the same measured on meshes of
// several sizes ({bytes, seconds_per_update}, smallest first), and then the model is those
// points. Returns `runtime`'s model. Other keys (machine, method, date) are for people.
// Throws UsageError naming `path` and the problem.
runtime::ComputeModel parse_calibration(std::string_view text, const std::string& path,
                                        const std::string& runtime);

}  // namespace miniamr::app

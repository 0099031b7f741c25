#include "app/field_plot.hpp"

#include "app/vtkhdf_plot.hpp"
#include "app/xdmf_plot.hpp"

namespace miniamr::app {

std::unique_ptr<FieldPlot> make_field_plot(const Config& config) {
  if (config.plot_format == "vtkhdf") return std::make_unique<VtkhdfPlot>(config);
  return std::make_unique<XdmfPlot>(config);
}

}  // namespace miniamr::app

#include "netbench/models.hpp"

#include <fmt/format.h>

namespace miniamr::netbench {

std::vector<ClassModel> fit_models(std::span<const ResultRow> rows,
                                   std::vector<std::string>& notes) {
  std::vector<ClassModel> models;
  for (const PairClass cls : {PairClass::kSameNode, PairClass::kOtherNode}) {
    const std::string_view name = pair_class_name(cls);
    std::vector<Point> pingpong, stream;
    double overhead = -1, smallest_stream = 0;
    for (const ResultRow& r : rows) {
      if (r.pair_class != name) continue;
      // Medians, not minima: the balancer prices what a message usually costs.
      if (r.test == TestKind::kPingPong) pingpong.push_back({double(r.bytes), r.t_median_s});
      if (r.test == TestKind::kStream) {
        stream.push_back({double(r.bytes), r.t_median_s / r.messages});
        if (overhead < 0 || double(r.bytes) < smallest_stream) {
          overhead = r.send_overhead_s;
          smallest_stream = double(r.bytes);
        }
      }
    }
    if (pingpong.empty()) continue;
    ClassModel m;
    m.pair_class = cls;
    try {
      m.alpha_beta = fit_alpha_beta(pingpong);
    } catch (const FitError& e) {
      throw FitError(fmt::format("the {} ping-pong times: {}", name, e.what()));
    }
    if (!stream.empty()) {
      std::string why_not;
      m.loggp = fit_loggp(m.alpha_beta, stream, overhead, why_not);
      if (!m.loggp)
        notes.push_back(fmt::format("Note: no LogGP parameters for {}: {}", name, why_not));
    }
    models.push_back(m);
  }
  return models;
}

}  // namespace miniamr::netbench

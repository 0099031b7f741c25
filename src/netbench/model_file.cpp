#include "netbench/model_file.hpp"

#include <chrono>
#include <ctime>

#include <fmt/format.h>

#include "io/printable.hpp"

namespace miniamr::netbench {

namespace {

// A YAML single-quoted scalar: only the quote itself needs escaping (by doubling); control
// bytes are shown escaped, as in every text miniamr echoes.
std::string yaml_quoted(std::string_view text) {
  std::string out = "'";
  for (char c : io::printable(text)) {
    if (c == '\'') out += '\'';
    out += c;
  }
  return out + "'";
}

}  // namespace

std::string model_yaml(std::string_view version, const ModelSource& source,
                       std::span<const ClassModel> classes) {
  std::string out = fmt::format(
      "# written by miniamr-netbench {}; alpha-beta fits of the ping-pong one-way times\n"
      "# (t(n) = latency_s + n / bandwidth_Bps, least squares of relative residuals)\n"
      "model: alpha-beta\n"
      "source: {{config: {}, ranks: {}, nodes: {}, date: {}}}\n"
      "pair_classes:\n",
      version, yaml_quoted(source.config), source.ranks, source.nodes, yaml_quoted(source.date));
  for (const ClassModel& c : classes)
    out += fmt::format(
        "  {}: {{latency_s: {:.6e}, bandwidth_Bps: {:.6e}, points: {}, max_rel_residual: "
        "{:.3e}}}\n",
        pair_class_name(c.pair_class), c.alpha_beta.latency_s, c.alpha_beta.bandwidth_Bps,
        c.alpha_beta.points, c.alpha_beta.max_rel_residual);
  bool any_loggp = false;
  for (const ClassModel& c : classes) {
    if (!c.loggp) continue;
    if (!any_loggp) out += "loggp:\n";
    any_loggp = true;
    out += fmt::format("  {}: {{L_s: {:.6e}, o_s: {:.6e}, g_s: {:.6e}, G_s_per_byte: {:.6e}}}\n",
                       pair_class_name(c.pair_class), c.loggp->L_s, c.loggp->o_s, c.loggp->g_s,
                       c.loggp->G_s_per_byte);
  }
  return out;
}

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32] = {};
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

}  // namespace miniamr::netbench

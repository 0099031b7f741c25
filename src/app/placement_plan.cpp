#include "app/placement_plan.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "app/errors.hpp"
#include "app/input_file.hpp"
#include "io/line_client.hpp"
#include "io/printable.hpp"

namespace miniamr::app {

namespace {

using io::trim;

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c));
  });
}

// Host names as DNS and batch systems spell them (RFC 1123 letters, digits, '-', '.'), and '_'
// which some clusters use.
bool host_name(std::string_view s) {
  return !s.empty() && s.size() <= 255 && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
  });
}

// `init` followed by one or more `.<vpid>`.
bool plan_key_syntax(std::string_view key) {
  if (!key.starts_with("init")) return false;
  key.remove_prefix(4);
  if (key.empty()) return false;
  while (!key.empty()) {
    if (key.front() != '.') return false;
    key.remove_prefix(1);
    const auto next = key.find('.');
    if (!all_digits(key.substr(0, next))) return false;
    key = next == std::string_view::npos ? std::string_view{} : key.substr(next);
  }
  return true;
}

// A --plan value that names no file may be a mistyped HOST:PORT: say both.
std::string read_plan_text(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw UsageError(
        fmt::format("--plan {}: no such file, and not HOST:PORT", io::shown(path, 200)));
  return read_input_text(path, "plan");
}

std::string count_nodes(std::size_t n) {
  return fmt::format("{} node{}", n, n == 1 ? "" : "s");
}

}  // namespace

PlanSource parse_plan_source(const std::string& spec) {
  if (spec.empty()) throw UsageError("--plan needs a file or HOST:PORT");
  const auto colon = spec.rfind(':');
  if (colon == std::string::npos || !all_digits(std::string_view(spec).substr(colon + 1)))
    return PlanSource{spec, {}, 0};
  const std::string host = spec.substr(0, colon);
  const std::string_view digits = std::string_view(spec).substr(colon + 1);
  int port = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  if (ec != std::errc{} || end != digits.data() + digits.size() || port < 1 || port > 65535)
    throw UsageError(fmt::format("--plan {}: the port must be 1 to 65535", io::shown(spec, 200)));
  if (!host_name(host) && !(host.size() > 2 && host.front() == '[' && host.back() == ']'))
    throw UsageError(fmt::format("--plan {}: '{}' is not a host name or address",
                                 io::shown(spec, 200), io::printable(host)));
  return PlanSource{spec, host.front() == '[' ? host.substr(1, host.size() - 2) : host, port};
}

SpawnerId this_spawner() {
  const char* jobid = std::getenv("OMPI_MCA_ess_base_jobid");
  const char* vpid = std::getenv("OMPI_COMM_WORLD_RANK");
  SpawnerId id{jobid != nullptr && *jobid != '\0' ? jobid : "singleton", 0};
  if (vpid != nullptr) id.vpid = std::atoi(vpid);
  return id;
}

std::string plan_request(const SpawnerId& id) {
  return fmt::format("{};{};?", id.jobid, id.vpid);
}

std::string plan_key(const SpawnerId& id) {
  return fmt::format("init.{}", id.vpid);
}

std::optional<std::vector<std::string>> parse_node_list(std::string_view line) {
  std::vector<std::string> nodes;
  while (true) {
    const auto comma = line.find(',');
    const std::string_view node = trim(line.substr(0, comma));
    if (!host_name(node)) return std::nullopt;
    nodes.emplace_back(node);
    if (comma == std::string_view::npos) break;
    line.remove_prefix(comma + 1);
  }
  return nodes;
}

std::optional<std::vector<std::string>> plan_nodes_from_file(std::string_view text,
                                                             const std::string& path,
                                                             const std::string& key) {
  std::optional<std::vector<std::string>> found;
  std::vector<std::string> keys;
  int number = 0;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++number;
    if (const auto hash = line.find('#'); hash != std::string_view::npos)
      line = line.substr(0, hash);
    line = trim(line);
    if (line.empty()) continue;
    const auto where = [&] { return fmt::format("{}:{}", io::printable(path), number); };
    const auto colon = line.find(':');
    if (colon == std::string_view::npos)
      throw UsageError(fmt::format("{}: expected 'KEY: node,node,...', got '{}'", where(),
                                   io::printable(line.substr(0, 80))));
    const std::string line_key(trim(line.substr(0, colon)));
    if (!plan_key_syntax(line_key))
      throw UsageError(fmt::format("{}: '{}' is not a plan key (init, then .N one or more times)",
                                   where(), io::printable(line_key)));
    if (std::find(keys.begin(), keys.end(), line_key) != keys.end())
      throw UsageError(fmt::format("{}: the key {} appears twice", where(), line_key));
    keys.push_back(line_key);
    auto nodes = parse_node_list(trim(line.substr(colon + 1)));
    if (!nodes)
      throw UsageError(fmt::format("{}: '{}' is not a comma-separated list of host names", where(),
                                   io::printable(trim(line.substr(colon + 1)).substr(0, 80))));
    if (line_key == key) found = std::move(nodes);
  }
  return found;
}

Placement resolve_placement(const PlanOptions& options, int workers) {
  if (options.spec.empty()) return Placement{{}, "none", {}};
  const PlanSource source = parse_plan_source(options.spec);
  const SpawnerId me = this_spawner();
  Placement placement;
  if (source.server()) {
    placement.source = "server";
    const std::string request = plan_request(me);
    const io::LineAnswer answer =
        io::request_line(source.host, source.port, request, options.timeout);
    std::string why;
    std::optional<std::vector<std::string>> nodes;
    if (!answer.ok)
      why = answer.error;
    else if (answer.line.starts_with("ERROR"))
      why = fmt::format("it answered {}", io::shown(answer.line));
    else if (nodes = parse_node_list(answer.line); !nodes)
      why = fmt::format("its answer {} is not a comma-separated list of host names",
                        io::shown(answer.line));
    if (!why.empty()) {
      why = fmt::format("plan server {} (request '{}'): {}", source.spec, request, why);
      if (options.strict) throw UsageError(fmt::format("--plan_strict: {}", why));
      placement.fallback = why;
      return placement;
    }
    placement.hosts = std::move(*nodes);
  } else {
    placement.source = "file";
    auto nodes = plan_nodes_from_file(read_plan_text(source.spec), source.spec, plan_key(me));
    if (!nodes)
      throw UsageError(fmt::format("--plan {}: no line for {}, the key of this process",
                                   io::shown(source.spec, 200), plan_key(me)));
    placement.hosts = std::move(*nodes);
  }
  if (int(placement.hosts.size()) != workers)
    throw UsageError(fmt::format("--plan {}: the plan names {} for {} worker{} (one per worker)",
                                 io::shown(source.spec, 200), count_nodes(placement.hosts.size()),
                                 workers, workers == 1 ? "" : "s"));
  return placement;
}

}  // namespace miniamr::app

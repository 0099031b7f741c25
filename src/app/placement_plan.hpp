// Where the workers of `--launch spawn` go: a placement plan, from a file or from a plan server,
// in the form a batch system that plans resources ahead would answer "where do the children of
// this process go". Lines of a plan are `KEY: node,node,...`, keyed by the spawning process's
// id and its ancestors' ids (`init.0` is process 0 of the job the launcher started).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace miniamr::app {

// What --plan names: an existing file, or a plan server's HOST:PORT.
struct PlanSource {
  std::string spec;  // the option's value
  std::string host;  // server: host name or address
  int port = 0;      // server: 1..65535; 0 for a file
  bool server() const { return port != 0; }
};

// Syntax only (no file is opened): a value ending in ':' and digits is HOST:PORT and must have a
// host and a port in 1..65535; anything else is a file name. Throws UsageError.
PlanSource parse_plan_source(const std::string& spec);

// The spawning process's identity as the launcher knows it: its job id (Open MPI's
// OMPI_MCA_ess_base_jobid, "singleton" without a launcher) and its rank in that job.
struct SpawnerId {
  std::string jobid;
  int vpid = 0;
};
SpawnerId this_spawner();

// The plan server's request line: `<parent-jobid>;<parent-vpid>;<child-jobid>`. The child's
// job id exists only once the spawn is done, so "?" stands for it.
std::string plan_request(const SpawnerId& id);
// The plan file's key of a process the launcher started: `init.<vpid>`.
std::string plan_key(const SpawnerId& id);

// The nodes of `key` in the text of a plan file, or nullopt when no line has that key. Throws
// UsageError naming `path` and the line for a malformed line or a key given twice.
std::optional<std::vector<std::string>> plan_nodes_from_file(std::string_view text,
                                                             const std::string& path,
                                                             const std::string& key);

// A server's answer as nodes; nullopt unless it is a comma-separated list of host names.
std::optional<std::vector<std::string>> parse_node_list(std::string_view line);

struct PlanOptions {
  std::string spec;  // --plan ("" = none)
  bool strict = false;
  std::chrono::milliseconds timeout{5000};
};

// The hosts of the workers, one per worker, or empty when the launcher's default mapping
// applies (no plan, or a plan server that could not be used and strict is off: then
// `fallback` says why).
struct Placement {
  std::vector<std::string> hosts;
  std::string source;    // "none", "file", "server"
  std::string fallback;  // "" or why the plan server's answer was not used
};

// Reads the plan or asks its server. Throws UsageError for a plan that names a different number
// of nodes than `workers`, for a missing or malformed file, and (strict) for any server failure.
Placement resolve_placement(const PlanOptions& options, int workers);

}  // namespace miniamr::app

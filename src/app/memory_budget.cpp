#include "app/memory_budget.hpp"

#include <algorithm>
#include <array>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>

#include <fmt/format.h>

namespace miniamr::app {

namespace {

// "MemAvailable:   7958124 kB" -> bytes.
std::optional<double> mem_available() {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  double value = 0;
  while (in >> key >> value) {
    std::getline(in, unit);
    if (key == "MemAvailable:") return value * 1024;
  }
  return std::nullopt;
}

// The memory left under this process's cgroup limit (v2, then v1), when there is one.
std::optional<double> cgroup_room() {
  const std::array<std::pair<const char*, const char*>, 2> files{{
      {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"},
      {"/sys/fs/cgroup/memory/memory.limit_in_bytes",
       "/sys/fs/cgroup/memory/memory.usage_in_bytes"},
  }};
  for (const auto& [limit_file, usage_file] : files) {
    std::ifstream limit_in(limit_file), usage_in(usage_file);
    double limit = 0, usage = 0;
    if (!(limit_in >> limit) || !(usage_in >> usage)) continue;  // "max" reads as a failure
    if (limit >= 1e18) continue;                                 // v1's "no limit"
    return std::max(0.0, limit - usage);
  }
  return std::nullopt;
}

int ranks_on_this_node(MPI_Comm comm) {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int n = 1;
  MPI_Comm_size(node, &n);
  MPI_Comm_free(&node);
  return n;
}

}  // namespace

MemoryBudget memory_budget(MPI_Comm comm, double max_memory) {
  const int sharing = ranks_on_this_node(comm);
  MemoryBudget mine;
  if (max_memory > 0) {
    mine = {max_memory, fmt::format("--max_memory {}", human_bytes(max_memory))};
  } else if (const auto avail = mem_available()) {
    const auto cgroup = cgroup_room();
    const bool limited = cgroup && *cgroup < *avail;
    const double node = limited ? *cgroup : *avail;
    mine = {node / sharing,
            fmt::format("{} {} shared by {} rank{} on this node; --max_memory sets the limit",
                        limited ? "the cgroup's room of" : "MemAvailable", human_bytes(node),
                        sharing, sharing == 1 ? "" : "s")};
  }
  // Every rank must judge a mesh the same way: all take the smallest budget and its source.
  struct {
    double bytes;
    int rank;
  } least{mine.bytes > 0 ? mine.bytes : 1e300, 0};
  MPI_Comm_rank(comm, &least.rank);
  MPI_Allreduce(MPI_IN_PLACE, &least, 1, MPI_DOUBLE_INT, MPI_MINLOC, comm);
  if (least.bytes >= 1e300) return {};
  int size = int(mine.source.size());
  MPI_Bcast(&size, 1, MPI_INT, least.rank, comm);
  mine.source.resize(std::size_t(size));
  MPI_Bcast(mine.source.data(), size, MPI_CHAR, least.rank, comm);
  return {least.bytes, mine.source};
}

double block_bytes(const stencil::BlockShape& shape) {
  // The fields, plus the key, cost, ghost plan entries and allocator headers of a block.
  constexpr double kPerBlock = 512;
  return double(shape.doubles()) * double(sizeof(double)) + kPerBlock;
}

std::string human_bytes(double bytes) {
  constexpr std::array<const char*, 6> kUnits{"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  std::size_t u = 0;
  while (bytes >= 1024 && u + 1 < kUnits.size()) {
    bytes /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f} B", bytes) : fmt::format("{:.3g} {}", bytes, kUnits[u]);
}

std::size_t blocks_that_fit(const stencil::BlockShape& shape, const MemoryBudget& budget) {
  if (budget.bytes <= 0) return std::numeric_limits<std::size_t>::max();
  return std::size_t(budget.bytes / block_bytes(shape));
}

std::string does_not_fit(double blocks, const stencil::BlockShape& shape,
                         const MemoryBudget& budget, std::string_view what) {
  const double need = blocks * block_bytes(shape);
  if (budget.bytes <= 0 || need <= budget.bytes) return {};
  return fmt::format(
      "{} {} on one rank ({:.4g} blocks of {}x{}x{} cells x {} variables, {} each), more than "
      "the {} a rank may use ({})",
      what, human_bytes(need), blocks, shape.nx, shape.ny, shape.nz, shape.num_vars,
      human_bytes(block_bytes(shape)), human_bytes(budget.bytes), budget.source);
}

}  // namespace miniamr::app

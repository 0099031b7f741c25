#include "app/report.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <ctime>

#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "app/errors.hpp"
#include "app/launch.hpp"
#include "app/simulated_platform.hpp"
#include "runtime/static_runtime.hpp"
#include "stencil/kernel_set.hpp"

namespace miniamr::app {

namespace {

// What the process used, from one getrusage: its peak resident set, and its system time (the
// seconds it spent in the kernel, start-up included). System time is mostly page faults, whose
// cost (zeroing fresh pages, and on a virtual machine the host's faults behind them) lands in
// the phase that first touches the memory, refinement above all.
struct ProcessUsage {
  double peak_rss_bytes = 0, system_seconds = 0;
};

ProcessUsage process_usage() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return {double(u.ru_maxrss) * 1024.0,  // Linux reports kilobytes
          double(u.ru_stime.tv_sec) + 1e-6 * double(u.ru_stime.tv_usec)};
}

// Flops per interior cell update, counted like the reference (adds + one divide).
int flops_per_update(int stencil) {
  return stencil == 27 ? 27 : 7;
}

}  // namespace

double Report::blocks_per_ts() const {
  const double stages = double(stats.timesteps_done) * config.stages_per_ts;
  return stages > 0 ? double(stats.block_stage_sum) / stages : 0.0;
}

double Report::gflops() const {
  const double ops = double(cell_var_updates) * flops_per_update(config.stencil);
  return compute.avg > 0 ? ops / (compute.avg * double(1 << 30)) : 0.0;
}

double Report::cell_var_updates_per_s() const {
  return stage_seconds_max > 0 ? double(cell_var_updates) / stage_seconds_max : 0.0;
}

double Report::effective_bandwidth_gbs() const {
  return 16.0 * cell_var_updates_per_s() / 1e9;
}

namespace {

// Every rank's host name, in rank order, on rank 0.
std::vector<std::string> gather_hosts(const comm::Communicator& comm) {
  std::array<char, MPI_MAX_PROCESSOR_NAME> mine{};
  const std::string name = processor_name();
  std::copy_n(name.begin(), std::min(name.size(), mine.size() - 1), mine.begin());
  std::vector<char> all(comm.is_root() ? mine.size() * std::size_t(comm.size()) : 0);
  MPI_Gather(mine.data(), int(mine.size()), MPI_CHAR, all.data(), int(mine.size()), MPI_CHAR, 0,
             comm.get());
  std::vector<std::string> hosts;
  for (std::size_t i = 0; i < all.size(); i += mine.size()) hosts.emplace_back(all.data() + i);
  return hosts;
}

}  // namespace

Report gather_report(const Config& config, const Simulation& sim, runtime::Runtime& rt,
                     const Placement& placement) {
  const auto& comm = rt.comm();
  const auto& t = rt.timers();
  using runtime::Phase;
  Report r;
  r.config = config;
  r.final_objects = sim.objects();
  r.runtime_name = rt.name();
  const SimulatedPlatform platform = simulated_platform();
  r.simulated = platform.simulated;
  r.platform = platform.name;
  r.host_allocator = platform.host_allocator;
  if (comm.is_root()) {
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    r.host = host;
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    ::gmtime_r(&now, &utc);
    char date[32];
    std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &utc);
    r.date_utc = date;
    for (const char* id : {"SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID", "COBALT_JOBID"})
      if (const char* v = std::getenv(id); v != nullptr && r.batch_job.empty())
        r.batch_job = fmt::format("{}={}", id, v);
  }
  r.ranks = comm.size();
  r.threads = rt.threads();
  r.placement = placement;
  r.rank_hosts = gather_hosts(comm);
  if (comm.is_root()) {
    r.planned_hosts.assign(std::size_t(r.ranks), "");
    for (std::size_t i = 0; i < placement.hosts.size() && i + 1 < r.planned_hosts.size(); ++i)
      r.planned_hosts[i + 1] = placement.hosts[i];
  }
  const runtime::KernelCalls calls = rt.kernels().calls();
  std::array<std::int64_t, 4> counts{calls.native, calls.kokkos, calls.variable, calls.compact};
  comm.sum_in_place(counts);
  r.kernel_calls = {counts[0], counts[1], counts[2], counts[3]};
  r.stencil_backend = runtime::backend_name(r.kernel_calls);
  r.kernel_isa = std::string(stencil::isa_name(rt.kernels().native().isa));
  r.stats = sim.stats();
  {
    // Each step's messages of the busiest rank (every rank ran the same steps).
    std::vector<std::int64_t> messages;
    for (const auto& step : r.stats.refine_traffic) messages.push_back(step.messages);
    MPI_Allreduce(MPI_IN_PLACE, messages.data(), int(messages.size()), MPI_INT64_T, MPI_MAX,
                  comm.get());
    for (std::size_t i = 0; i < messages.size(); ++i)
      r.stats.refine_traffic[i].messages = messages[i];
  }
  if (sim.balancer() != nullptr) {
    r.balance = sim.balancer()->stats();
    r.link = sim.balancer()->link();
    r.balanced_dynamically = true;
  }
  {
    const double busy = t.get(Phase::kCompute), comm_s = t.get(Phase::kCommunicate);
    const double idle = std::max(0.0, t.get(Phase::kTotal) - busy - comm_s - t.get(Phase::kRefine) -
                                          t.get(Phase::kLoadBalance) - t.get(Phase::kChecksum));
    // Every rank's value on rank 0, the only one that writes them (an array per rank on every
    // rank would be P^2 values in a simulation's one process).
    const auto gather = [&](double x) {
      std::vector<double> all(comm.is_root() ? std::size_t(comm.size()) : 0);
      MPI_Gather(&x, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, 0, comm.get());
      return all;
    };
    r.busy_per_rank = gather(busy);
    r.comm_per_rank = gather(comm_s);
    r.idle_per_rank = gather(idle);
    r.checksum_per_rank = gather(t.get(Phase::kChecksum));
    r.refine_per_rank = gather(t.get(Phase::kRefine));
    r.balance_per_rank = gather(t.get(Phase::kLoadBalance));
    r.blocks_per_rank = gather(double(sim.domain().leaves.size()));
    const ProcessUsage usage = process_usage();
    r.peak_rss_per_rank = gather(usage.peak_rss_bytes);
    r.peak_rss_max = comm.max(usage.peak_rss_bytes);
    r.system_per_rank = gather(usage.system_seconds);
    r.system_max = comm.max(usage.system_seconds);
  }
  r.max_blocks = comm.max(sim.stats().max_blocks_rank);
  r.blocks_mapped_ahead = comm.sum(std::int64_t(sim.domain().spare.mapped_ahead()));
  r.blocks_mapped_on_take = comm.sum(std::int64_t(sim.domain().spare.mapped_on_take()));
  r.partition_bytes_per_rank = std::int64_t(sim.mesh().partition_bytes_per_rank());
  r.total = comm::spread(comm, t.get(Phase::kTotal));
  r.compute = comm::spread(comm, t.get(Phase::kCompute));
  r.communicate = comm::spread(comm, t.get(Phase::kCommunicate));
  r.checksum = comm::spread(comm, t.get(Phase::kChecksum));
  r.refine = comm::spread(comm, t.get(Phase::kRefine));
  r.load_balance = comm::spread(comm, t.get(Phase::kLoadBalance));
  r.init = comm::spread(comm, t.get(Phase::kInit));
  r.cell_var_updates = comm.sum(sim.stats().cell_var_updates_rank);
  r.stage_seconds_max =
      comm.max(t.get(Phase::kCompute) + t.get(Phase::kCommunicate) + t.get(Phase::kChecksum));
  r.field_bytes_max = double(r.max_blocks) * double(sim.domain().shape.doubles() * sizeof(double));
  using Work = runtime::Slowdown::Work;
  const runtime::Slowdown& slow = rt.slowdown();
  r.slowdown_stages_max = comm.max(slow.spent(Work::kStages));
  r.slowdown_copies_max = comm.max(slow.spent(Work::kCopies));
  r.slowdown_adaptation_max = comm.max(slow.spent(Work::kAdaptation));
  return r;
}

}  // namespace miniamr::app

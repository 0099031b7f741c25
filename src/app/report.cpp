#include "app/report.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <ctime>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include "app/build_info.hpp"
#include "app/errors.hpp"
#include "app/launch.hpp"
#include "app/objects.hpp"
#include "app/simulated_platform.hpp"
#include "io/printable.hpp"
#include "runtime/static_runtime.hpp"
#include "stencil/kernel_set.hpp"

namespace miniamr::app {

namespace {

double peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_maxrss) * 1024.0;  // Linux reports kilobytes
}

// Flops per interior cell update, counted like the reference (adds + one divide).
int flops_per_update(int stencil) {
  return stencil == 27 ? 27 : 7;
}

const char* lb_method_name(LbMethod m) {
  switch (m) {
    case LbMethod::kRcb:
      return "RCB";
    case LbMethod::kMorton:
      return "Morton";
    case LbMethod::kHilbert:
      return "Hilbert";
    case LbMethod::kTruncHilbert:
      return "Truncated Hilbert";
  }
  return "?";
}

const char* ownership_curve(const Config& c) {
  return c.hilbert_ownership() ? "Hilbert" : "Morton";
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
std::vector<std::string> gather_hosts(const runtime::Communicator& comm) {
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
  if (sim.balancer() != nullptr) {
    r.balance = sim.balancer()->stats();
    r.link = sim.balancer()->link();
    r.balanced_dynamically = true;
  }
  {
    const double busy = t.get(Phase::kCompute), comm_s = t.get(Phase::kCommunicate);
    const double idle = std::max(0.0, t.get(Phase::kTotal) - busy - comm_s - t.get(Phase::kRefine) -
                                          t.get(Phase::kLoadBalance) - t.get(Phase::kChecksum));
    const auto gather = [&](double x) {
      std::vector<double> all(static_cast<std::size_t>(comm.size()));
      MPI_Gather(&x, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, 0, comm.get());
      return all;
    };
    r.busy_per_rank = gather(busy);
    r.comm_per_rank = gather(comm_s);
    r.idle_per_rank = gather(idle);
    r.blocks_per_rank = gather(double(sim.domain().leaves.size()));
    r.peak_rss_per_rank = gather(peak_rss_bytes());
  }
  r.max_blocks = comm.max(sim.stats().max_blocks_rank);
  r.blocks_mapped_ahead = comm.sum(std::int64_t(sim.domain().spare.mapped_ahead()));
  r.blocks_mapped_on_take = comm.sum(std::int64_t(sim.domain().spare.mapped_on_take()));
  r.total = runtime::spread(comm, t.get(Phase::kTotal));
  r.compute = runtime::spread(comm, t.get(Phase::kCompute));
  r.communicate = runtime::spread(comm, t.get(Phase::kCommunicate));
  r.checksum = runtime::spread(comm, t.get(Phase::kChecksum));
  r.refine = runtime::spread(comm, t.get(Phase::kRefine));
  r.load_balance = runtime::spread(comm, t.get(Phase::kLoadBalance));
  r.init = runtime::spread(comm, t.get(Phase::kInit));
  r.cell_var_updates = comm.sum(sim.stats().cell_var_updates_rank);
  r.stage_seconds_max =
      comm.max(t.get(Phase::kCompute) + t.get(Phase::kCommunicate) + t.get(Phase::kChecksum));
  r.peak_rss_max = comm.max(peak_rss_bytes());
  r.field_bytes_max = double(r.max_blocks) * double(sim.domain().shape.doubles() * sizeof(double));
  return r;
}

std::string summary_line(const Report& r) {
  return fmt::format(
      "Summary: ranks {} ts {} time {:f} calc {:f} comm {:f} red {:f} refine {:f} blocks/ts {:f} "
      "max_blocks {}",
      r.ranks, r.stats.timesteps_done, r.total.avg, r.compute.avg, r.communicate.avg,
      r.checksum.avg, r.refine.avg, r.blocks_per_ts(), r.max_blocks);
}

void print_report(std::FILE* out, const Report& r, bool with_summary) {
  const Config& c = r.config;
  auto line = [out](const std::string& s) { fmt::print(out, "{}\n", s); };
  line("");
  line(" ================ Start report ===================");
  line("");
  line("          miniamr (Mantevo miniAMR 1.7.0 compatible)");
  line("");
  line(fmt::format(
      "Run on {} ranks x {} threads, {} runtime, rank grid {} x {} x {}, root blocks {} x {} x {}",
      r.ranks, r.threads, r.runtime_name, c.npx, c.npy, c.npz, c.npx * c.init_x, c.npy * c.init_y,
      c.npz * c.init_z));
  line(fmt::format(
      "Block size {} x {} x {}, {} variables, comm_vars {}, stencil {} ({} kernels, {}{})", c.nx,
      c.ny, c.nz, c.num_vars, c.effective_comm_vars(), c.stencil, r.stencil_backend, r.kernel_isa,
      r.kernel_calls.compact > 0 ? ", compact interiors" : ""));
  line(fmt::format("Levels of refinement {}, blocks can change by {} levels per refinement step",
                   c.num_refine, c.effective_block_change()));
  if (c.refine_ghost) line("Ghost cells are checked for refinement");
  if (c.uniform_refine != 0) {
    line("Blocks are uniformly refined");
  } else {
    line(fmt::format("Objects: {}", c.objects.size()));
    for (std::size_t i = 0; i < c.objects.size(); ++i) {
      const Object& a = c.objects[i];
      const Object& b = r.final_objects[i];
      line(fmt::format("  object {}: {}, {}", i, object_type_name(a.type), bounce_name(a.bounce)));
      line(fmt::format("    center  {:f} {:f} {:f} -> {:f} {:f} {:f}", a.center[0], a.center[1],
                       a.center[2], b.center[0], b.center[1], b.center[2]));
      line(
          fmt::format("    move    {:f} {:f} {:f} per unit time", a.move[0], a.move[1], a.move[2]));
      line(fmt::format("    size    {:f} {:f} {:f} -> {:f} {:f} {:f}", a.size[0], a.size[1],
                       a.size[2], b.size[0], b.size[1], b.size[2]));
    }
  }
  line(fmt::format("Timesteps {}, simulated time {:f}, stages per timestep {}",
                   r.stats.timesteps_done, r.stats.sim_time, c.stages_per_ts));
  line(fmt::format("Checksum every {} stages (tolerance 1e-{}), refine every {} timesteps",
                   c.checksum_freq, c.error_tol, c.refine_freq));
  line(
      fmt::format("Load balance: weighted cut of the {} curve ({} requested), weights: {}, "
                  "threshold {}%, lb_opt {}",
                  ownership_curve(c), lb_method_name(c.lb_method),
                  c.lb_weight == LbWeight::kBlocks  ? "one per block"
                  : c.lb_weight == LbWeight::kModel ? "cost model"
                                                    : "measured time",
                  c.inbalance, c.lb_opt));
  line("");
  auto timing = [&](const char* name, const runtime::Spread& s) {
    line(fmt::format("{:<36} ave {:12.6f}  min {:12.6f}  max {:12.6f}", name, s.avg, s.min, s.max));
  };
  line("Time (seconds)");
  timing("  total", r.total);
  timing("  compute (stencil + on-rank ghosts)", r.compute);
  timing("  communicate (messages)", r.communicate);
  timing("  checksum reductions", r.checksum);
  timing("  refinement", r.refine);
  timing("  load balance", r.load_balance);
  timing("  initialisation", r.init);
  line("");
  line(fmt::format(
      "Cell-variable updates {}, {:.4g} per second in stages, effective bandwidth "
      "{:.2f} GB/s (16 B per update), {:f} GFLOPS",
      r.cell_var_updates, r.cell_var_updates_per_s(), r.effective_bandwidth_gbs(), r.gflops()));
  line(fmt::format("Refinement steps {}, blocks split {}, families coarsened {}, closure rounds {}",
                   r.stats.refine_steps, r.stats.blocks_split, r.stats.blocks_reformed,
                   r.stats.closure_rounds));
  line(fmt::format("Blocks: final {}, per timestep {:f}, peak on a rank {}", r.stats.final_blocks,
                   r.blocks_per_ts(), r.max_blocks));
  line(fmt::format(
      "Peak resident memory on a rank {:.1f} MiB (block storage at its peak {:.1f} MiB)",
      r.peak_rss_max / (1024.0 * 1024.0), r.field_bytes_max / (1024.0 * 1024.0)));
  line(fmt::format("Load balances {}, blocks moved {} (balance) and {} (gathering families)",
                   r.stats.load_balances, r.stats.blocks_moved_lb, r.stats.blocks_moved_coarsen));
  if (r.balanced_dynamically)
    line(fmt::format(
        "Balancer {}: decisions taken {}, skipped {}; refinement cuts {}; blocks "
        "migrated {} ({} at refinement); final work shares {:.3f}",
        r.config.lb, r.balance.decisions_taken, r.balance.decisions_skipped,
        r.balance.refinement_cuts, r.balance.blocks_migrated,
        r.balance.blocks_migrated_at_refinement, fmt::join(r.balance.final_shares, " ")));
  if (r.simulated)
    line(fmt::format("Simulated on platform {} (SMPI): the times are simulated, not measured",
                     r.platform));
  if (r.config.compute == "model") {
    line("Final checksums: none (--compute model charges the kernels' cost and computes nothing)");
  } else {
    line("Final checksums:");
    for (std::size_t v = 0; v < r.stats.final_checksums.size(); ++v)
      line(fmt::format("  var {:3d}  {:.17g}", v, r.stats.final_checksums[v]));
  }
  line("");
  line(" ================== End report ===================");
  if (with_summary) line(summary_line(r));
}

std::string results_yaml(const Report& r) {
  const Config& c = r.config;
  YAML::Emitter y;
  y.SetDoublePrecision(17);
  y << YAML::BeginMap;
  auto kv = [&y](const std::string& k, const auto& v) { y << YAML::Key << k << YAML::Value << v; };
  auto spread3 = [&](const std::string& k, const runtime::Spread& s) {
    kv(k + "_ave", s.avg);
    kv(k + "_min", s.min);
    kv(k + "_max", s.max);
  };
  kv("schema_version", kResultsSchemaVersion);
  kv("program", "miniamr");
  kv("version", build_info().version);
  {
    const BuildInfo b = build_info();
    std::string command = "miniamr";
    for (const std::string& a : c.command_line) command += " " + io::shell_quoted(a);
    y << YAML::Key << "provenance" << YAML::Value << YAML::BeginMap;
    kv("command_line", command);
    kv("deck", c.deck_path);
    kv("git_revision", b.git_revision);
    kv("compiler", b.compiler);
    kv("mpi_library", b.mpi_library);
    kv("tbb", b.tbb);
    kv("kokkos", b.kokkos);
    kv("host", r.host);
    kv("date_utc", r.date_utc);
    kv("batch_job", r.batch_job);
    y << YAML::EndMap;
  }
  kv("compatible_with", "Mantevo miniAMR 1.7.0");
  kv("runtime", r.runtime_name);
  kv("simulated", r.simulated);
  y << YAML::Key << "platform" << YAML::Value;
  if (r.simulated)
    y << r.platform;
  else
    y << YAML::Null;
  kv("compute", c.compute);
  kv("ranks", r.ranks);
  kv("threads", r.threads);
  y << YAML::Key << "launch" << YAML::Value << YAML::BeginMap;
  kv("mode", c.launch);
  kv("workers", c.launch == "spawn" ? c.workers : 0);
  kv("plan", c.plan);
  kv("plan_source", r.placement.source.empty() ? "none" : r.placement.source);
  kv("plan_fallback", r.placement.fallback);
  y << YAML::EndMap;
  y << YAML::Key << "placement" << YAML::Value << YAML::BeginSeq;
  for (std::size_t i = 0; i < r.rank_hosts.size(); ++i) {
    y << YAML::Flow << YAML::BeginMap;
    kv("rank", int(i));
    kv("host", r.rank_hosts[i]);
    kv("planned", i < r.planned_hosts.size() ? r.planned_hosts[i] : "");
    y << YAML::EndMap;
  }
  y << YAML::EndSeq;
  y << YAML::Key << "busy_per_rank" << YAML::Value << YAML::Flow << r.busy_per_rank;
  y << YAML::Key << "comm_per_rank" << YAML::Value << YAML::Flow << r.comm_per_rank;
  y << YAML::Key << "idle_per_rank" << YAML::Value << YAML::Flow << r.idle_per_rank;
  y << YAML::Key << "per_rank" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "blocks" << YAML::Value << YAML::Flow << r.blocks_per_rank;
  y << YAML::Key << "compute_s" << YAML::Value << YAML::Flow << r.busy_per_rank;
  y << YAML::Key << "comm_s" << YAML::Value << YAML::Flow << r.comm_per_rank;
  y << YAML::Key << "idle_s" << YAML::Value << YAML::Flow << r.idle_per_rank;
  y << YAML::Key << "peak_rss_bytes" << YAML::Value << YAML::Flow << r.peak_rss_per_rank;
  y << YAML::EndMap;
  if (r.balanced_dynamically) {
    kv("lb_strategy", c.lb);
    kv("lb_decisions_taken", r.balance.decisions_taken);
    kv("lb_decisions_skipped", r.balance.decisions_skipped);
    kv("lb_refinement_cuts", r.balance.refinement_cuts);
    kv("blocks_migrated", r.balance.blocks_migrated);
    kv("blocks_migrated_at_refinement", r.balance.blocks_migrated_at_refinement);
    kv("bytes_migrated", r.balance.bytes_migrated);
    kv("final_imbalance", r.balance.final_imbalance);
    y << YAML::Key << "final_work_shares" << YAML::Value << YAML::Flow << r.balance.final_shares;
    // The migration price the balancer used, and where it came from.
    kv("lb_link_model", c.lb_link_model_path.empty() ? "measured" : c.lb_link_model_path);
    kv("lb_link_latency_s", r.link.latency_s);
    kv("lb_link_bandwidth_Bps", r.link.bandwidth_Bps);
    y << YAML::Key << "slow_ranks" << YAML::Value << YAML::Flow << c.slow_ranks;
    kv("noise", c.noise);
    // The predicted seconds per stage of every rank at every decision (the load over time).
    y << YAML::Key << "load_history" << YAML::Value << YAML::BeginSeq;
    for (const auto& h : r.balance.history) {
      y << YAML::Flow << YAML::BeginMap;
      kv("timestep", h.timestep);
      kv("imbalance", h.imbalance);
      kv("moved", h.moved);
      y << YAML::Key << "seconds_per_stage" << YAML::Value << YAML::Flow << h.seconds_per_stage;
      y << YAML::EndMap;
    }
    y << YAML::EndSeq;
  }
  kv("stencil_backend", r.stencil_backend);
  kv("kernel_isa", r.kernel_isa);
  y << YAML::Key << "kernel_calls" << YAML::Value << YAML::Flow << YAML::BeginMap;
  kv("native", r.kernel_calls.native);
  kv("kokkos", r.kernel_calls.kokkos);
  kv("variable_work", r.kernel_calls.variable);
  kv("compact", r.kernel_calls.compact);  // of the native ones, on compact interiors
  y << YAML::EndMap;
  kv("npx", c.npx);
  kv("npy", c.npy);
  kv("npz", c.npz);
  kv("init_block_x", c.init_x);
  kv("init_block_y", c.init_y);
  kv("init_block_z", c.init_z);
  kv("x_block_size", c.nx);
  kv("y_block_size", c.ny);
  kv("z_block_size", c.nz);
  kv("reorder", c.reorder);
  kv("permute", int(c.permute));
  kv("max_blocks_allowed", c.max_blocks);
  kv("code", c.code);
  kv("num_refine", c.num_refine);
  kv("block_change", c.effective_block_change());
  kv("refine_ghost", int(c.refine_ghost));
  kv("uniform_refine", c.uniform_refine);
  kv("num_objects", int(c.objects.size()));
  for (std::size_t i = 0; i < r.final_objects.size(); ++i) {
    const Object& o = r.final_objects[i];
    const std::string p = fmt::format("obj{}", i);
    kv(p + "type", o.type);
    kv(p + "bounce", o.bounce);
    const char* xyz[3] = {"x", "y", "z"};
    for (int d = 0; d < 3; ++d) kv(p + "center_" + xyz[d], o.center[std::size_t(d)]);
    for (int d = 0; d < 3; ++d) kv(p + "move_" + xyz[d], o.move[std::size_t(d)]);
    for (int d = 0; d < 3; ++d) kv(p + "size_" + xyz[d], o.size[std::size_t(d)]);
    for (int d = 0; d < 3; ++d) kv(p + "inc_" + xyz[d], o.inc[std::size_t(d)]);
  }
  kv("num_tsteps", r.stats.timesteps_done);
  kv("sim_time", r.stats.sim_time);
  kv("stages_per_timestep", c.stages_per_ts);
  kv("nonblocking", int(!c.blocking_send));
  kv("checksum_freq", c.checksum_freq);
  kv("refine_freq", c.refine_freq);
  kv("lb_opt", c.lb_opt);
  kv("inbalance", c.inbalance);
  kv("lb_method", lb_method_name(c.lb_method));
  kv("ownership_curve", ownership_curve(c));
  kv("lb_weight", int(c.lb_weight));
  kv("plot_freq", c.plot_freq);
  kv("num_vars", c.num_vars);
  kv("stencil", c.stencil);
  kv("comm_vars", c.effective_comm_vars());
  kv("error_tol", c.error_tol);
  kv("send_faces", int(c.send_faces));
  spread3("total_time", r.total);
  spread3("compute_time", r.compute);
  kv("total_gflops", r.gflops());
  kv("ave_gflops", r.gflops() / r.ranks);
  spread3("total_comm", r.communicate);
  spread3("gridsum_time", r.checksum);
  spread3("refine_time", r.refine);
  spread3("time_total_load_bal", r.load_balance);
  spread3("init_time", r.init);
  kv("total_blocks_ts_ave", r.blocks_per_ts());
  kv("max_blocks_on_rank", r.max_blocks);
  kv("final_blocks", r.stats.final_blocks);
  y << YAML::Key << "final_blocks_per_level" << YAML::Value << YAML::Flow
    << r.stats.final_level_counts;
  y << YAML::Key << "mesh_history" << YAML::Value << YAML::BeginSeq;
  for (const auto& m : r.stats.mesh_history) {
    y << YAML::Flow << YAML::BeginMap;
    kv("timestep", m.timestep);
    y << YAML::Key << "blocks_per_level" << YAML::Value << YAML::Flow << m.blocks_per_level;
    y << YAML::EndMap;
  }
  y << YAML::EndSeq;
  kv("stage_batches", r.stats.stage_batches);
  kv("refine_steps", r.stats.refine_steps);
  kv("blocks_split", r.stats.blocks_split);
  kv("blocks_reformed", r.stats.blocks_reformed);
  kv("closure_rounds", r.stats.closure_rounds);
  kv("closure_changes_sent", r.stats.closure_changes_sent);
  kv("load_balances", r.stats.load_balances);
  kv("blocks_moved_lb", r.stats.blocks_moved_lb);
  kv("blocks_moved_coarsen", r.stats.blocks_moved_coarsen);
  kv("blocks_mapped_ahead", r.blocks_mapped_ahead);
  kv("blocks_mapped_on_take", r.blocks_mapped_on_take);
  kv("cell_var_updates", r.cell_var_updates);
  kv("stage_time_max", r.stage_seconds_max);
  kv("cell_var_updates_per_s", r.cell_var_updates_per_s());
  kv("effective_bandwidth_gbs", r.effective_bandwidth_gbs());
  kv("peak_rss_max", r.peak_rss_max);
  kv("field_bytes_max", r.field_bytes_max);
  // The phases of the cost model T = T_comp + T_comm + T_ref + T_lb, per rank.
  y << YAML::Key << "phases" << YAML::Value << YAML::BeginMap;
  auto phase = [&](const char* name, const runtime::Spread& sp) {
    y << YAML::Key << name << YAML::Value << YAML::Flow << YAML::BeginMap;
    kv("avg", sp.avg);
    kv("max", sp.max);
    y << YAML::EndMap;
  };
  phase("T_comp", r.compute);
  phase("T_comm", r.communicate);
  phase("T_ref", r.refine);
  phase("T_lb", r.load_balance);
  phase("T_checksum", r.checksum);
  y << YAML::EndMap;
  if (c.compute == "model") {
    // The kernels were not run: no field value, so no sum or digest, is claimed.
    for (const char* key : {"initial_checksums", "final_checksums", "field_digest"})
      y << YAML::Key << key << YAML::Value << YAML::Null;
  } else {
    y << YAML::Key << "initial_checksums" << YAML::Value << YAML::Flow << r.stats.initial_checksums;
    y << YAML::Key << "final_checksums" << YAML::Value << YAML::Flow << r.stats.final_checksums;
    // Quoted: a digest of only decimal digits must still read back as text.
    y << YAML::Key << "field_digest" << YAML::Value << YAML::DoubleQuoted
      << fmt::format("{:016x}", r.stats.field_digest);
  }
  y << YAML::EndMap;
  return std::string(y.c_str()) + "\n";
}

namespace {

// A YAML scalar as JSON: integers, reals and booleans as such (yaml-cpp writes doubles with 17
// significant digits, and nlohmann-json writes them back exactly), everything else as text.
nlohmann::ordered_json json_of(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Sequence: {
      nlohmann::ordered_json a = nlohmann::ordered_json::array();
      for (const auto& e : n) a.push_back(json_of(e));
      return a;
    }
    case YAML::NodeType::Map: {
      nlohmann::ordered_json o = nlohmann::ordered_json::object();
      for (const auto& e : n) o[e.first.as<std::string>()] = json_of(e.second);
      return o;
    }
    case YAML::NodeType::Scalar: {
      const std::string& text = n.Scalar();
      if (n.Tag() == "!") return text;  // quoted in the YAML: a string
      std::int64_t i = 0;
      if (auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), i);
          ec == std::errc{} && end == text.data() + text.size())
        return i;
      double d = 0;
      if (auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
          ec == std::errc{} && end == text.data() + text.size())
        return d;
      if (text == "true" || text == "false") return text == "true";
      return text;
    }
    default:
      return nullptr;
  }
}

}  // namespace

std::string results_json(const Report& report) {
  // One source of keys: the YAML document, converted.
  return json_of(YAML::Load(results_yaml(report))).dump(1) + "\n";
}

std::string results_txt(const Report& report) {
  char* buffer = nullptr;
  std::size_t size = 0;
  std::FILE* mem = open_memstream(&buffer, &size);
  if (!mem) throw RunError("cannot format results.txt");
  print_report(mem, report, /*with_summary=*/false);
  std::fclose(mem);
  std::string text(buffer, size);
  std::free(buffer);
  return text;
}

}  // namespace miniamr::app

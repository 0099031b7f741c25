// The results file (results.yaml, or the same keys as JSON): one section of keys per function,
// every key name looked up at compile time in tools/miniamr_results/results_keys.txt.
#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include "app/build_info.hpp"
#include "app/report.hpp"
#include "app/results_keys.hpp"
#include "comm/mpi.hpp"
#include "io/printable.hpp"
#include "io/yaml_text.hpp"

namespace miniamr::app {

namespace {

// The name written for `listed`, a name of results_keys.txt (its part after the last dot, for
// a key inside a map). A name the list lacks is not a constant expression: it does not compile.
consteval std::string_view key(std::string_view listed) {
  for (std::string_view n : results_keys::kNames)
    if (n == listed) return listed.substr(listed.rfind('.') + 1);
  throw "a results key that tools/miniamr_results/results_keys.txt does not list";
}

// Whether results_keys.txt lists the name `head` + `tail`.
consteval bool listed(std::string_view head, std::string_view tail) {
  for (std::string_view n : results_keys::kNames)
    if (n.size() == head.size() + tail.size() && n.starts_with(head) && n.ends_with(tail))
      return true;
  return false;
}

// The stem of a key listed as `stem_{ave,min,max}`.
consteval std::string_view spread_key(std::string_view stem) {
  if (!listed(stem, "_{ave,min,max}"))
    throw "a results key that tools/miniamr_results/results_keys.txt does not list";
  return stem;
}

// The field of a key listed as `obj{i}field`.
consteval std::string_view object_key(std::string_view field) {
  if (!listed("obj{i}", field))
    throw "a results key that tools/miniamr_results/results_keys.txt does not list";
  return field;
}

// Keys and values into one YAML document.
class Writer {
 public:
  explicit Writer(YAML::Emitter& y) : y_(y) {}
  template <class T>
  void kv(std::string_view k, const T& v) {
    y_ << YAML::Key << std::string(k) << YAML::Value;
    scalar(v);
  }
  // A list on one line.
  template <class T>
  void flow(std::string_view k, const T& v) {
    y_ << YAML::Key << std::string(k) << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const auto& x : v) scalar(x);
    y_ << YAML::EndSeq;
  }
  void null(std::string_view k) { y_ << YAML::Key << std::string(k) << YAML::Value << YAML::Null; }
  // A map (flow: on one line) or a list under key k; end() closes either.
  void map(std::string_view k, bool on_one_line = false) {
    y_ << YAML::Key << std::string(k) << YAML::Value;
    if (on_one_line) y_ << YAML::Flow;
    y_ << YAML::BeginMap;
  }
  void list(std::string_view k) {
    y_ << YAML::Key << std::string(k) << YAML::Value << YAML::BeginSeq;
  }
  // One map of a list, on one line.
  void item() { y_ << YAML::Flow << YAML::BeginMap; }
  // A list under key k of one map per element of `items`, on one line each, whose fields
  // `fields(element)` writes.
  template <class Range, class Fields>
  void items(std::string_view k, const Range& items, Fields&& fields) {
    list(k);
    for (const auto& x : items) {
      item();
      fields(x);
      end_map();
    }
    end_list();
  }
  void end_map() { y_ << YAML::EndMap; }
  void end_list() { y_ << YAML::EndSeq; }
  // stem_ave, stem_min, stem_max.
  void spread(std::string_view stem, const comm::Spread& s) {
    kv(fmt::format("{}_ave", stem), s.avg);
    kv(fmt::format("{}_min", stem), s.min);
    kv(fmt::format("{}_max", stem), s.max);
  }
  YAML::Emitter& emitter() { return y_; }

 private:
  template <class T>
  void scalar(const T& v) {
    if constexpr (std::is_convertible_v<const T&, std::string_view>) {
      // Text that would read back as a number, a truth value or null goes in quotes (a git
      // revision of decimal digits was read as an integer, --slow_rank 1:2 as 62).
      const std::string_view text = v;
      if (io::yaml_plain_misreads(text)) y_ << YAML::DoubleQuoted;
      y_ << std::string(text);
    } else {
      y_ << v;
    }
  }

  YAML::Emitter& y_;
};

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

// What ran, where, when and built how.
void write_identity(Writer& w, const Report& r) {
  const Config& c = r.config;
  const BuildInfo b = build_info();
  w.kv(key("schema_version"), kResultsSchemaVersion);
  w.kv(key("program"), "miniamr");
  w.kv(key("version"), b.version);
  std::string command = "miniamr";
  for (const std::string& a : c.command_line) {
    command += ' ';
    command += io::shell_quoted(a);
  }
  w.map(key("provenance"));
  w.kv(key("provenance.command_line"), command);
  w.kv(key("provenance.deck"), c.deck_path);
  w.kv(key("provenance.git_revision"), b.git_revision);
  w.kv(key("provenance.compiler"), b.compiler);
  w.kv(key("provenance.mpi_library"), b.mpi_library);
  if (const auto eager = comm::shared_memory_eager_bytes())
    w.kv(key("provenance.mpi_eager_limit"), *eager);
  else
    w.null(key("provenance.mpi_eager_limit"));
  w.kv(key("provenance.tbb"), b.tbb);
  w.kv(key("provenance.kokkos"), b.kokkos);
  w.kv(key("provenance.host"), r.host);
  w.kv(key("provenance.date_utc"), r.date_utc);
  w.kv(key("provenance.batch_job"), r.batch_job);
  w.end_map();
  w.kv(key("compatible_with"), "Mantevo miniAMR 1.7.0");
  w.kv(key("runtime"), r.runtime_name);
  w.kv(key("simulated"), r.simulated);
  if (r.simulated) {
    w.kv(key("platform"), r.platform);
    w.kv(key("host_allocator"), r.host_allocator);
  } else {
    w.null(key("platform"));
    w.null(key("host_allocator"));
  }
  w.kv(key("compute"), c.compute);
  w.kv(key("ranks"), r.ranks);
  w.kv(key("threads"), r.threads);
}

// How the ranks started and where each ran.
void write_launch(Writer& w, const Report& r) {
  const Config& c = r.config;
  w.map(key("launch"));
  w.kv(key("launch.mode"), c.launch);
  w.kv(key("launch.workers"), c.launch == "spawn" ? c.workers : 0);
  w.kv(key("launch.plan"), c.plan);
  w.kv(key("launch.plan_source"), r.placement.source.empty() ? "none" : r.placement.source);
  w.kv(key("launch.plan_fallback"), r.placement.fallback);
  w.end_map();
  w.list(key("placement"));
  for (std::size_t i = 0; i < r.rank_hosts.size(); ++i) {
    w.item();
    w.kv(key("placement.rank"), int(i));
    w.kv(key("placement.host"), r.rank_hosts[i]);
    w.kv(key("placement.planned"), i < r.planned_hosts.size() ? r.planned_hosts[i] : "");
    w.end_map();
  }
  w.end_list();
}

// Per-rank lists: where the time of each rank went, its blocks and memory.
void write_per_rank(Writer& w, const Report& r) {
  w.flow(key("busy_per_rank"), r.busy_per_rank);
  w.flow(key("comm_per_rank"), r.comm_per_rank);
  w.flow(key("idle_per_rank"), r.idle_per_rank);
  w.map(key("per_rank"));
  w.flow(key("per_rank.blocks"), r.blocks_per_rank);
  w.flow(key("per_rank.compute_s"), r.busy_per_rank);
  w.flow(key("per_rank.comm_s"), r.comm_per_rank);
  w.flow(key("per_rank.idle_s"), r.idle_per_rank);
  w.flow(key("per_rank.checksum_s"), r.checksum_per_rank);
  w.flow(key("per_rank.refine_s"), r.refine_per_rank);
  w.flow(key("per_rank.balance_s"), r.balance_per_rank);
  w.flow(key("per_rank.peak_rss_bytes"), r.peak_rss_per_rank);
  w.flow(key("per_rank.system_s"), r.system_per_rank);
  w.end_map();
}

// The dynamic runtime's balancer: its decisions, moves, price of moving and load over time.
void write_balancer(Writer& w, const Report& r) {
  const Config& c = r.config;
  w.kv(key("lb_strategy"), c.lb);
  w.kv(key("lb_decisions_taken"), r.balance.decisions_taken);
  w.kv(key("lb_decisions_skipped"), r.balance.decisions_skipped);
  w.kv(key("lb_refinement_cuts"), r.balance.refinement_cuts);
  w.kv(key("blocks_migrated"), r.balance.blocks_migrated);
  w.kv(key("blocks_migrated_at_refinement"), r.balance.blocks_migrated_at_refinement);
  w.kv(key("bytes_migrated"), r.balance.bytes_migrated);
  w.kv(key("final_imbalance"), r.balance.final_imbalance);
  w.flow(key("final_work_shares"), r.balance.final_shares);
  w.kv(key("lb_link_model"), c.lb_link_model_path.empty() ? "measured" : c.lb_link_model_path);
  w.kv(key("lb_link_latency_s"), r.link.latency_s);
  w.kv(key("lb_link_bandwidth_Bps"), r.link.bandwidth_Bps);
  w.flow(key("slow_ranks"), c.slow_ranks);
  w.kv(key("noise"), c.noise);
  w.items(key("load_history"), r.balance.history, [&](const auto& h) {
    w.kv(key("load_history.timestep"), h.timestep);
    w.kv(key("load_history.imbalance"), h.imbalance);
    w.kv(key("load_history.moved"), h.moved);
    w.flow(key("load_history.seconds_per_stage"), h.seconds_per_stage);
  });
}

// The kernels that actually ran.
void write_kernels(Writer& w, const Report& r) {
  w.kv(key("stencil_backend"), r.stencil_backend);
  w.kv(key("kernel_isa"), r.kernel_isa);
  w.map(key("kernel_calls"), /*on_one_line=*/true);
  w.kv(key("kernel_calls.native"), r.kernel_calls.native);
  w.kv(key("kernel_calls.kokkos"), r.kernel_calls.kokkos);
  w.kv(key("kernel_calls.variable_work"), r.kernel_calls.variable);
  w.kv(key("kernel_calls.compact"), r.kernel_calls.compact);  // of the native ones
  w.end_map();
}

// Each object where the run left it, under the reference's keys.
void write_objects(Writer& w, const Report& r) {
  for (std::size_t i = 0; i < r.final_objects.size(); ++i) {
    const Object& o = r.final_objects[i];
    const auto name = [i](std::string_view field) { return fmt::format("obj{}{}", i, field); };
    const auto xyz = [&](std::string_view x, std::string_view y, std::string_view z,
                         const std::array<double, 3>& v) {
      w.kv(name(x), v[0]);
      w.kv(name(y), v[1]);
      w.kv(name(z), v[2]);
    };
    w.kv(name(object_key("type")), o.type);
    w.kv(name(object_key("bounce")), o.bounce);
    xyz(object_key("center_x"), object_key("center_y"), object_key("center_z"), o.center);
    xyz(object_key("move_x"), object_key("move_y"), object_key("move_z"), o.move);
    xyz(object_key("size_x"), object_key("size_y"), object_key("size_z"), o.size);
    xyz(object_key("inc_x"), object_key("inc_y"), object_key("inc_z"), o.inc);
  }
}

// The options, under the reference's key names.
void write_options(Writer& w, const Report& r) {
  const Config& c = r.config;
  w.kv(key("npx"), c.npx);
  w.kv(key("npy"), c.npy);
  w.kv(key("npz"), c.npz);
  w.kv(key("init_block_x"), c.init_x);
  w.kv(key("init_block_y"), c.init_y);
  w.kv(key("init_block_z"), c.init_z);
  w.kv(key("x_block_size"), c.nx);
  w.kv(key("y_block_size"), c.ny);
  w.kv(key("z_block_size"), c.nz);
  w.kv(key("reorder"), c.reorder);
  w.kv(key("permute"), int(c.permute));
  w.kv(key("max_blocks_allowed"), c.max_blocks);
  w.kv(key("code"), c.code);
  w.kv(key("num_refine"), c.num_refine);
  w.kv(key("block_change"), c.effective_block_change());
  w.kv(key("refine_ghost"), int(c.refine_ghost));
  w.kv(key("uniform_refine"), c.uniform_refine);
  w.kv(key("num_objects"), int(c.objects.size()));
  write_objects(w, r);
  w.kv(key("num_tsteps"), r.stats.timesteps_done);
  w.kv(key("sim_time"), r.stats.sim_time);
  w.kv(key("stages_per_timestep"), c.stages_per_ts);
  w.kv(key("nonblocking"), int(!c.blocking_send));
  w.kv(key("checksum_freq"), c.checksum_freq);
  w.kv(key("refine_freq"), c.refine_freq);
  w.kv(key("lb_opt"), c.lb_opt);
  w.kv(key("inbalance"), c.inbalance);
  w.kv(key("lb_method"), lb_method_name(c.lb_method));
  w.kv(key("ownership_curve"), c.hilbert_ownership() ? "Hilbert" : "Morton");
  w.kv(key("lb_weight"), int(c.lb_weight));
  w.kv(key("plot_freq"), c.plot_freq);
  w.kv(key("num_vars"), c.num_vars);
  w.kv(key("stencil"), c.stencil);
  w.kv(key("comm_vars"), c.effective_comm_vars());
  w.kv(key("error_tol"), c.error_tol);
  w.kv(key("send_faces"), int(c.send_faces));
}

// Each phase's time over ranks, and the rates.
void write_times(Writer& w, const Report& r) {
  w.spread(spread_key("total_time"), r.total);
  w.spread(spread_key("compute_time"), r.compute);
  w.kv(key("total_gflops"), r.gflops());
  w.kv(key("ave_gflops"), r.gflops() / r.ranks);
  w.spread(spread_key("total_comm"), r.communicate);
  w.spread(spread_key("gridsum_time"), r.checksum);
  w.spread(spread_key("refine_time"), r.refine);
  w.spread(spread_key("time_total_load_bal"), r.load_balance);
  w.spread(spread_key("init_time"), r.init);
}

// The mesh: blocks over time and per level.
void write_mesh(Writer& w, const Report& r) {
  w.kv(key("total_blocks_ts_ave"), r.blocks_per_ts());
  w.kv(key("max_blocks_on_rank"), r.max_blocks);
  w.kv(key("final_blocks"), r.stats.final_blocks);
  w.flow(key("final_blocks_per_level"), r.stats.final_level_counts);
  w.items(key("mesh_history"), r.stats.mesh_history, [&](const auto& m) {
    w.kv(key("mesh_history.timestep"), m.timestep);
    w.flow(key("mesh_history.blocks_per_level"), m.blocks_per_level);
  });
  w.items(key("refine_traffic"), r.stats.refine_traffic, [&](const auto& t) {
    w.kv(key("refine_traffic.timestep"), t.timestep);
    w.kv(key("refine_traffic.collectives"), t.collectives);
    w.kv(key("refine_traffic.closure_rounds"), t.closure_rounds);
    w.kv(key("refine_traffic.messages_max"), t.messages);
    w.kv(key("refine_traffic.blocks_moved"), t.blocks_moved);
  });
}

// What refinement, balancing and storage did, and what the stages achieved.
void write_counters(Writer& w, const Report& r) {
  w.kv(key("stage_batches"), r.stats.stage_batches);
  w.kv(key("refine_steps"), r.stats.refine_steps);
  w.kv(key("blocks_split"), r.stats.blocks_split);
  w.kv(key("blocks_reformed"), r.stats.blocks_reformed);
  w.kv(key("closure_rounds"), r.stats.closure_rounds);
  w.kv(key("closure_changes_sent"), r.stats.closure_changes_sent);
  w.kv(key("partition_bytes_per_rank"), r.partition_bytes_per_rank);
  w.kv(key("load_balances"), r.stats.load_balances);
  w.kv(key("blocks_moved_lb"), r.stats.blocks_moved_lb);
  w.kv(key("blocks_moved_coarsen"), r.stats.blocks_moved_coarsen);
  w.kv(key("blocks_mapped_ahead"), r.blocks_mapped_ahead);
  w.kv(key("blocks_mapped_on_take"), r.blocks_mapped_on_take);
  w.kv(key("cell_var_updates"), r.cell_var_updates);
  w.kv(key("stage_time_max"), r.stage_seconds_max);
  w.kv(key("cell_var_updates_per_s"), r.cell_var_updates_per_s());
  w.kv(key("effective_bandwidth_gbs"), r.effective_bandwidth_gbs());
  w.kv(key("peak_rss_max"), r.peak_rss_max);
  w.kv(key("system_time_max"), r.system_max);
  w.kv(key("field_bytes_max"), r.field_bytes_max);
  // The emulated slowness (--slow_rank, --noise) spent on each kind of work, slowest rank.
  w.map(key("slowdown_s"), /*on_one_line=*/true);
  w.kv(key("slowdown_s.stages"), r.slowdown_stages_max);
  w.kv(key("slowdown_s.copies"), r.slowdown_copies_max);
  w.kv(key("slowdown_s.adaptation"), r.slowdown_adaptation_max);
  w.end_map();
}

// The phases of the cost model T = T_comp + T_comm + T_ref + T_lb, average and slowest rank.
void write_phases(Writer& w, const Report& r) {
  w.map(key("phases"));
  const auto phase = [&w](std::string_view name, const comm::Spread& s) {
    w.map(name, /*on_one_line=*/true);
    w.kv(key("phases.*.avg"), s.avg);
    w.kv(key("phases.*.max"), s.max);
    w.end_map();
  };
  phase(key("phases.T_comp"), r.compute);
  phase(key("phases.T_comm"), r.communicate);
  phase(key("phases.T_ref"), r.refine);
  phase(key("phases.T_lb"), r.load_balance);
  phase(key("phases.T_checksum"), r.checksum);
  w.end_map();
}

// The field's sums and digest, the same on any rank count, runtime or thread count.
void write_checksums(Writer& w, const Report& r) {
  if (r.config.compute == "model") {
    // The kernels were not run: no field value, so no sum or digest, is claimed.
    w.null(key("initial_checksums"));
    w.null(key("final_checksums"));
    w.null(key("field_digest"));
    return;
  }
  w.flow(key("initial_checksums"), r.stats.initial_checksums);
  w.flow(key("final_checksums"), r.stats.final_checksums);
  // Quoted: a digest of only decimal digits must still read back as text.
  w.emitter() << YAML::Key << std::string(key("field_digest")) << YAML::Value << YAML::DoubleQuoted
              << fmt::format("{:016x}", r.stats.field_digest);
}

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

std::string results_yaml(const Report& r) {
  YAML::Emitter y;
  y.SetDoublePrecision(17);
  Writer w(y);
  y << YAML::BeginMap;
  write_identity(w, r);
  write_launch(w, r);
  write_per_rank(w, r);
  if (r.balanced_dynamically) write_balancer(w, r);
  write_kernels(w, r);
  write_options(w, r);
  write_times(w, r);
  write_mesh(w, r);
  write_counters(w, r);
  write_phases(w, r);
  write_checksums(w, r);
  y << YAML::EndMap;
  return std::string(y.c_str()) + "\n";
}

std::string results_json(const Report& report) {
  // One source of keys: the YAML document, converted.
  return json_of(YAML::Load(results_yaml(report))).dump(1) + "\n";
}

}  // namespace miniamr::app

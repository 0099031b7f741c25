#include "app/checkpoint.hpp"

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <system_error>

#include <fmt/format.h>

#include "app/build_info.hpp"
#include "app/collective_error.hpp"
#include "app/errors.hpp"
#include "app/root_io.hpp"
#include "h5/h5file.hpp"
#include "io/numbered_name.hpp"
#include "io/output_file.hpp"
#include "io/printable.hpp"
#include "sfc/partition.hpp"
#include "stencil/hash.hpp"

namespace miniamr::app {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kFormat = "miniamr checkpoint";
// 2: every attribute is covered by the digest, and the header has a digest of its own.
constexpr std::int64_t kFormatVersion = 2;
constexpr int kObjectWidth = 14;  // type, bounce, centre, move, size, inc

// Exact text of a double (hexadecimal), so equal options compare equal and no others do.
std::string exact(double v) {
  return fmt::format("{:a}", v);
}

std::string numerics_text(const Config& config) {
  std::string text;
  for (const auto& [name, value] : numerics_of(config)) text += name + "=" + value + "\n";
  return text;
}

std::map<std::string, std::string> numerics_map(std::string_view text) {
  std::map<std::string, std::string> m;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    if (const auto eq = line.find('='); eq != std::string_view::npos)
      m.emplace(line.substr(0, eq), line.substr(eq + 1));
  }
  return m;
}

// A hash of one block: its key and every value of every variable, ghosts included.
std::uint64_t block_hash(const octree::Key& k, const stencil::Block& b, double cost) {
  std::uint64_t h = stencil::hash_combine(std::uint64_t(k.level), k.x[0]);
  h = stencil::hash_combine(stencil::hash_combine(h, k.x[1]), k.x[2]);
  h = stencil::hash_combine(h, std::bit_cast<std::uint64_t>(cost));
  for (int v = 0; v < b.shape().num_vars; ++v)
    for (const double x : b.var(v)) h = stencil::hash_combine(h, std::bit_cast<std::uint64_t>(x));
  return h;
}

template <class T>
std::uint64_t values_hash(std::uint64_t h, std::span<const T> values) {
  for (const T& x : values) h = stencil::hash_combine(h, std::bit_cast<std::uint64_t>(x));
  return h;
}

std::uint64_t text_hash(std::uint64_t h, std::string_view text) {
  h = stencil::hash_combine(h, text.size());
  for (const char c : text) h = stencil::hash_combine(h, std::uint8_t(c));
  return h;
}

// The file's attributes. Their hash is an attribute of its own (checked first, so that a damaged
// byte in the options is reported as damage, not as options that differ) and part of the digest.
struct Header {
  std::string format, program_version, git_revision, runtime, numerics, command_line, run_id;
  std::int64_t format_version = 0, timestep = 0, blocks = 0, ranks = 0, history_width = 0;

  std::uint64_t hash() const;
  void write(h5::File& f) const;
  static Header read(const h5::File& f);
};

// Every attribute of the header by name, in the order of its hash.
constexpr std::array<std::pair<const char*, std::string Header::*>, 7> kTextAttributes{{
    {"format", &Header::format},
    {"program_version", &Header::program_version},
    {"git_revision", &Header::git_revision},
    {"runtime", &Header::runtime},
    {"numerics", &Header::numerics},
    {"command_line", &Header::command_line},
    {"run_id", &Header::run_id},
}};
constexpr std::array<std::pair<const char*, std::int64_t Header::*>, 5> kIntAttributes{{
    {"format_version", &Header::format_version},
    {"timestep", &Header::timestep},
    {"blocks", &Header::blocks},
    {"ranks", &Header::ranks},
    {"history_width", &Header::history_width},
}};

std::uint64_t Header::hash() const {
  std::uint64_t h = 0x68656164ull;  // "head"
  for (const auto& [name, member] : kTextAttributes) h = text_hash(h, this->*member);
  for (const auto& [name, member] : kIntAttributes)
    h = stencil::hash_combine(h, std::uint64_t(this->*member));
  return h;
}

void Header::write(h5::File& f) const {
  for (const auto& [name, member] : kTextAttributes) f.set_attribute(name, this->*member);
  for (const auto& [name, member] : kIntAttributes) f.set_attribute(name, this->*member);
  f.set_attribute("header_digest", std::bit_cast<std::int64_t>(hash()));
}

Header Header::read(const h5::File& f) {
  Header h;
  for (const auto& [name, member] : kTextAttributes) h.*member = f.text_attribute(name);
  for (const auto& [name, member] : kIntAttributes) h.*member = f.int_attribute(name);
  return h;
}

// This run, as its checkpoints name it: rank 0's host, process id and start time (jiffies since
// boot), which no other process shares. A function of the process, so every checkpoint of the
// run carries the same one.
std::string run_identity() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '?';
  std::ifstream in("/proc/self/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string started = "?";
  // Field 22, counted after the command name in parentheses (which may hold blanks): the 20th.
  if (const auto close = stat.rfind(')'); close != std::string::npos) {
    std::istringstream fields(stat.substr(close + 1));
    for (int i = 0; i < 20 && fields >> started; ++i) {
    }
  }
  return fmt::format("{}:{}:{}", host, ::getpid(), started);
}

// The state every rank holds alike, as the rows written by rank 0.
struct StateRows {
  std::vector<double> objects, previous_sums, initial_checksums, time;
  std::vector<std::int64_t> counters, mesh_history;
  std::int64_t history_width = 1;

  std::uint64_t hash() const {
    std::uint64_t h = 0x636b7074ull;  // "ckpt"
    for (const auto* v : {&objects, &previous_sums, &initial_checksums, &time})
      h = values_hash<double>(h, *v);
    for (const auto* v : {&counters, &mesh_history}) h = values_hash<std::int64_t>(h, *v);
    return h;
  }
};

StateRows state_rows(const RunPoint& p, int levels) {
  StateRows s;
  for (const Object& o : p.objects) {
    s.objects.push_back(o.type);
    s.objects.push_back(o.bounce);
    for (const auto* a : {&o.center, &o.move, &o.size, &o.inc})
      s.objects.insert(s.objects.end(), a->begin(), a->end());
  }
  s.previous_sums = p.previous_sums;
  s.initial_checksums = p.stats.initial_checksums;
  s.time = {p.sim_time, p.delta};
  const RunStats& st = p.stats;
  s.counters = {p.timestep,         p.calc_stage,       st.stages_done,
                st.block_stage_sum, st.refine_steps,    st.blocks_split,
                st.blocks_reformed, st.closure_rounds,  st.closure_changes_sent,
                st.load_balances,   st.blocks_moved_lb, st.blocks_moved_coarsen};
  s.history_width = 1 + levels;
  for (const auto& m : st.mesh_history) {
    s.mesh_history.push_back(m.timestep);
    for (int l = 0; l < levels; ++l)
      s.mesh_history.push_back(
          std::size_t(l) < m.blocks_per_level.size() ? m.blocks_per_level[std::size_t(l)] : 0);
  }
  return s;
}

RunPoint run_point(const StateRows& s) {
  RunPoint p;
  for (std::size_t i = 0; i + kObjectWidth <= s.objects.size(); i += kObjectWidth) {
    Object o;
    o.type = int(s.objects[i]);
    o.bounce = int(s.objects[i + 1]);
    std::size_t at = i + 2;
    for (auto* a : {&o.center, &o.move, &o.size, &o.inc})
      for (double& x : *a) x = s.objects[at++];
    p.objects.push_back(o);
  }
  p.previous_sums = s.previous_sums;
  p.stats.initial_checksums = s.initial_checksums;
  p.sim_time = s.time.at(0);
  p.delta = s.time.at(1);
  const auto& c = s.counters;
  p.timestep = int(c.at(0));
  p.calc_stage = c.at(1);
  RunStats& st = p.stats;
  st.timesteps_done = p.timestep;
  st.sim_time = p.sim_time;
  st.stages_done = c.at(2);
  st.block_stage_sum = c.at(3);
  st.refine_steps = c.at(4);
  st.blocks_split = c.at(5);
  st.blocks_reformed = c.at(6);
  st.closure_rounds = c.at(7);
  st.closure_changes_sent = c.at(8);
  st.load_balances = c.at(9);
  st.blocks_moved_lb = c.at(10);
  st.blocks_moved_coarsen = c.at(11);
  const auto w = std::size_t(s.history_width);
  for (std::size_t i = 0; i + w <= s.mesh_history.size(); i += w) {
    RunStats::MeshSnapshot m;
    m.timestep = int(s.mesh_history[i]);
    m.blocks_per_level.assign(s.mesh_history.begin() + std::ptrdiff_t(i + 1),
                              s.mesh_history.begin() + std::ptrdiff_t(i + w));
    st.mesh_history.push_back(std::move(m));
  }
  return p;
}

std::string var_name(int v) {
  return fmt::format("fields/var{:04d}", v);
}

// Checkpoints in `dir` by timestep (complete ones only: temporary files have another name).
std::map<int, std::string> checkpoints_in(const std::string& dir) {
  std::map<int, std::string> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const auto ts =
        io::numbered_name(e.path().filename().string(), "checkpoint.", ".h5", /*min_digits=*/6);
    if (ts && e.is_regular_file(ec)) found.emplace(*ts, e.path().string());
  }
  return found;
}

// The run that wrote the checkpoint at `path` ("" when it cannot be read or names none).
std::string run_of(const std::string& path) {
  try {
    const h5::File f = h5::File::open(path, MPI_COMM_SELF);
    return f.text_attribute("run_id");
  } catch (const h5::Error&) {
    return {};
  }
}

// Removes this run's oldest checkpoints in `dir` beyond the newest `keep`; files of other runs
// stay, whatever their age.
void prune_own(const std::string& dir, int keep, const std::string& me) {
  std::vector<std::string> own;  // oldest first
  for (const auto& [ts, path] : checkpoints_in(dir))
    if (run_of(path) == me) own.push_back(path);
  std::error_code ec;
  for (std::size_t i = 0; i + std::size_t(keep) < own.size(); ++i) fs::remove(own[i], ec);
}

// "12.5 MiB", "1.0 KiB": sizes in messages, in the unit that shows them.
std::string size_text(double bytes) {
  static constexpr std::array<std::string_view, 5> kUnits{"bytes", "KiB", "MiB", "GiB", "TiB"};
  std::size_t u = 0;
  while (u + 1 < kUnits.size() && bytes >= 1024.0) {
    bytes /= 1024.0;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f} bytes", bytes) : fmt::format("{:.1f} {}", bytes, kUnits[u]);
}

// What HDF5 adds to the data: superblock, object headers, attributes (measured: under 40 KiB
// for 40 variables).
constexpr double kMetadataBytes = 256 * 1024;

// Throws RunError when `bytes` more do not fit in `dir`: its file system's free space, or the
// process's file-size limit (ulimit -f).
void check_room(const std::string& dir, double bytes, int ts) {
  struct statvfs fs {};
  if (::statvfs(dir.c_str(), &fs) == 0) {
    const double free_bytes = double(fs.f_bavail) * double(fs.f_frsize);
    if (bytes > free_bytes)
      throw RunError(fmt::format(
          "the checkpoint at timestep {} needs about {}, but {} has {} free; the checkpoints "
          "already written are kept",
          ts, size_text(bytes), io::shown(dir, 200), size_text(free_bytes)));
  }
  rlimit limit{};
  if (::getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
      bytes > double(limit.rlim_cur))
    throw RunError(fmt::format(
        "the checkpoint at timestep {} needs about {}, more than this process's file size limit "
        "of {} (ulimit -f); the checkpoints already written are kept",
        ts, size_text(bytes), size_text(double(limit.rlim_cur))));
}

// The test suite's way to kill a run in the middle of writing a checkpoint: after the
// temporary file of the checkpoint at this timestep is written, before its rename.
bool killed_here(int ts) {
  const char* at = std::getenv("MINIAMR_TEST_KILL_IN_CHECKPOINT");
  return at != nullptr && std::atoi(at) == ts;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> numerics_of(const Config& c) {
  const auto roots = c.root_blocks();
  std::vector<std::pair<std::string, std::string>> n = {
      {"root blocks (npx*init_x, npy*init_y, npz*init_z)",
       fmt::format("{}x{}x{}", roots[0], roots[1], roots[2])},
      {"nx", std::to_string(c.nx)},
      {"ny", std::to_string(c.ny)},
      {"nz", std::to_string(c.nz)},
      {"num_vars", std::to_string(c.num_vars)},
      {"comm_vars", std::to_string(c.effective_comm_vars())},
      {"stencil", std::to_string(c.stencil)},
      {"stages_per_ts", std::to_string(c.stages_per_ts)},
      {"num_refine", std::to_string(c.num_refine)},
      {"block_change", std::to_string(c.effective_block_change())},
      {"uniform_refine", std::to_string(c.uniform_refine)},
      {"refine_freq", std::to_string(c.refine_freq)},
      {"refine_ghost", std::to_string(int(c.refine_ghost))},
      {"time", c.time_given ? exact(c.time) : "unset"},
  };
  // With --time and --num_tsteps the step is time / num_tsteps: then the count is numerics too.
  if (c.time_given && c.num_tsteps_given)
    n.emplace_back("num_tsteps", std::to_string(c.num_tsteps));
  std::string objects;
  for (const Object& o : c.objects) {
    objects += fmt::format("{} {}", o.type, o.bounce);
    for (const auto* a : {&o.center, &o.move, &o.size, &o.inc})
      for (double x : *a) objects += fmt::format(" {:a}", x);
    objects += ";";
  }
  n.emplace_back("object", objects);
  return n;
}

std::string checkpoint_path(const std::string& dir, int ts) {
  return (fs::path(dir) / fmt::format("checkpoint.{:06d}.h5", ts)).string();
}

io::FolderLock lock_checkpoint_dir(const Config& config, MPI_Comm comm) {
  io::FolderLock lock;
  all_or_none(comm, "locking the checkpoint folder", [&] {
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    if (rank != 0 || config.checkpoint_freq <= 0) return;
    if (const std::string why = lock.acquire(config.checkpoint_dir); !why.empty())
      throw UsageError(fmt::format(
          "--checkpoint_dir {}: {}; runs sharing a folder would publish over each other's "
          "checkpoints: give each run a folder of its own",
          io::shown(config.checkpoint_dir, 200), why));
  });
  return lock;
}

void write_checkpoint(const Config& config, const comm::Communicator& comm,
                      const mesh::Domain& domain, const RunPoint& point) {
  const std::string final_path = checkpoint_path(config.checkpoint_dir, point.timestep);
  const auto n = std::int64_t(domain.leaves.size());
  const std::vector<std::int64_t> counts = comm.allgather(n);
  std::int64_t first = 0, total = 0;
  for (int r = 0; r < comm.size(); ++r) {
    if (r < comm.rank()) first += counts[std::size_t(r)];
    total += counts[std::size_t(r)];
  }
  std::uint64_t local = 0;
  for (std::size_t b = 0; b < domain.blocks.size(); ++b)
    local += block_hash(domain.leaves[b], domain.blocks[b], domain.cost[b]);
  std::uint64_t digest = 0;
  MPI_Allreduce(&local, &digest, 1, MPI_UINT64_T, MPI_SUM, comm.get());
  const StateRows state = state_rows(point, config.num_refine + 1);
  digest += state.hash();

  // Room first: HDF5 1.10 cannot recover from a write that fails for want of space (its clean-up
  // at MPI_Finalize then crashes), so a checkpoint that cannot fit is refused before it starts.
  const double bytes =
      double(total) * (4.0 * 8 + 8 + double(domain.shape.cells()) * domain.shape.num_vars * 8) +
      double(state.objects.size() + state.previous_sums.size() + state.initial_checksums.size() +
             state.time.size() + state.counters.size() + state.mesh_history.size()) *
          8 +
      kMetadataBytes;
  all_or_none(comm.get(), "checking the room for a checkpoint", [&] {
    if (comm.is_root()) check_room(config.checkpoint_dir, bytes, point.timestep);
  });

  // Rank 0 makes the temporary file (a random name, O_EXCL | O_NOFOLLOW) and every rank writes
  // into it: a file or link planted in the folder is never written through.
  const std::string temp_path = text_from_root(comm.get(), [&] {
    io::TemporaryFile temp = io::create_temporary(final_path);
    if (temp.fd < 0)
      throw RunError(fmt::format("cannot create a temporary file for the checkpoint {}: {}",
                                 io::shown(final_path, 200),
                                 std::generic_category().message(temp.error)));
    ::close(temp.fd);
    return temp.path.string();
  });
  // Every rank holds the same text: rank 0's identity names the run.
  const std::string me = text_from_root(comm.get(), [] { return run_identity(); });

  std::string failure;
  try {
    h5::File f = h5::File::create(temp_path, comm.get());
    std::vector<std::int64_t> keys;
    keys.reserve(std::size_t(n) * 4);
    for (const octree::Key& k : domain.leaves.keys())
      keys.insert(keys.end(), {std::int64_t(k.level), std::int64_t(k.x[0]), std::int64_t(k.x[1]),
                               std::int64_t(k.x[2])});
    f.write_rows<std::int64_t>("mesh/keys", keys, first, total, 4);
    f.write_rows<double>("mesh/cost", domain.cost, first, total);
    // One variable at a time: the staging copy is 1/num_vars of the blocks.
    const auto cells = std::int64_t(domain.shape.cells());
    std::vector<double> values;
    for (int v = 0; v < domain.shape.num_vars; ++v) {
      values.clear();
      values.reserve(std::size_t(n * cells));
      for (const stencil::Block& b : domain.blocks)
        values.insert(values.end(), b.var(v).begin(), b.var(v).end());
      f.write_rows<double>(var_name(v), values, first, total, cells);
    }
    // Every rank holds the same state: rank 0 writes it.
    const bool root = comm.is_root();
    const auto replicated = [&]<class T>(const std::string& name, const std::vector<T>& rows,
                                         std::int64_t width) {
      const std::span<const T> mine = root ? std::span<const T>(rows) : std::span<const T>();
      f.write_rows<T>(name, mine, 0, std::int64_t(rows.size()) / width, width);
    };
    replicated("state/objects", state.objects, kObjectWidth);
    replicated("state/previous_sums", state.previous_sums, 1);
    replicated("state/initial_checksums", state.initial_checksums, 1);
    replicated("state/time", state.time, 1);
    replicated("state/counters", state.counters, 1);
    replicated("state/mesh_history", state.mesh_history, state.history_width);
    const BuildInfo build = build_info();
    Header header;
    header.format = kFormat;
    header.format_version = kFormatVersion;
    header.program_version = build.version;
    header.git_revision = build.git_revision;
    header.timestep = point.timestep;
    header.blocks = total;
    header.ranks = comm.size();
    header.runtime = config.runtime;
    header.numerics = numerics_text(config);
    header.command_line = "miniamr";
    for (const std::string& a : config.command_line)
      header.command_line += " " + io::shell_quoted(a);
    header.run_id = me;
    header.history_width = state.history_width;
    header.write(f);
    f.set_attribute("digest", std::bit_cast<std::int64_t>(digest + header.hash()));
    f.close();
  } catch (const std::exception& e) {
    failure = e.what();
  }
  // Every rank learns whether any failed before the file gets its final name.
  all_or_none(comm.get(), fmt::format("writing the checkpoint at timestep {}", point.timestep),
              [&] {
                if (failure.empty()) return;
                std::error_code ec;  // no half-written checkpoint is left behind
                if (comm.is_root()) fs::remove(temp_path, ec);
                throw RunError(failure);
              });
  if (killed_here(point.timestep) && comm.is_root()) std::raise(SIGKILL);
  all_or_none(comm.get(), "naming the checkpoint", [&] {
    if (!comm.is_root()) return;
    if (const std::string why = io::sync_and_rename(temp_path, final_path); !why.empty()) {
      std::error_code ec;
      fs::remove(temp_path, ec);
      throw RunError(
          fmt::format("cannot publish the checkpoint {}: {}", io::shown(final_path, 200), why));
    }
    // The oldest of this run's beyond --checkpoint_keep go, never the one just written.
    prune_own(config.checkpoint_dir, config.checkpoint_keep, me);
  });
}

namespace {

// A file that cannot be this run's checkpoint (damaged, incomplete, foreign, other numerics):
// --restart DIR goes on to an older one. Thrown alike on every rank.
struct Unusable : UsageError {
  using UsageError::UsageError;
};

// The files --restart names, newest first: the file itself, or a folder's checkpoints.
// Collective (rank 0 looks; every rank gets the list or the same error).
std::vector<std::string> restart_candidates(const std::string& spec, MPI_Comm comm) {
  const std::string listed = text_from_root(comm, [&] {
    const std::string shown = io::shown(spec, 200);
    struct stat st {};
    if (::stat(spec.c_str(), &st) != 0)
      throw UsageError(fmt::format("--restart {}: {}", shown,
                                   errno == ENOENT ? std::string("no such file or folder")
                                                   : std::generic_category().message(errno)));
    if (S_ISDIR(st.st_mode)) {
      const auto all = checkpoints_in(spec);
      if (all.empty())
        throw UsageError(fmt::format(
            "--restart {}: no complete checkpoint (checkpoint.NNNNNN.h5) in that folder", shown));
      std::string text;  // newest first, one per line (names of the pattern hold no newline)
      for (auto it = all.rbegin(); it != all.rend(); ++it) text += it->second + "\n";
      return text;
    }
    // A FIFO or a device would block the parallel open, or stream forever.
    if (!S_ISREG(st.st_mode))
      throw UsageError(fmt::format(
          "--restart {}: not a regular file or folder (a pipe, device or socket); a checkpoint "
          "is an HDF5 file written by --checkpoint_freq",
          shown));
    return spec + "\n";
  });
  std::vector<std::string> paths;
  std::string_view rest = listed;
  while (!rest.empty()) {
    const auto nl = rest.find('\n');
    paths.emplace_back(rest.substr(0, nl));
    rest.remove_prefix(nl + 1);
  }
  return paths;
}

// Why `words` (level, x, y, z per block) cannot be the leaves of this run's mesh: a level
// outside 0..num_refine, a block outside the root grid or off its level's lattice, a block given
// twice or inside another, or leaves that do not cover the domain. "" when they can.
std::string mesh_problem(std::span<const std::int64_t> words, const octree::RootGrid& grid,
                         int max_level, std::vector<octree::Key>& sorted) {
  sorted.clear();
  sorted.reserve(words.size() / 4);
  __extension__ typedef unsigned __int128 Volume;
  Volume volume = 0;
  for (std::size_t i = 0; i + 4 <= words.size(); i += 4) {
    const std::int64_t level = words[i];
    if (level < 0 || level > max_level)
      return fmt::format("a block at level {}, outside 0..{} (num_refine)", level, max_level);
    octree::Key k;
    k.level = std::int8_t(level);
    for (int d = 0; d < 3; ++d) {
      const std::int64_t x = words[i + 1 + std::size_t(d)];
      const auto side = std::int64_t(octree::side(k.level));
      if (x < 0 || std::uint64_t(x) >= grid.extent(d) || x % side != 0)
        return fmt::format("a block at level {} has the coordinate {}, off the mesh", level, x);
      k.x[std::size_t(d)] = octree::Coord(x);
    }
    sorted.push_back(k);
    volume += Volume{1} << (3 * (max_level - level));
  }
  std::sort(sorted.begin(), sorted.end(), octree::MortonLess{});
  // Morton order puts a block right before its descendants: overlaps are adjacent.
  for (std::size_t i = 1; i < sorted.size(); ++i)
    if (octree::contains(sorted[i - 1], sorted[i])) return "two blocks overlap";
  const Volume roots = Volume(grid.n[0]) * Volume(grid.n[1]) * Volume(grid.n[2]);
  if (volume != roots << (3 * max_level)) return "the blocks do not cover the domain";
  return {};
}

}  // namespace

RunPoint read_checkpoint(const std::string& path, const Config& config,
                         const comm::Communicator& comm, sfc::Curve ownership,
                         mesh::Domain& domain) {
  const std::string shown = io::shown(path, 200);
  const auto refuse = [&](std::string_view why) {
    return Unusable(fmt::format("--restart {}: {}", shown, why));
  };
  try {
    const h5::File f = h5::File::open(path, comm.get());
    if (!f.has("mesh/keys") || f.text_attribute("format") != kFormat)
      throw refuse("not a miniamr checkpoint");
    if (const auto v = f.int_attribute("format_version"); v != kFormatVersion)
      throw refuse(
          fmt::format("checkpoint format {}, this miniamr reads format {}", v, kFormatVersion));
    // The attributes are checked before any is believed: a damaged byte in the options is
    // damage, not options that differ.
    const Header header = Header::read(f);
    if (std::bit_cast<std::int64_t>(header.hash()) != f.int_attribute("header_digest"))
      throw refuse("its attributes do not match their checksum (a damaged file)");
    if (header.program_version != build_info().version)
      throw refuse(fmt::format("written by miniamr {}, this is miniamr {}",
                               io::printable(header.program_version), build_info().version));
    // Options that change the numbers must be those of the checkpointed run.
    const auto then = numerics_map(header.numerics);
    std::vector<std::string> differ;
    for (const auto& [name, value] : numerics_of(config)) {
      const auto it = then.find(name);
      if (it == then.end() || it->second != value) differ.push_back(name);
    }
    if (!differ.empty()) {
      std::string names;
      for (const auto& d : differ) names += (names.empty() ? "" : ", ") + d;
      throw refuse(fmt::format(
          "these options change the numerics and differ from the checkpointed run's: {} (its "
          "command line: {})",
          names, io::shown(header.command_line, 400)));
    }
    const int timestep = int(header.timestep);
    if (config.num_tsteps_given && !config.time_given && config.num_tsteps <= timestep)
      // Not the file's fault: an older checkpoint would not be what was asked for either.
      throw UsageError(
          config.num_tsteps == timestep
              ? fmt::format("--restart {}: the checkpoint is at timestep {}, the last of "
                            "--num_tsteps {}: the run is complete and nothing is left to run "
                            "(a larger --num_tsteps continues it)",
                            shown, timestep, config.num_tsteps)
              : fmt::format("--restart {}: the checkpoint is at timestep {}, past the end of "
                            "--num_tsteps {} (a --num_tsteps above {} continues it)",
                            shown, timestep, config.num_tsteps, timestep));
    if (header.history_width != 1 + (config.num_refine + 1))  // (timestep, blocks per level)
      throw refuse("its mesh history does not have this run's levels");

    // Every rank reads all keys (16 bytes a block) and takes an even cut of the ownership curve.
    const std::int64_t total = header.blocks;
    if (total < 1 || f.rows("mesh/keys") != total)
      throw refuse("the block count does not match the mesh");
    const auto words = f.read_rows<std::int64_t>("mesh/keys", 0, total, 4);
    domain.grid = octree::RootGrid{config.root_blocks()};
    domain.shape = config.block_shape();
    std::vector<octree::Key> sorted;
    if (const std::string why = mesh_problem(words, domain.grid, config.num_refine, sorted);
        !why.empty())
      throw refuse(fmt::format("its mesh is not one this run can have: {}", why));
    // (file rows in Morton order of their keys)
    std::vector<std::pair<octree::Key, std::int64_t>> keyed;  // (key, row in the file)
    keyed.reserve(std::size_t(total));
    for (std::int64_t r = 0; r < total; ++r) {
      octree::Key k;
      k.level = std::int8_t(words[std::size_t(4 * r)]);
      for (int d = 0; d < 3; ++d)
        k.x[std::size_t(d)] = octree::Coord(words[std::size_t(4 * r + 1 + d)]);
      keyed.emplace_back(k, r);
    }
    std::sort(keyed.begin(), keyed.end(),
              [](const auto& a, const auto& b) { return octree::MortonLess{}(a.first, b.first); });
    const octree::LeafSet all(std::move(sorted));
    const auto order = sfc::curve_order(all, sfc::CurveSpace::make(ownership, domain.grid));
    const std::vector<std::int64_t> ones(all.size(), 1);
    const auto target = sfc::cut(ones, 0, total, comm.size());
    std::vector<std::size_t> mine;  // Morton positions of this rank's blocks
    for (std::size_t p = 0; p < order.size(); ++p)
      if (target[p] == comm.rank()) mine.push_back(order[p]);
    std::sort(mine.begin(), mine.end());
    // Rows ascending for the read; each block then goes to its Morton position.
    std::vector<std::pair<std::int64_t, std::size_t>> rows;  // (file row, index in mine)
    for (std::size_t i = 0; i < mine.size(); ++i) rows.emplace_back(keyed[mine[i]].second, i);
    std::sort(rows.begin(), rows.end());
    std::vector<std::int64_t> row_list;
    for (const auto& r : rows) row_list.push_back(r.first);

    std::vector<octree::Key> my_keys;
    for (const std::size_t p : mine) my_keys.push_back(all[p]);
    domain.leaves = octree::LeafSet(std::move(my_keys));
    domain.blocks.clear();
    domain.blocks.reserve(mine.size());
    for (std::size_t i = 0; i < mine.size(); ++i) domain.blocks.emplace_back(domain.shape);
    const auto cost = f.read_row_list<double>("mesh/cost", row_list);
    domain.cost.assign(mine.size(), 0.0);
    const auto cells = std::int64_t(domain.shape.cells());
    for (int v = 0; v < domain.shape.num_vars; ++v) {
      const auto values = f.read_row_list<double>(var_name(v), row_list, cells);
      for (std::size_t j = 0; j < rows.size(); ++j) {
        const auto src = values.begin() + std::ptrdiff_t(j * std::size_t(cells));
        std::copy(src, src + cells, domain.blocks[rows[j].second].var(v).begin());
        domain.cost[rows[j].second] = cost[j];
      }
    }

    StateRows state;
    const auto column = [&]<class T>(const std::string& name, std::int64_t width) {
      return f.read_rows<T>(name, 0, f.rows(name), width);
    };
    state.objects = column.template operator()<double>("state/objects", kObjectWidth);
    state.previous_sums = column.template operator()<double>("state/previous_sums", 1);
    state.initial_checksums = column.template operator()<double>("state/initial_checksums", 1);
    state.time = column.template operator()<double>("state/time", 1);
    state.counters = column.template operator()<std::int64_t>("state/counters", 1);
    state.history_width = header.history_width;
    state.mesh_history =
        column.template operator()<std::int64_t>("state/mesh_history", state.history_width);
    if (state.time.size() != 2 || state.counters.size() != 12 ||
        state.objects.size() != config.objects.size() * kObjectWidth ||
        int(state.previous_sums.size()) != config.num_vars)
      throw refuse("its state does not have the shape this run needs");

    std::uint64_t local = 0;
    for (std::size_t b = 0; b < domain.blocks.size(); ++b)
      local += block_hash(domain.leaves[b], domain.blocks[b], domain.cost[b]);
    std::uint64_t digest = 0;
    MPI_Allreduce(&local, &digest, 1, MPI_UINT64_T, MPI_SUM, comm.get());
    digest += state.hash() + header.hash();
    if (std::bit_cast<std::int64_t>(digest) != f.int_attribute("digest"))
      throw refuse("its contents do not match their checksum (a damaged file)");
    RunPoint point = run_point(state);
    if (point.timestep != timestep) throw refuse("its timestep and its state disagree");
    if (config.time_given && !config.num_tsteps_given && point.sim_time >= config.time)
      throw UsageError(fmt::format(
          "--restart {}: the checkpoint is at time {:g}, at or past --time {:g}: nothing is left "
          "to run (a larger --time continues it)",
          shown, point.sim_time, config.time));
    return point;
  } catch (const h5::Error& e) {
    throw refuse(e.what());
  }
}

RunPoint restart(const Config& config, const comm::Communicator& comm, sfc::Curve ownership,
                 mesh::Domain& domain, std::FILE* out) {
  const std::vector<std::string> candidates = restart_candidates(config.restart_path, comm.get());
  std::optional<Unusable> newest;  // the reason given when no candidate can be used
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const std::string& path = candidates[i];
    try {
      RunPoint point = read_checkpoint(path, config, comm, ownership, domain);
      if (comm.is_root() && out != nullptr && config.verbosity != Verbosity::kQuiet)
        fmt::print(out, "Restarting from {} (timestep {}){}\n", io::printable(path), point.timestep,
                   i > 0 ? ", the newest usable checkpoint in the folder" : "");
      return point;
    } catch (const Unusable& e) {
      if (!newest) newest = e;
      // Said even with --quiet: the run goes on from an older state than the folder's newest.
      if (comm.is_root() && i + 1 < candidates.size())
        fmt::print(stderr, "miniamr: note: {}; trying the older {}\n", io::printable(e.what()),
                   io::shown(candidates[i + 1], 200));
    }
  }
  if (candidates.size() > 1)
    throw UsageError(fmt::format("{} (and no older checkpoint in {} can be used either)",
                                 newest->what(), io::shown(config.restart_path, 200)));
  throw UsageError(newest->what());
}

}  // namespace miniamr::app

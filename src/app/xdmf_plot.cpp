#include "app/xdmf_plot.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <regex>
#include <sstream>
#include <system_error>

#include <fmt/format.h>

#include "app/collective_error.hpp"
#include "app/errors.hpp"
#include "app/memory_budget.hpp"
#include "app/plot_files.hpp"
#include "app/root_io.hpp"
#include "h5/h5file.hpp"
#include "io/output_file.hpp"
#include "stencil/stencil_kernels.hpp"

namespace miniamr::app {

namespace fs = std::filesystem;
namespace L = xdmf_layout;

namespace {

// This rank's rows of every dataset, for its blocks in curve order.
struct BlockRows {
  std::vector<double> points;              // 8 corners x (x, y, z) per block
  std::vector<std::int64_t> hexahedra;     // 8 global point indices per block
  std::vector<std::int32_t> level, rank;   // one per block
  std::vector<std::uint32_t> key;          // x, y, z, level per block
  std::vector<std::vector<double>> means;  // per plotted variable, one per block
};

// Corner c of a block is (c&1, c&2, c&4) in VTK's hexahedron order: the lower face
// counter-clockwise, then the upper face.
constexpr std::array<std::array<int, 3>, 8> kCorners{
    {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}}};

BlockRows block_rows(const runtime::Domain& domain, int rank, std::int64_t first_block,
                     std::span<const int> vars) {
  const auto& keys = domain.leaves.keys();
  const std::size_t n = keys.size();
  BlockRows rows;
  rows.points.reserve(n * 24);
  rows.hexahedra.reserve(n * 8);
  rows.level.reserve(n);
  rows.rank.assign(n, rank);
  rows.key.reserve(n * 4);
  rows.means.assign(vars.size(), std::vector<double>(n));
  const double cells = double(domain.shape.interior_cells());
  for (std::size_t b = 0; b < n; ++b) {
    const octree::Key& k = keys[b];
    // The domain is the unit cube whatever the root grid: a coordinate over its extent.
    for (const auto& corner : kCorners)
      for (int d = 0; d < 3; ++d)
        rows.points.push_back(
            double(std::uint64_t(k.x[d]) + std::uint64_t(corner[d]) * octree::side(k.level)) /
            double(domain.grid.extent(d)));
    for (std::int64_t c = 0; c < 8; ++c)
      rows.hexahedra.push_back(8 * (first_block + std::int64_t(b)) + c);
    rows.level.push_back(k.level);
    rows.key.insert(rows.key.end(), {k.x[0], k.x[1], k.x[2], std::uint32_t(k.level)});
    for (std::size_t v = 0; v < vars.size(); ++v)
      rows.means[v][b] = stencil::interior_sum(domain.blocks[b], vars[v]) / cells;
  }
  return rows;
}

// A temporary name beside `path`, the same on every rank (rank 0 draws it), so that concurrent
// runs in one folder never share one.
std::string shared_temp_path(const std::string& path, MPI_Comm comm) {
  std::uint64_t draw = 0;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) draw = (std::uint64_t{std::random_device{}()} << 32) ^ std::uint64_t(::getpid());
  MPI_Bcast(&draw, 1, MPI_UINT64_T, 0, comm);
  const fs::path p(path);
  return (p.parent_path() / fmt::format(".{}.{:016x}.tmp", p.filename().string(), draw)).string();
}

// An h5::Error's message names the temporary file; the user knows the file by its final name.
std::string reason(const h5::Error& e, const std::string& temp) {
  std::string_view text = e.what();
  if (text.starts_with(temp) && text.substr(temp.size()).starts_with(": "))
    text.remove_prefix(temp.size() + 2);
  return std::string(text);
}

// The space reserved beyond the end of the file (no_room) is given back before it is published.
std::string trim_sync_and_rename(const std::string& temp, const std::string& path) {
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CLOEXEC);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0 || ::ftruncate(fd, st.st_size) != 0) {
    const std::string why = std::generic_category().message(errno);
    if (fd >= 0) ::close(fd);
    return fmt::format("cannot sync: {}", why);
  }
  ::close(fd);
  return io::sync_and_rename(temp, path);
}

// An upper bound of a step file's size: the datasets exactly, and room for HDF5's own records
// (superblock, groups, object headers, attributes: about 7 KiB in practice).
std::int64_t plot_file_bytes(std::int64_t blocks, std::size_t vars) {
  const std::int64_t per_block = 8 * 3 * 8 + 8 * 8 + 4 + 4 + 4 * 4 + std::int64_t(vars) * 8;
  return blocks * per_block + 64 * 1024 + std::int64_t(vars) * 2048;
}

// Why a file of `bytes` cannot be written here, or "". Collective: every rank checks its own
// file-size limit (each writes its own part of the file); rank 0 reserves the disk space of the
// file it has just created. HDF5 1.10 cannot close a file after a failed write without leaving
// a broken handle that crashes MPI_Finalize, so a full disk must be found before any write.
std::string no_room(const std::string& temp, std::int64_t bytes, bool root) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY &&
      rlim_t(bytes) > limit.rlim_cur)
    return fmt::format("it needs up to {}, more than the file-size limit of {} (ulimit -f)",
                       human_bytes(double(bytes)), human_bytes(double(limit.rlim_cur)));
  if (!root) return {};
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return fmt::format("cannot open it: {}", std::generic_category().message(errno));
  // Reserved without changing the size, so HDF5 still sees the file it wrote. File systems
  // without fallocate reserve nothing; their errors, if any, come from the writes.
  const int err = ::fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, off_t(bytes)) == 0 ? 0 : errno;
  ::close(fd);
  if (err != 0 && err != EOPNOTSUPP && err != ENOSYS)
    return fmt::format("no room for the up to {} it needs: {}", human_bytes(double(bytes)),
                       std::generic_category().message(err));
  return {};
}

}  // namespace

XdmfPlot::XdmfPlot(const Config& config) : config_(config), vars_(config.plot_variables()) {}

void XdmfPlot::write(const runtime::Domain& domain, const runtime::Communicator& comm, int timestep,
                     double time) {
  const MPI_Comm c = comm.get();
  const std::int64_t mine = std::int64_t(domain.leaves.size());
  // Ranks own consecutive stretches of the curve, so rank r's rows start after the blocks of
  // ranks 0..r-1.
  const auto [first, total] = comm.prefix_sum(mine);
  const BlockRows rows = block_rows(domain, comm.rank(), first, vars_);

  const std::string name = plot_file_name(config_, timestep) + ".h5";
  const std::string path = in_plot_dir(config_, name);
  const std::string temp = shared_temp_path(path, c);
  const auto failure = [&path](std::string_view why) {
    return RunError(fmt::format("cannot write plot file '{}': {}", path, why));
  };
  const auto discard_temp = [&] {
    std::error_code ec;
    if (comm.is_root()) fs::remove(temp, ec);
  };
  std::optional<h5::File> file;
  all_or_none(c, "creating a plot file", [&] {
    try {
      file.emplace(h5::File::create(temp, c));
    } catch (const h5::Error& e) {
      throw failure(reason(e, temp));
    }
  });
  try {
    all_or_none(c, "writing a plot file", [&] {
      if (const std::string why =
              no_room(temp, plot_file_bytes(total, vars_.size()), comm.is_root());
          !why.empty())
        throw failure(why);
    });
  } catch (...) {
    try {
      file->close();  // only HDF5's few records of an empty file to write
    } catch (const h5::Error&) {
      // The failure already being reported is the one the user needs.
    }
    discard_temp();
    throw;
  }
  // Every rank makes every collective call even after one of its own failed (a write that met a
  // full disk on this rank only), so no rank waits in a call the others have left; the first
  // failure is kept and every rank learns of it below.
  std::string why;
  const auto attempt = [&](const std::function<void()>& step) {
    try {
      step();
    } catch (const h5::Error& e) {
      if (why.empty()) why = reason(e, temp);
    }
  };
  attempt([&] {
    file->write_rows<double>(std::string(L::kPoints), rows.points, 8 * first, 8 * total, 3);
  });
  attempt([&] {
    file->write_rows<std::int64_t>(std::string(L::kHexahedra), rows.hexahedra, first, total, 8);
  });
  attempt(
      [&] { file->write_rows<std::int32_t>(std::string(L::kLevel), rows.level, first, total); });
  attempt([&] { file->write_rows<std::int32_t>(std::string(L::kRank), rows.rank, first, total); });
  attempt(
      [&] { file->write_rows<std::uint32_t>(std::string(L::kKey), rows.key, first, total, 4); });
  for (std::size_t v = 0; v < vars_.size(); ++v)
    attempt(
        [&] { file->write_rows<double>(L::mean_dataset(vars_[v]), rows.means[v], first, total); });
  attempt([&] {
    file->set_attribute("program", "miniamr");
    file->set_attribute("timestep", std::int64_t{timestep});
    file->set_attribute("time", time);
  });
  attempt([&] { file->close(); });
  file.reset();

  try {
    all_or_none(c, "writing a plot file", [&] {
      if (!why.empty()) throw failure(why);
    });
    all_or_none(c, "writing a plot file", [&] {
      if (!comm.is_root()) return;
      if (const std::string err = trim_sync_and_rename(temp, path); !err.empty())
        throw failure(err);
    });
  } catch (...) {
    discard_temp();
    throw;
  }
  steps_.push_back({timestep, time, name, total});
  write_on_root(c, xdmf_index_path(config_),
                comm.is_root() ? xdmf_index_text(steps_, vars_) : std::string(), "plot index");
}

void XdmfPlot::resume(const runtime::Communicator& comm, int timestep) {
  // The first part may have named its files with fewer digits (the width follows --num_tsteps):
  // rank 0 lists the step files up to `timestep`, in timestep order, and every rank opens them.
  const std::string listed = text_from_root(comm.get(), [&] {
    static const std::regex step_file(R"(plot\.(\d+)\.h5)");
    std::map<int, std::string> found;
    std::error_code ec;
    const std::filesystem::path dir = config_.plot_dir.empty() ? "." : config_.plot_dir;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
      std::smatch m;
      const std::string file = e.path().filename().string();
      if (!std::regex_match(file, m, step_file)) continue;
      const int ts = std::atoi(m[1].str().c_str());
      if (ts <= timestep && (ts == 0 || ts % config_.plot_freq == 0)) found[ts] = file;
    }
    std::string text;
    for (const auto& [ts, file] : found) text += fmt::format("{} {}\n", ts, file);
    return text;
  });
  steps_.clear();
  std::istringstream lines(listed);
  int ts = 0;
  std::string name;
  while (lines >> ts >> name) {
    try {
      const h5::File f = h5::File::open(in_plot_dir(config_, name), comm.get());
      steps_.push_back({ts, f.real_attribute("time"), name, f.rows(std::string(L::kLevel))});
    } catch (const h5::Error&) {
      // Not a whole step file (a damaged or foreign one): the index leaves it out.
    }
  }
}

}  // namespace miniamr::app

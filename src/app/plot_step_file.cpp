#include "app/plot_step_file.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <system_error>

#include <fmt/format.h>

#include "app/collective_error.hpp"
#include "app/errors.hpp"
#include "app/memory_budget.hpp"
#include "app/plot_files.hpp"
#include "app/root_io.hpp"
#include "io/numbered_name.hpp"
#include "io/output_file.hpp"

namespace miniamr::app {

namespace fs = std::filesystem;

namespace {

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

void write_plot_step(const comm::Communicator& comm, const std::string& path,
                     std::int64_t bytes_bound,
                     const std::function<void(h5::File& file, const Attempt& attempt)>& fill) {
  const MPI_Comm c = comm.get();
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
      if (const std::string why = no_room(temp, bytes_bound, comm.is_root()); !why.empty())
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
  // The first failure is kept and every rank learns of it below.
  std::string why;
  const Attempt attempt = [&](const std::function<void()>& step) {
    try {
      step();
    } catch (const h5::Error& e) {
      if (why.empty()) why = reason(e, temp);
    }
  };
  fill(*file, attempt);
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
}

std::vector<std::pair<int, std::string>> plotted_steps(const comm::Communicator& comm,
                                                       const Config& config, int timestep,
                                                       const std::string& suffix) {
  // The first part may have named its files with fewer digits (the width follows --num_tsteps).
  const std::string listed = text_from_root(comm.get(), [&] {
    std::map<int, std::string> found;
    std::error_code ec;
    const fs::path dir = config.plot_dir.empty() ? "." : config.plot_dir;
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      const std::string file = e.path().filename().string();
      const auto ts = io::numbered_name(file, "plot.", suffix);
      if (ts && *ts <= timestep && (*ts == 0 || *ts % config.plot_freq == 0)) found[*ts] = file;
    }
    std::string text;
    for (const auto& [ts, file] : found) text += fmt::format("{} {}\n", ts, file);
    return text;
  });
  std::vector<std::pair<int, std::string>> steps;
  std::istringstream lines(listed);
  int ts = 0;
  std::string name;
  while (lines >> ts >> name) steps.emplace_back(ts, name);
  return steps;
}

}  // namespace miniamr::app

#include "io/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <system_error>

#include <fmt/format.h>

namespace miniamr::io {

namespace fs = std::filesystem;

namespace {

std::string system_reason(int err) {
  return std::generic_category().message(err);
}

// A symbolic link at the target is followed: replacing the link would cut it.
fs::path resolved_target(const fs::path& p) {
  std::error_code ec;
  if (!fs::is_symlink(fs::symlink_status(p, ec))) return p;
  const fs::path r = fs::weakly_canonical(p, ec);
  return ec ? p : r;
}

}  // namespace

std::string unwritable_reason(const std::string& path) {
  if (path.empty()) return "the file name is empty";
  const fs::path p = resolved_target(fs::path(path));
  if (!p.has_filename()) return fmt::format("'{}' names a folder, not a file", path);
  std::error_code ec;
  const fs::file_status st = fs::status(p, ec);
  // Anything but a regular file (a folder, a device, a pipe) must not be replaced by a rename.
  if (fs::is_directory(st)) return fmt::format("'{}' is a folder", path);
  if (fs::exists(st) && !fs::is_regular_file(st))
    return fmt::format("'{}' exists and is not a regular file", path);
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::exists(dir, ec)) return fmt::format("the folder '{}' does not exist", dir.string());
  if (!fs::is_directory(dir, ec)) return fmt::format("'{}' is not a folder", dir.string());
  // The file is written under a temporary name in the folder, so the folder itself must be
  // writable, even to replace an existing file.
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    return fmt::format("the folder '{}': {}", dir.string(), system_reason(errno));
  return {};
}

bool OutputFile::open(const std::string& path) {
  discard();
  error_.clear();
  if (std::string why = unwritable_reason(path); !why.empty()) {
    error_ = std::move(why);
    return false;
  }
  target_ = resolved_target(fs::path(path));
  TemporaryFile temp = create_temporary(target_);
  if (temp.fd < 0) {
    fail("cannot create a temporary file in the folder of", temp.error);
    return false;
  }
  temp_ = std::move(temp.path);
  fd_ = temp.fd;
  return true;
}

void OutputFile::put(std::string_view text) {
  while (fd_ >= 0 && error_.empty() && !text.empty()) {
    const ssize_t n = ::write(fd_, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      fail("cannot write", n < 0 ? errno : ENOSPC);
      return;
    }
    text.remove_prefix(std::size_t(n));
  }
}

bool OutputFile::commit() {
  if (fd_ < 0) {
    if (error_.empty()) error_ = "no file is open";
    return false;
  }
  if (error_.empty() && ::fsync(fd_) != 0) fail("cannot sync", errno);
  if (::close(fd_) != 0 && error_.empty()) fail("cannot close", errno);
  fd_ = -1;
  std::error_code ec;
  if (error_.empty()) {
    fs::rename(temp_, target_, ec);
    if (ec) fail("cannot rename the temporary file over", ec.value());
  }
  if (!error_.empty()) {
    discard();
    return false;
  }
  temp_.clear();
  return true;
}

void OutputFile::fail(std::string_view what, int err) {
  if (error_.empty())
    error_ = fmt::format("{} '{}': {}", what, target_.string(), system_reason(err));
}

void OutputFile::discard() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  std::error_code ec;
  if (!temp_.empty()) fs::remove(temp_, ec);
  temp_.clear();
}

TemporaryFile create_temporary(const fs::path& target) {
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  // A random name per writer, so concurrent runs in one folder never share a temporary file;
  // O_EXCL | O_NOFOLLOW so a planted file or link at that name is never written through.
  std::random_device seed;
  std::mt19937_64 gen((std::uint64_t{seed()} << 32) ^ std::uint64_t(::getpid()));
  TemporaryFile t;
  for (int attempt = 0; attempt < 16; ++attempt) {
    t.path = dir / fmt::format(".{}.{}.{:016x}.tmp", target.filename().string(), ::getpid(), gen());
    // 0666 and the umask, as for any new file (mkstemp would force 0600).
    t.fd = ::open(t.path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (t.fd >= 0) return t;
    t.error = errno;
    if (t.error != EEXIST) break;
  }
  t.path.clear();
  return t;
}

std::string write_file_atomically(const std::string& path, std::string_view text) {
  OutputFile file;
  if (file.open(path)) {
    file.put(text);
    if (file.commit()) return {};
  }
  return file.error();
}

std::string sync_and_rename(const std::string& temp, const std::string& path) {
  const int fd = ::open(temp.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::fsync(fd) != 0) {
    const std::string why = std::generic_category().message(errno);
    if (fd >= 0) ::close(fd);
    return fmt::format("cannot sync: {}", why);
  }
  ::close(fd);
  std::error_code ec;
  fs::rename(temp, path, ec);
  if (ec) return fmt::format("cannot rename the temporary file: {}", ec.message());
  // The rename itself reaches the disk with the folder's entry.
  const fs::path folder = fs::path(path).has_parent_path() ? fs::path(path).parent_path() : ".";
  if (const int dir = ::open(folder.c_str(), O_RDONLY | O_CLOEXEC); dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
  return "";
}

}  // namespace miniamr::io

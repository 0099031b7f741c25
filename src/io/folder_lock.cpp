#include "io/folder_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <string_view>
#include <system_error>

#include <fmt/format.h>

#include "io/printable.hpp"

namespace miniamr::io {

namespace {

std::string system_reason(int err) {
  return std::generic_category().message(err);
}

std::string host_name() {
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 ? std::string(name) : std::string("?");
}

// What the holder wrote into the lock file ("process 123 on node7"), "" when nothing readable.
std::string holder(int fd) {
  char text[200] = {};
  const ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
  if (n <= 0) return {};
  std::string_view line(text, std::size_t(n));
  line = line.substr(0, line.find('\n'));
  return printable(line);
}

}  // namespace

FolderLock& FolderLock::operator=(FolderLock&& other) noexcept {
  if (this != &other) {
    release();
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

std::string FolderLock::acquire(const std::string& folder) {
  release();
  const std::string path = (std::filesystem::path(folder) / kFileName).string();
  // O_NOFOLLOW and O_NONBLOCK: a link or a FIFO planted at the name is refused, never followed
  // or waited on; the type is checked on the open descriptor.
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0666);
  if (fd < 0)
    return fmt::format("cannot open its lock file {}: {}", shown(path, 200), system_reason(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return fmt::format("its lock file {} is not a regular file", shown(path, 200));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    std::string who = err == EWOULDBLOCK ? holder(fd) : std::string();
    ::close(fd);
    if (err != EWOULDBLOCK)
      return fmt::format("cannot lock {}: {}", shown(path, 200), system_reason(err));
    return fmt::format("another run is using it{}", who.empty() ? "" : " (" + who + ")");
  }
  // Who holds it, for the message another run gets; the lock does not depend on this text.
  const std::string me = fmt::format("process {} on {}\n", ::getpid(), host_name());
  if (::ftruncate(fd, 0) == 0) {
    [[maybe_unused]] const ssize_t n = ::pwrite(fd, me.data(), me.size(), 0);
  }
  fd_ = fd;
  return {};
}

void FolderLock::release() {
  if (fd_ < 0) return;
  ::flock(fd_, LOCK_UN);
  ::close(fd_);
  fd_ = -1;
}

}  // namespace miniamr::io

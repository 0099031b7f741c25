#include "app/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <system_error>

#include <fmt/format.h>

#include "app/errors.hpp"
#include "io/printable.hpp"

namespace miniamr::app {

std::string read_input_text(const std::string& path, std::string_view what, std::size_t max_bytes) {
  const std::string name = io::shown(path, 200);
  const auto refuse = [&](std::string_view why) {
    return UsageError(fmt::format("cannot read {} file {}: {}", what, name, why));
  };
  // O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever; the file type is
  // checked on the open descriptor, so it cannot change between the check and the read.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw refuse(std::generic_category().message(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw refuse(std::generic_category().message(errno));
  if (S_ISDIR(st.st_mode)) throw refuse("it is a directory");
  if (!S_ISREG(st.st_mode))
    throw refuse(fmt::format(
        "it is not a regular file (a pipe, device or socket); a {} is read from a file", what));
  const auto too_big = [&] {
    return refuse(
        fmt::format("it is larger than {} KiB, the limit for a {}", max_bytes / 1024, what));
  };
  if (std::uint64_t(st.st_size) > max_bytes) throw too_big();
  std::string text;
  char buffer[16384];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw refuse(std::generic_category().message(errno));
    if (n == 0) break;
    text.append(buffer, std::size_t(n));
    if (text.size() > max_bytes) throw too_big();  // the file grew while being read
  }
  return text;
}

}  // namespace miniamr::app

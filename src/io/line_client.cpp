#include "io/line_client.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include <fmt/format.h>

namespace miniamr::io {

namespace {

using Clock = std::chrono::steady_clock;

// Closes the socket on every path out of request_line.
class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

struct AddrInfoFree {
  void operator()(addrinfo* a) const { ::freeaddrinfo(a); }
};

// Milliseconds left before `deadline`, at least 0.
int left_ms(Clock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left > 0 ? int(left) : 0;
}

// Waits until `fd` is ready for `events` or the deadline passes; "" when ready.
std::string wait_for(int fd, short events, Clock::time_point deadline,
                     std::chrono::milliseconds timeout, const char* what) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, left_ms(deadline));
    if (n > 0) return "";
    if (n == 0) return fmt::format("no {} within {:g} s", what, double(timeout.count()) / 1000.0);
    if (errno != EINTR) return fmt::format("poll: {}", std::strerror(errno));
  }
}

LineAnswer failure(std::string why) {
  return LineAnswer{false, {}, std::move(why)};
}

}  // namespace

LineAnswer request_line(const std::string& host, int port, const std::string& request,
                        std::chrono::milliseconds timeout, std::size_t max_bytes) {
  const Clock::time_point deadline = Clock::now() + timeout;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
      rc != 0)
    return failure(fmt::format("cannot resolve '{}': {}", host, ::gai_strerror(rc)));
  const std::unique_ptr<addrinfo, AddrInfoFree> addresses(found);

  // Non-blocking from the start, so that connect() too obeys the deadline.
  Socket sock(::socket(found->ai_family, found->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                       found->ai_protocol));
  if (sock.fd() < 0) return failure(fmt::format("socket: {}", std::strerror(errno)));
  if (::connect(sock.fd(), found->ai_addr, found->ai_addrlen) != 0) {
    if (errno != EINPROGRESS) return failure(std::strerror(errno));
    if (auto why = wait_for(sock.fd(), POLLOUT, deadline, timeout, "connection"); !why.empty())
      return failure(why);
    int err = 0;
    socklen_t len = sizeof err;
    ::getsockopt(sock.fd(), SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) return failure(std::strerror(err));
  }

  const std::string out = request + "\n";
  for (std::size_t sent = 0; sent < out.size();) {
    if (auto why = wait_for(sock.fd(), POLLOUT, deadline, timeout, "room to send"); !why.empty())
      return failure(why);
    const ssize_t n = ::send(sock.fd(), out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno != EAGAIN && errno != EINTR)
      return failure(fmt::format("send: {}", std::strerror(errno)));
    if (n > 0) sent += std::size_t(n);
  }

  std::string answer;
  char buf[512];
  for (;;) {
    if (auto why = wait_for(sock.fd(), POLLIN, deadline, timeout, "answer"); !why.empty())
      return failure(why);
    const ssize_t n = ::recv(sock.fd(), buf, sizeof buf, 0);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      return failure(fmt::format("receive: {}", std::strerror(errno)));
    }
    if (n == 0) break;  // closed by the server
    answer.append(buf, std::size_t(n));
    if (answer.find('\n') != std::string::npos) break;
    if (answer.size() > max_bytes)
      return failure(fmt::format("an answer longer than {} bytes", max_bytes));
  }
  if (const auto nl = answer.find('\n'); nl != std::string::npos) answer.resize(nl);
  if (!answer.empty() && answer.back() == '\r') answer.pop_back();
  if (answer.empty()) return failure("the server closed the connection without an answer");
  return LineAnswer{true, answer, {}};
}

}  // namespace miniamr::io

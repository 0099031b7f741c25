// One line over TCP with a deadline: an answer, a refused connection, a silent server.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "io/line_client.hpp"

namespace miniamr::io {
namespace {

using namespace std::chrono_literals;

// A listening socket on a free loopback port.
class Listener {
 public:
  Listener() : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::listen(fd_, 4), 0);
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~Listener() { ::close(fd_); }
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;
  int fd() const { return fd_; }
  int port() const { return port_; }

 private:
  int fd_;
  int port_ = 0;
};

TEST(LineClient, SendsTheRequestAndReadsOneLine) {
  Listener server;
  std::string received;
  std::thread answer([&] {
    const int c = ::accept(server.fd(), nullptr, nullptr);
    char buf[256];
    const ssize_t n = ::recv(c, buf, sizeof buf, 0);
    if (n > 0) received.assign(buf, std::size_t(n));
    const std::string reply = "node0,node1\nnot read\n";
    (void)!::send(c, reply.data(), reply.size(), 0);
    ::close(c);
  });
  const LineAnswer a = request_line("127.0.0.1", server.port(), "42;0;?", 5s);
  answer.join();
  EXPECT_TRUE(a.ok) << a.error;
  EXPECT_EQ(a.line, "node0,node1");
  EXPECT_EQ(received, "42;0;?\n");
}

TEST(LineClient, ASilentServerCostsTheTimeout) {
  Listener server;  // accepts in the kernel's backlog and never answers
  const auto start = std::chrono::steady_clock::now();
  const LineAnswer a = request_line("127.0.0.1", server.port(), "42;0;?", 300ms);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_FALSE(a.ok);
  EXPECT_EQ(a.error, "no answer within 0.3 s");
  EXPECT_GE(took, 250ms);
}

TEST(LineClient, ARefusedConnectionIsReported) {
  int port = 0;
  {
    Listener gone;
    port = gone.port();
  }  // closed: nothing listens there now
  const LineAnswer a = request_line("127.0.0.1", port, "x", 2s);
  EXPECT_FALSE(a.ok);
  EXPECT_EQ(a.error, "Connection refused");
}

TEST(LineClient, AnUnknownHostIsReported) {
  const LineAnswer a = request_line("host.invalid", 80, "x", 2s);
  EXPECT_FALSE(a.ok);
  EXPECT_NE(a.error.find("cannot resolve 'host.invalid'"), std::string::npos) << a.error;
}

}  // namespace
}  // namespace miniamr::io

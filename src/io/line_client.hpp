// One request line over TCP and its one-line answer, with a deadline on the whole exchange: a
// server that is down, silent or slow costs at most `timeout` and never hangs the caller.
#pragma once

#include <chrono>
#include <string>

namespace miniamr::io {

struct LineAnswer {
  bool ok = false;
  std::string line;   // the answer without its newline, when ok
  std::string error;  // why there is no answer ("connection refused", "no answer within 2 s")
};

// Connects to host:port, sends `request` followed by a newline, and reads up to the first
// newline (at most `max_bytes`). An answer that the server closes without a newline is still
// returned when non-empty.
LineAnswer request_line(const std::string& host, int port, const std::string& request,
                        std::chrono::milliseconds timeout, std::size_t max_bytes = 4096);

}  // namespace miniamr::io

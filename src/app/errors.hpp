// The two ways a run ends early. Both carry one message meant for the user; main prints it on
// rank 0 and exits with the status below after a normal MPI shutdown.
#pragma once

#include <stdexcept>
#include <string>

namespace miniamr::app {

// Bad input: unknown option, wrong value count, out-of-range value, unreadable deck.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
  static constexpr int kExitStatus = 2;
};

// A failure while running: a checksum out of tolerance, a --max_blocks cap exceeded.
struct RunError : std::runtime_error {
  using std::runtime_error::runtime_error;
  static constexpr int kExitStatus = 1;
};

}  // namespace miniamr::app

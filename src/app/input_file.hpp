// The small text files a run reads (decks, placement plans, link models, benchmark configs):
// read whole, refused with one message when they are missing, unreadable, not regular files or
// too large to be what they claim.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace miniamr::app {

// Inputs are small text files; anything larger is a wrong path (a data file, /dev/zero).
constexpr std::size_t kMaxInputBytes = std::size_t{1} << 20;

// The text of the file at `path`, a `what` ("deck", "plan"). Throws UsageError "cannot read
// <what> file <path>: <why>" when the file is missing, unreadable, not a regular file (a FIFO,
// a device) or larger than `max_bytes`.
std::string read_input_text(const std::string& path, std::string_view what,
                            std::size_t max_bytes = kMaxInputBytes);

}  // namespace miniamr::app

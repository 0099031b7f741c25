// Command line and input deck -> Config, with the reference miniAMR's option names, value counts
// and defaults, but strict: every malformed or out-of-range input is a UsageError with one message
// naming the option (or the deck line), where the reference silently reads 0 or crashes.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "app/config.hpp"
#include "app/deck.hpp"

namespace miniamr::app {

struct ParsedOptions {
  Config config;
  bool help = false;                  // --help / -h seen: caller prints help_text() and exits 0
  bool version = false;               // --version seen (and no --help): print version_text()
  std::vector<std::string> warnings;  // non-fatal notes to print on rank 0
};

// args = argv[1..]. An optional first argument that does not start with '-' is a deck path; the
// deck is applied first and the options that follow override it (scalars replace; any --object on
// the command line replaces all of the deck's objects). When --help or -h appears anywhere the
// result has help set and nothing else is parsed or checked.
// Throws UsageError with one message naming the problem on any bad input.
// `read` gives the deck of a path (by default read_deck; the MPI driver reads it on rank 0 and
// hands every rank the same text).
using DeckReader = std::function<Deck(const std::string& path)>;
ParsedOptions parse_options(std::span<const std::string> args, const DeckReader& read = read_deck);

// The checks parse_options runs after parsing, for a Config built some other way. Throws
// UsageError for the first problem found. (The rank-count check needs MPI and is the caller's.)
void validate_config(const Config& config);

// Non-fatal notes about a valid Config (the reference's 27-point stencil warning).
std::vector<std::string> config_warnings(const Config& config);

// Usage, every option with its arguments, default and one-line meaning, and the deck format.
std::string help_text();

}  // namespace miniamr::app

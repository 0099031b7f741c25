// Fuzz target of the option and deck parser (app/options.cpp, app/deck.cpp): any input must end
// in a Config or a UsageError. Another exception escapes and a broken invariant aborts, so both
// are findings, as are the sanitizers' reports. Inputs are decoded as fuzz_input.hpp says.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "app/config.hpp"
#include "app/deck.hpp"
#include "app/errors.hpp"
#include "app/objects.hpp"
#include "app/options.hpp"
#include "fuzz_input.hpp"
#include "octree/key.hpp"

namespace {

using namespace miniamr::app;

[[noreturn]] void broken(const char* what) {
  std::fprintf(stderr, "fuzz_options: invariant broken: %s\n", what);
  std::abort();
}

// What parse_deck promises about the entries it returns.
void check_deck(const Deck& deck) {
  int last_line = 0;
  for (const DeckEntry& entry : deck.entries) {
    if (entry.key.empty()) broken("deck entry with an empty key");
    if (entry.key.find_first_of(" \t\r\f\v=#\n") != std::string::npos)
      broken("deck key holds a space, '=', '#' or a line end");
    for (const std::string& value : entry.values) {
      if (value.empty() || value.find_first_of(" \t\r\f\v#\n") != std::string::npos)
        broken("deck value is empty or holds a space, '#' or a line end");
    }
    if (entry.line <= last_line) broken("deck line numbers do not increase");
    last_line = entry.line;
  }
}

// A Config that parse_options accepted must pass every later check built on the same rules.
void check_accepted(const ParsedOptions& parsed, const std::vector<std::string>& args,
                    bool deck_read) {
  if (parsed.help) return;
  const Config& config = parsed.config;
  try {
    validate_config(config);
    if (config.slow_rank_factors().size() != config.slow_ranks.size())
      broken("slow_rank_factors lost an entry");
  } catch (const UsageError& e) {
    std::fprintf(stderr, "after parse_options: %s\n", e.what());
    broken("a later check rejects a Config that parse_options accepted");
  }
  if (config_warnings(config) != parsed.warnings) broken("warnings differ from config_warnings");
  if (config.deck_path != (deck_read ? args[0] : std::string()))
    broken("deck_path is not the deck's path");
  for (const int n : config.root_blocks()) {
    if (n < 1 || n > miniamr::octree::kMaxRootBlocks) broken("root grid out of range");
  }
  // The --time mode's step (the simulation refuses a zero or infinite one).
  if (config.time_given) {
    (void)time_step(config.objects, miniamr::octree::RootGrid{config.root_blocks()},
                    config.num_refine, config.block_cells());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const miniamr::fuzz::FuzzInput input = miniamr::fuzz::decode(bytes);
  const std::vector<std::string> args = input.args();
  bool deck_read = false;
  const DeckReader read = [&](const std::string& path) {
    deck_read = true;
    Deck deck = parse_deck(input.deck, path);
    check_deck(deck);
    return deck;
  };
  try {
    const ParsedOptions parsed = parse_options(args, read);
    check_accepted(parsed, args, deck_read);
  } catch (const UsageError&) {
    // Bad input, reported as such: the expected outcome.
  }
  return 0;
}

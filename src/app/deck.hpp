// Reading an input deck: a text file of `key = value ...` lines, one option per line, with the
// option names of the command line minus their dashes. This layer only splits the text into
// entries and keeps each entry's line number; options.cpp gives the entries their meaning, through
// the same option table as the command line, so both report errors the same way.
#pragma once

#include "app/input_file.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace miniamr::app {

struct DeckEntry {
  std::string key;                  // e.g. "nx" or "object"
  std::vector<std::string> values;  // the words after '=', split on whitespace (may be empty)
  int line = 0;                     // 1-based line number in the deck
};

struct Deck {
  std::string name;  // the path as the user gave it; messages say "<name>:<line>: ..."
  std::vector<DeckEntry> entries;
};

// Splits deck text into entries. `#` starts a comment (whole line or trailing), blank lines are
// skipped, whitespace around '=' is free, CR line ends and a UTF-8 byte-order mark are accepted.
// Throws UsageError naming "<name>:<line>" for a line without '=', with no single-word key
// before it, or holding a NUL byte.
Deck parse_deck(std::string_view text, std::string_view name);

// Decks are small text files; anything larger is a wrong path (a data file, /dev/zero).
constexpr std::size_t kMaxDeckBytes = kMaxInputBytes;

// The text of the deck at `path` (read_input_text).
std::string read_deck_text(const std::string& path);

// Reads and parses the deck at `path`. Throws UsageError when the file is missing or unreadable.
Deck read_deck(const std::string& path);

}  // namespace miniamr::app

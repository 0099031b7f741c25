#include "app/deck.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <system_error>

#include <fmt/format.h>

#include "app/errors.hpp"
#include "app/input_file.hpp"
#include "io/printable.hpp"

namespace miniamr::app {
namespace {

constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";

constexpr std::string_view kSpace = " \t\r\f\v";
using io::trim;

std::vector<std::string> split_words(std::string_view s) {
  std::vector<std::string> words;
  std::size_t pos = 0;
  while ((pos = s.find_first_not_of(kSpace, pos)) != std::string_view::npos) {
    const auto end = s.find_first_of(kSpace, pos);
    words.emplace_back(s.substr(pos, end == std::string_view::npos ? s.size() - pos : end - pos));
    pos = end;
  }
  return words;
}

// One non-blank, comment-free line -> entry. `where` is "<name>:<line>" for messages.
DeckEntry parse_line(std::string_view text, std::string_view where, int line) {
  const auto eq = text.find('=');
  if (eq == std::string_view::npos) {
    throw UsageError(fmt::format("{}: expected 'key = value', got {}", where, io::shown(text)));
  }
  const std::string_view key = trim(text.substr(0, eq));
  if (key.empty()) throw UsageError(fmt::format("{}: missing key before '='", where));
  if (key.find_first_of(kSpace) != std::string_view::npos) {
    throw UsageError(fmt::format("{}: key {} must be one word", where, io::shown(key)));
  }
  return DeckEntry{std::string(key), split_words(text.substr(eq + 1)), line};
}

}  // namespace

Deck parse_deck(std::string_view text, std::string_view name) {
  Deck deck{std::string(name), {}};
  const std::string shown_name = io::printable(name);
  // Editors on some systems start UTF-8 files with a byte-order mark; it is not part of a key.
  if (text.starts_with(kByteOrderMark)) text.remove_prefix(kByteOrderMark.size());
  if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
    const auto line = 1 + std::count(text.begin(), text.begin() + std::ptrdiff_t(nul), '\n');
    throw UsageError(fmt::format("{}:{}: a NUL byte: a deck is a text file", shown_name, line));
  }
  int line = 0;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    std::string_view raw = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++line;
    raw = trim(raw.substr(0, raw.find('#')));
    if (raw.empty()) continue;
    deck.entries.push_back(parse_line(raw, fmt::format("{}:{}", shown_name, line), line));
  }
  return deck;
}

std::string read_deck_text(const std::string& path) {
  return read_input_text(path, "deck");
}

Deck read_deck(const std::string& path) {
  return parse_deck(read_deck_text(path), path);
}

}  // namespace miniamr::app

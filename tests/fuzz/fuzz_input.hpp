// One fuzz input of the option parser, as bytes: the deck text, then for each command-line word
// a NUL byte and the word. "nx = 4\0--ny\06" is a deck "nx = 4" and the words "--ny" "6"; an
// input that starts with NUL has no deck. NUL separates because it is the one byte that a
// command-line word can never hold.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace miniamr::fuzz {

// The name the deck is given (in messages, and as the first word when there is a deck).
inline constexpr std::string_view kDeckName = "fuzz.deck";

struct FuzzInput {
  std::string deck;                // empty: no deck
  std::vector<std::string> words;  // the command line after the deck path
  // argv[1..] as miniamr would see it: the deck path first when there is a deck.
  std::vector<std::string> args() const {
    std::vector<std::string> out;
    if (!deck.empty()) out.emplace_back(kDeckName);
    out.insert(out.end(), words.begin(), words.end());
    return out;
  }
};

inline FuzzInput decode(std::string_view bytes) {
  FuzzInput input;
  const auto nul = bytes.find('\0');
  input.deck = std::string(bytes.substr(0, nul));
  if (nul == std::string_view::npos) return input;
  bytes.remove_prefix(nul + 1);
  while (true) {
    const auto end = bytes.find('\0');
    input.words.emplace_back(bytes.substr(0, end));
    if (end == std::string_view::npos) break;
    bytes.remove_prefix(end + 1);
  }
  return input;
}

}  // namespace miniamr::fuzz

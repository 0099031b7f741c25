#include "io/printable.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace miniamr::io {

std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned lead = byte(i);
  std::size_t n = 0;
  unsigned lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    n = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    n = 3;
    if (lead == 0xE0) lo = 0xA0;
    if (lead == 0xED) hi = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    n = 4;
    if (lead == 0xF0) lo = 0x90;
    if (lead == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  return n;
}

namespace {

// Appends s[begin, end) with every byte that is not printable ASCII, a kept newline or part of
// well-formed UTF-8 written as \xNN.
void put_escaped(std::string& out, std::string_view s, std::size_t end, bool keep_newlines) {
  for (std::size_t i = 0; i < end;) {
    const auto c = static_cast<unsigned char>(s[i]);
    if ((c >= 0x20 && c < 0x7f) || (keep_newlines && c == '\n')) {
      out.push_back(char(c));
      ++i;
    } else if (const std::size_t n = c >= 0x80 ? utf8_length(s, i) : 0; n > 0 && i + n <= end) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      out += fmt::format("\\x{:02x}", c);
      ++i;
    }
  }
}

}  // namespace

std::string shown(std::string_view text, std::size_t max_bytes) {
  std::string out = "'";
  const std::size_t end = std::min(text.size(), max_bytes);
  put_escaped(out, text, end, /*keep_newlines=*/false);
  out.push_back('\'');
  if (end < text.size()) out += fmt::format("... ({} bytes)", text.size());
  return out;
}

std::string printable(std::string_view text) {
  std::string out;
  put_escaped(out, text, text.size(), /*keep_newlines=*/true);
  return out;
}

std::string shell_quoted(std::string_view word) {
  constexpr std::string_view kPlain =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=.,:/@%";
  if (!word.empty() && word.find_first_not_of(kPlain) == std::string_view::npos)
    return std::string(word);
  std::string out = "'";
  for (const char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string_view trim(std::string_view text) {
  constexpr std::string_view kBlanks = " \t\r\f\v";
  const auto first = text.find_first_not_of(kBlanks);
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(kBlanks);
  return text.substr(first, last - first + 1);
}

}  // namespace miniamr::io

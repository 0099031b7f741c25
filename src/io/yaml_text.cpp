#include "io/yaml_text.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <string>
#include <system_error>

namespace miniamr::io {

namespace {

template <class T>
bool whole(std::string_view s, T& value, auto... base_or_format) {
  const char* end = s.data() + s.size();
  const auto [ptr, ec] = std::from_chars(s.data(), end, value, base_or_format...);
  // Out of range is still a number to a YAML reader (an integer of many digits, or infinity).
  return (ec == std::errc() || ec == std::errc::result_out_of_range) && ptr == end;
}

}  // namespace

bool yaml_plain_misreads(std::string_view text) {
  if (text.empty()) return true;
  std::string lower(text);
  for (char& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
  static constexpr std::array<std::string_view, 13> kWords{
      "true", "false", "yes", "no", "on", "off", "y", "n", "null", "~", ".nan", ".inf", "-.inf"};
  for (const std::string_view w : kWords)
    if (lower == w) return true;
  std::string_view s = lower;
  if (s.front() == '+' || s.front() == '-') s.remove_prefix(1);
  if (s.empty()) return false;
  // YAML 1.1's numbers with underscores and base 60 ("1_000", "1:2" is 62).
  if ((std::isdigit(static_cast<unsigned char>(s.front())) || s.front() == '.') &&
      s.find_first_not_of("0123456789_:.") == std::string_view::npos)
    return true;
  long long integer = 0;
  double real = 0;
  if (whole(s, integer, 10) || whole(s, real, std::chars_format::general)) return true;
  for (const std::string_view prefix : {"0x", "0o", "0b"})
    if (s.size() > 2 && s.starts_with(prefix)) {
      const int base = prefix[1] == 'x' ? 16 : prefix[1] == 'o' ? 8 : 2;
      unsigned long long u = 0;
      if (whole(s.substr(2), u, base)) return true;
    }
  return false;
}

}  // namespace miniamr::io

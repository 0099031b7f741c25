#include "io/numbered_name.hpp"

#include <algorithm>
#include <charconv>
#include <system_error>

namespace miniamr::io {

std::optional<int> numbered_name(std::string_view file, std::string_view head,
                                 std::string_view tail, std::size_t min_digits) {
  if (file.size() < head.size() + std::max<std::size_t>(min_digits, 1) + tail.size() ||
      !file.starts_with(head) || !file.ends_with(tail))
    return std::nullopt;
  const std::string_view digits = file.substr(head.size(), file.size() - head.size() - tail.size());
  if (!std::ranges::all_of(digits, [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  int n = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return n;
}

}  // namespace miniamr::io

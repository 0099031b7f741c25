// File names that carry a number: "checkpoint.000120.h5", "plot.0005.xmf".
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace miniamr::io {

// The number in `file` when it is `head`, then at least `min_digits` decimal digits and nothing
// else, then `tail`; nothing when it is not, or when the number does not fit an int.
std::optional<int> numbered_name(std::string_view file, std::string_view head,
                                 std::string_view tail, std::size_t min_digits = 1);

}  // namespace miniamr::io

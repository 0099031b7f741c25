// Counter-based pseudo-random numbers: a value is a pure function of its inputs (no hidden
// stream state), so data and coefficients never depend on how blocks are spread over ranks or
// in which order they are visited. Mixing is the splitmix64 finaliser (Steele et al., 2014).
#pragma once

#include <cstdint>

namespace miniamr::stencil {

constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Folds one more word into a running hash; chaining this over (seed, a, b, ...) gives an
// avalanche-quality key for the tuple.
constexpr std::uint64_t hash_combine(std::uint64_t h, std::uint64_t word) {
  return splitmix64(h ^ splitmix64(word));
}

// The top 53 bits as a double in [0, 1): every value is an exact multiple of 2^-53.
constexpr double to_unit(std::uint64_t h) {
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

}  // namespace miniamr::stencil

#include "stencil/init_values.hpp"

#include <algorithm>

#include "stencil/hash.hpp"

namespace miniamr::stencil {

namespace {

// Hash of everything but the z position, shared by a whole row of cells.
std::uint64_t row_key(std::int64_t gx, std::int64_t gy, int level, int var, std::uint64_t seed) {
  std::uint64_t h = splitmix64(seed);
  h = hash_combine(h, static_cast<std::uint64_t>(level));
  h = hash_combine(h, static_cast<std::uint64_t>(var));
  h = hash_combine(h, static_cast<std::uint64_t>(gx));
  return hash_combine(h, static_cast<std::uint64_t>(gy));
}

double cell_value(std::uint64_t row, std::int64_t gz) {
  return to_unit(hash_combine(row, static_cast<std::uint64_t>(gz)));
}

}  // namespace

double initial_value(std::array<std::int64_t, 3> global_cell, int level, int var,
                     std::uint64_t seed) {
  return cell_value(row_key(global_cell[0], global_cell[1], level, var, seed), global_cell[2]);
}

void fill_initial(Block& block, std::array<std::int64_t, 3> first_cell, int level,
                  std::uint64_t seed) {
  const BlockShape& s = block.shape();
  std::fill_n(block.data(), s.doubles(), 0.0);
  for (int v = 0; v < s.num_vars; ++v) {
    double* u = block.var(v).data();
    for (int i = 1; i <= s.nx; ++i) {
      for (int j = 1; j <= s.ny; ++j) {
        const std::uint64_t row =
            row_key(first_cell[0] + i - 1, first_cell[1] + j - 1, level, v, seed);
        double* out = u + s.at(i, j, 0);
        for (int k = 1; k <= s.nz; ++k) out[k] = cell_value(row, first_cell[2] + k - 1);
      }
    }
  }
}

}  // namespace miniamr::stencil

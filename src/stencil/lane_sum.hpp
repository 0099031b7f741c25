// A fixed-order sum over rows of cells that still vectorises: cell k of a row (k counted from
// the row's first interior cell) goes into lane k % 8, lanes are combined pairwise at the end.
// The order therefore depends only on the block shape, never on alignment, thread count or the
// instruction set, and every user (stencils' fused checksums, interior_sum) gets the same bits.
#pragma once

namespace miniamr::stencil {

class LaneSum {
 public:
  static constexpr int kLanes = 8;

  // Adds p[0 .. n).
  void add_row(const double* p, int n) {
    int k = 0;
    for (; k + kLanes <= n; k += kLanes)
      for (int l = 0; l < kLanes; ++l) lane_[l] += p[k + l];
    for (int l = 0; k + l < n; ++l) lane_[l] += p[k + l];
  }

  double total() const {
    return ((lane_[0] + lane_[1]) + (lane_[2] + lane_[3])) +
           ((lane_[4] + lane_[5]) + (lane_[6] + lane_[7]));
  }

 private:
  double lane_[kLanes] = {0, 0, 0, 0, 0, 0, 0, 0};
};

}  // namespace miniamr::stencil

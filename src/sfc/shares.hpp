// The ranks' shares of the weight along the curve, as the dynamic balancer's cuts take them:
// one value for most ranks and the few that differ (a slow or a fast rank) listed apart, so
// that a rank needs no P-sized array to find where its own part of the curve is cut. A
// simulation holds every rank's copy in one process: P shares on each of 4096 ranks were 134 MB,
// and so were the P + 1 bounds made from them.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace miniamr::sfc {

class Shares {
 public:
  // No shares (the static runtime's cut into equal weights, families kept with their first
  // leaf): given() is false.
  Shares() = default;
  // Part r's share proportional to values[r] (each > 0); the most frequent value is the base.
  explicit Shares(std::span<const double> values);

  bool given() const { return parts_ > 0; }
  int parts() const { return parts_; }
  // Whether every part has the same share (true without shares).
  bool equal() const { return part_.empty(); }
  // Part r's value as given (its share is value / the sum of all).
  double value(int r) const;
  std::vector<double> values() const;

  // Where part r starts on a curve of `total` weight (r = 0: 0; r = parts: total): the bound
  // sfc::share_bounds gives for values() (it takes them from here). Equal shares give exactly
  // the bounds of sfc::cut's equal parts.
  std::int64_t bound(int r, std::int64_t total) const;
  // As sfc::cut with these bounds: each of a rank's leaves (weights in curve order, `offset`
  // the weight before them) goes to the part holding the start of its weight; logarithmic in
  // the parts that differ, for each part the leaves cross.
  std::vector<int> cut(std::span<const std::int64_t> weights, std::int64_t offset,
                       std::int64_t total) const;

  // The form a broadcast carries: parts, base, then (part, value) for each part that differs.
  std::vector<double> packed() const;
  static Shares unpacked(std::span<const double> packed);

  friend bool operator==(const Shares&, const Shares&) = default;

 private:
  // Sum of the values of parts [0, r).
  double before(int r) const;

  int parts_ = 0;
  double base_ = 1.0;
  std::vector<int> part_;       // the parts that differ from base_, ascending
  std::vector<double> value_;   // their values
  std::vector<double> excess_;  // excess_[i]: sum of value_[j] - base_ for j < i (size + 1)
};

}  // namespace miniamr::sfc

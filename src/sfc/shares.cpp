#include "sfc/shares.hpp"

#include <algorithm>
#include <cmath>

#include "sfc/partition.hpp"

namespace miniamr::sfc {

Shares::Shares(std::span<const double> values) : parts_(int(values.size())) {
  if (values.empty()) return;
  // The base is the most frequent value (the smallest of equally frequent ones): the settled
  // speeds of a balancer give most ranks the same.
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  std::size_t most = 0;
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i;
    while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
    if (j - i > most) {
      most = j - i;
      base_ = sorted[i];
    }
    i = j;
  }
  excess_.push_back(0.0);
  for (std::size_t r = 0; r < values.size(); ++r)
    if (values[r] != base_) {
      part_.push_back(int(r));
      value_.push_back(values[r]);
      excess_.push_back(excess_.back() + (values[r] - base_));
    }
}

double Shares::value(int r) const {
  const auto it = std::lower_bound(part_.begin(), part_.end(), r);
  return it != part_.end() && *it == r ? value_[std::size_t(it - part_.begin())] : base_;
}

std::vector<double> Shares::values() const {
  std::vector<double> v(std::size_t(parts_), base_);
  for (std::size_t i = 0; i < part_.size(); ++i) v[std::size_t(part_[i])] = value_[i];
  return v;
}

double Shares::before(int r) const {
  const auto i = std::size_t(std::lower_bound(part_.begin(), part_.end(), r) - part_.begin());
  return base_ * double(r) + (excess_.empty() ? 0.0 : excess_[i]);
}

std::int64_t Shares::bound(int r, std::int64_t total) const {
  if (r <= 0 || parts_ <= 0) return 0;
  if (r >= parts_) return total;
  const double sum = before(parts_);
  if (equal() || !(sum > 0)) return equal_bound(r, total, parts_);
  const auto b = std::int64_t(std::ceil(double(total) * (before(r) / sum)));
  return std::clamp<std::int64_t>(b, 0, total);
}

std::vector<int> Shares::cut(std::span<const std::int64_t> weights, std::int64_t offset,
                             std::int64_t total) const {
  std::vector<int> target(weights.size(), 0);
  if (total <= 0 || parts_ <= 1 || weights.empty()) return target;
  // The part holding a position: the last r < parts whose bound is at or before it. The first
  // leaf's (at `offset`) is searched for; the others walk on from the part before.
  int lo = 0, hi = parts_ - 1;
  while (lo < hi) {
    const int mid = lo + (hi - lo + 1) / 2;
    if (bound(mid, total) <= offset)
      lo = mid;
    else
      hi = mid - 1;
  }
  int r = lo;
  std::int64_t before = offset;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    while (r + 1 < parts_ && bound(r + 1, total) <= before) ++r;
    target[i] = r;
    before += weights[i];
  }
  return target;
}

std::vector<double> Shares::packed() const {
  std::vector<double> p{double(parts_), base_, double(part_.size())};
  for (std::size_t i = 0; i < part_.size(); ++i) {
    p.push_back(double(part_[i]));
    p.push_back(value_[i]);
  }
  return p;
}

Shares Shares::unpacked(std::span<const double> packed) {
  Shares s;
  if (packed.size() < 3) return s;
  s.parts_ = int(packed[0]);
  s.base_ = packed[1];
  const auto k = std::size_t(packed[2]);
  s.excess_.push_back(0.0);
  for (std::size_t i = 0; i < k && 4 + 2 * i < packed.size(); ++i) {
    s.part_.push_back(int(packed[3 + 2 * i]));
    s.value_.push_back(packed[4 + 2 * i]);
    s.excess_.push_back(s.excess_.back() + (s.value_.back() - s.base_));
  }
  return s;
}

}  // namespace miniamr::sfc

#include "netbench/results.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace miniamr::netbench {

double median(std::vector<double> v) {
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(mid), v.end());
  if (v.size() % 2 == 1) return v[mid];
  const double upper = v[mid];
  return (*std::max_element(v.begin(), v.begin() + std::ptrdiff_t(mid)) + upper) / 2;
}

ResultRow summarise(TestKind test, std::int64_t bytes, int messages,
                    std::span<const double> seconds, std::span<const double> send_overhead_s) {
  ResultRow r;
  r.test = test;
  r.bytes = bytes;
  r.messages = messages;
  r.reps = int(seconds.size());
  const auto [lo, hi] = std::minmax_element(seconds.begin(), seconds.end());
  r.t_min_s = *lo;
  r.t_max_s = *hi;
  r.t_median_s = median({seconds.begin(), seconds.end()});
  // A clock that did not tick gives no bandwidth rather than an infinite one.
  r.bandwidth_Bps = r.t_median_s > 0 ? double(bytes) * messages / r.t_median_s : 0;
  if (!send_overhead_s.empty())
    r.send_overhead_s = median({send_overhead_s.begin(), send_overhead_s.end()});
  return r;
}

std::string results_csv(std::span<const ResultRow> rows) {
  std::string out =
      "test,pair_class,rank_a,rank_b,ranks,bytes,messages,reps,t_min_s,t_median_s,t_max_s,"
      "bandwidth_Bps,send_overhead_s\n";
  const auto rank = [](int r) { return r < 0 ? std::string() : fmt::format("{}", r); };
  for (const ResultRow& r : rows)
    out += fmt::format(
        "{},{},{},{},{},{},{},{},{:.6e},{:.6e},{:.6e},{:.6e},{}\n", test_name(r.test), r.pair_class,
        rank(r.rank_a), rank(r.rank_b), r.ranks, r.bytes, r.messages, r.reps, r.t_min_s,
        r.t_median_s, r.t_max_s, r.bandwidth_Bps,
        r.send_overhead_s < 0 ? std::string() : fmt::format("{:.6e}", r.send_overhead_s));
  return out;
}

}  // namespace miniamr::netbench

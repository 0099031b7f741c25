#include "comm/tally.hpp"

#include <algorithm>

namespace miniamr::comm {

namespace {

constexpr int kTallyTag = 107;  // apart from the other exchanges' tags (101-106)

// What a group of consecutive ranks holds: their sums, least and greatest values.
struct Part {
  std::vector<std::int64_t> sum, min, max;

  explicit Part(std::span<const std::int64_t> v)
      : sum(v.begin(), v.end()), min(v.begin(), v.end()), max(v.begin(), v.end()) {}
  std::vector<std::int64_t> packed() const {
    std::vector<std::int64_t> out(sum);
    out.insert(out.end(), min.begin(), min.end());
    out.insert(out.end(), max.begin(), max.end());
    return out;
  }
  // Adds the group packed in `other` (3 n values) to this one.
  void add(std::span<const std::int64_t> other) {
    const std::size_t n = sum.size();
    for (std::size_t i = 0; i < n; ++i) {
      sum[i] += other[i];
      min[i] = std::min(min[i], other[n + i]);
      max[i] = std::max(max[i], other[2 * n + i]);
    }
  }
};

}  // namespace

Tally tally(const Communicator& comm, std::span<const std::int64_t> mine) {
  const int P = comm.size(), r = comm.rank();
  const std::size_t n = mine.size();
  const int n3 = int(3 * n);
  MPI_Comm c = comm.get();
  int pow2 = 1;
  while (2 * pow2 <= P) pow2 *= 2;
  const int folded = P - pow2;  // ranks 0 .. 2 folded - 1 pair up, the even one folded out
  std::int64_t messages = 0;
  std::vector<std::int64_t> in(3 * n);

  Part part(mine);
  std::vector<std::int64_t> before(n, 0);  // of the ranks before this one within `part`
  if (r < 2 * folded && r % 2 == 0) {
    // Folded out: the odd neighbour takes part for both and sends back before, sum, min, max.
    const std::vector<std::int64_t> out = part.packed();
    MPI_Send(out.data(), n3, MPI_INT64_T, r + 1, kTallyTag, c);
    std::vector<std::int64_t> result(4 * n);
    MPI_Recv(result.data(), int(4 * n), MPI_INT64_T, r + 1, kTallyTag, c, MPI_STATUS_IGNORE);
    comm.note(1, 1);
    const auto at = [&](std::size_t k) {
      const auto from = result.begin() + std::ptrdiff_t(k * n);
      return std::vector<std::int64_t>(from, from + std::ptrdiff_t(n));
    };
    return {at(0), at(1), at(2), at(3)};
  }
  const bool pairs = r < 2 * folded;  // holds its even neighbour's values too
  std::vector<std::int64_t> neighbour;
  if (pairs) {
    MPI_Recv(in.data(), n3, MPI_INT64_T, r - 1, kTallyTag, c, MPI_STATUS_IGNORE);
    neighbour.assign(in.begin(), in.begin() + std::ptrdiff_t(n));
    part.add(in);
  }
  // Virtual ranks 0 .. pow2 - 1 in rank order, each a pair or a single rank.
  const int v = pairs ? r / 2 : r - folded;
  const auto real = [&](int virt) { return virt < folded ? 2 * virt + 1 : virt + folded; };
  for (int bit = 1; bit < pow2; bit *= 2) {
    const int partner = real(v ^ bit);
    const std::vector<std::int64_t> out = part.packed();
    MPI_Sendrecv(out.data(), n3, MPI_INT64_T, partner, kTallyTag, in.data(), n3, MPI_INT64_T,
                 partner, kTallyTag, c, MPI_STATUS_IGNORE);
    ++messages;
    if ((v & bit) != 0)
      for (std::size_t i = 0; i < n; ++i) before[i] += in[i];
    part.add(in);
  }
  if (pairs) {
    // before, then the part as packed: sum, min, max.
    std::vector<std::int64_t> result(before);
    const std::vector<std::int64_t> whole = part.packed();
    result.insert(result.end(), whole.begin(), whole.end());
    MPI_Send(result.data(), int(4 * n), MPI_INT64_T, r - 1, kTallyTag, c);
    ++messages;
    for (std::size_t i = 0; i < n; ++i) before[i] += neighbour[i];
  }
  comm.note(1, messages);
  return {std::move(before), std::move(part.sum), std::move(part.min), std::move(part.max)};
}

}  // namespace miniamr::comm

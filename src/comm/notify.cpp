#include "comm/notify.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>

namespace miniamr::comm {

namespace {

constexpr int kNotifyTag = 108;  // apart from the other exchanges' tags (101-107)

struct Routed {
  int receiver = 0, sender = 0, bytes = 0;
};

// The first message of a round has a fixed size, so that the receiver needs no probe: the count
// and as many notices as fit; the rest, when there are more, follow in a second message whose
// size both sides then know. A rank passes on about twice its neighbours' notices at most.
constexpr std::size_t kInline = 40;
struct Packet {
  std::int32_t count = 0;
  std::array<std::int32_t, kMaxLeast> least{};
  std::array<Routed, kInline> routed{};
};

struct Link {
  MPI_Comm comm;
  std::span<int> least;  // this rank's values, lowered by every packet that arrives
  std::int64_t messages = 0;

  Packet packed(const std::vector<Routed>& out) const {
    Packet p;
    p.count = std::int32_t(out.size());
    std::copy(least.begin(), least.end(), p.least.begin());
    std::copy_n(out.begin(), std::min(out.size(), kInline), p.routed.begin());
    return p;
  }
  void lower(const Packet& p) const {
    for (std::size_t i = 0; i < least.size(); ++i) least[i] = std::min(least[i], p.least[i]);
  }
  static std::size_t rest(std::size_t count) { return count > kInline ? count - kInline : 0; }
  static void unpack(const Packet& p, std::vector<Routed>& in) {
    in.assign(p.routed.begin(),
              p.routed.begin() + std::min<std::size_t>(std::size_t(p.count), kInline));
    in.resize(std::size_t(p.count));
  }

  // Both ways with `partner`.
  std::vector<Routed> exchange(int partner, const std::vector<Routed>& out) {
    const Packet mine = packed(out);
    Packet theirs;
    MPI_Sendrecv(&mine, sizeof mine, MPI_BYTE, partner, kNotifyTag, &theirs, sizeof theirs,
                 MPI_BYTE, partner, kNotifyTag, comm, MPI_STATUS_IGNORE);
    ++messages;
    lower(theirs);
    std::vector<Routed> in;
    unpack(theirs, in);
    const std::size_t sent = rest(out.size()), arriving = rest(in.size());
    if (sent + arriving > 0) {
      const Routed* more_out = out.data() + (sent > 0 ? kInline : 0);
      Routed* more_in = in.data() + (arriving > 0 ? kInline : 0);
      MPI_Sendrecv(more_out, int(sent * sizeof(Routed)), MPI_BYTE, partner, kNotifyTag, more_in,
                   int(arriving * sizeof(Routed)), MPI_BYTE, partner, kNotifyTag, comm,
                   MPI_STATUS_IGNORE);
      ++messages;
    }
    return in;
  }
  void send(int to, const std::vector<Routed>& out) {
    const Packet mine = packed(out);
    MPI_Send(&mine, sizeof mine, MPI_BYTE, to, kNotifyTag, comm);
    ++messages;
    if (const std::size_t sent = rest(out.size()); sent > 0) {
      MPI_Send(out.data() + kInline, int(sent * sizeof(Routed)), MPI_BYTE, to, kNotifyTag, comm);
      ++messages;
    }
  }
  std::vector<Routed> receive(int from) const {
    Packet theirs;
    MPI_Recv(&theirs, sizeof theirs, MPI_BYTE, from, kNotifyTag, comm, MPI_STATUS_IGNORE);
    lower(theirs);
    std::vector<Routed> in;
    unpack(theirs, in);
    if (const std::size_t arriving = rest(in.size()); arriving > 0)
      MPI_Recv(in.data() + kInline, int(arriving * sizeof(Routed)), MPI_BYTE, from, kNotifyTag,
               comm, MPI_STATUS_IGNORE);
    return in;
  }
};

std::vector<Notice> arrivals(const std::vector<Routed>& routed) {
  std::vector<Notice> out;
  out.reserve(routed.size());
  for (const Routed& n : routed) out.push_back({n.sender, n.bytes});
  std::sort(out.begin(), out.end(),
            [](const Notice& a, const Notice& b) { return a.rank < b.rank; });
  return out;
}

}  // namespace

void check_least(std::span<const int> least) {
  if (least.size() > kMaxLeast)
    throw std::invalid_argument("an exchange carries at most 2 values to their least");
}

std::vector<Notice> notify(const Communicator& comm, std::span<const Notice> sends,
                           std::span<int> least) {
  check_least(least);
  const int P = comm.size(), r = comm.rank();
  std::vector<Routed> held;
  held.reserve(sends.size());
  for (const Notice& s : sends) held.push_back({s.rank, r, s.bytes});
  // The notices' hypercube is a recursive-doubling reduction too: after its rounds every rank
  // has met every other's values, and a folded rank gets them back with its notices.
  Link link{comm.get(), least};
  int pow2 = 1;
  while (2 * pow2 <= P) pow2 *= 2;
  const int folded = P - pow2;  // ranks 0 .. 2 folded - 1 pair up, the even one folded out
  if (r < 2 * folded && r % 2 == 0) {
    // Folded out: the odd neighbour routes for both and hands back what is addressed here.
    link.send(r + 1, held);
    const std::vector<Routed> mine = link.receive(r + 1);
    comm.note(1, link.messages);
    return arrivals(mine);
  }
  const bool pairs = r < 2 * folded;
  if (pairs) {
    const std::vector<Routed> in = link.receive(r - 1);
    held.insert(held.end(), in.begin(), in.end());
  }
  // Virtual ranks 0 .. pow2 - 1 in rank order, each a pair or a single rank.
  const auto virtual_of = [&](int real) { return real < 2 * folded ? real / 2 : real - folded; };
  const auto real_of = [&](int virt) { return virt < folded ? 2 * virt + 1 : virt + folded; };
  const int v = virtual_of(r);
  std::vector<Routed> keep, give;
  for (int bit = pow2 / 2; bit >= 1; bit /= 2) {
    keep.clear();
    give.clear();
    for (const Routed& n : held)
      ((virtual_of(n.receiver) & bit) == (v & bit) ? keep : give).push_back(n);
    const std::vector<Routed> in = link.exchange(real_of(v ^ bit), give);
    held.swap(keep);
    held.insert(held.end(), in.begin(), in.end());
  }
  if (pairs) {
    std::vector<Routed> theirs;
    keep.clear();
    for (const Routed& n : held) (n.receiver == r ? keep : theirs).push_back(n);
    link.send(r - 1, theirs);
    held.swap(keep);
  }
  comm.note(1, link.messages);
  return arrivals(held);
}

}  // namespace miniamr::comm

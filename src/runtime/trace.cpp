#include "runtime/trace.hpp"

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <iterator>

#include "comm/mpi.hpp"
#include "io/output_file.hpp"
#include "io/printable.hpp"

namespace miniamr::runtime {

namespace {

using Out = fmt::memory_buffer;

void put(Out& out, std::string_view s) {
  out.append(s.data(), s.data() + s.size());
}

// A JSON string literal. Invalid UTF-8 becomes U+FFFD, since viewers reject the whole file
// otherwise.
void put_string(Out& out, std::string_view s) {
  out.push_back('"');
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c < 0x20) {
      switch (c) {
        case '\b':
          put(out, "\\b");
          break;
        case '\f':
          put(out, "\\f");
          break;
        case '\n':
          put(out, "\\n");
          break;
        case '\r':
          put(out, "\\r");
          break;
        case '\t':
          put(out, "\\t");
          break;
        default:
          fmt::format_to(std::back_inserter(out), "\\u{:04x}", unsigned{c});
      }
    } else if (c < 0x80) {
      out.push_back(static_cast<char>(c));
    } else if (std::size_t n = io::utf8_length(s, i); n > 0) {
      put(out, s.substr(i, n));
      i += n;
      continue;
    } else {
      put(out, "\\ufffd");
    }
    ++i;
  }
  out.push_back('"');
}

// JSON has no NaN or infinity.
double finite_or_zero(double x) {
  return std::isfinite(x) ? x : 0.0;
}

void put_metadata(Out& out, std::string_view what, int pid, int tid, std::string_view key,
                  std::string_view text, std::int64_t number) {
  fmt::format_to(std::back_inserter(out), R"({{"name":"{}","ph":"M","pid":{},"tid":{},"args":{{)",
                 what, pid, tid);
  put_string(out, key);
  out.push_back(':');
  if (text.empty())
    fmt::format_to(std::back_inserter(out), "{}", number);
  else
    put_string(out, text);
  put(out, "}}");
}

void put_event(Out& out, const TraceEvent& ev, int pid) {
  put(out, R"({"name":)");
  put_string(out, ev.name);
  put(out, R"(,"cat":)");
  put_string(out, ev.cat);
  fmt::format_to(std::back_inserter(out), R"(,"ph":"X","ts":{:.3f},"dur":{:.3f},"pid":{},"tid":{})",
                 finite_or_zero(ev.ts_us), finite_or_zero(ev.dur_us), pid, ev.tid);
  bool first = true;
  const auto key = [&](std::string_view k) {
    put(out, first ? R"(,"args":{)" : ",");
    first = false;
    put_string(out, k);
    out.push_back(':');
  };
  for (const auto& [k, v] : ev.ints) {
    if (k.empty()) continue;
    key(k);
    fmt::format_to(std::back_inserter(out), "{}", v);
  }
  if (!ev.text_name.empty()) {
    key(ev.text_name);
    put_string(out, ev.text_value);
  }
  if (!first) out.push_back('}');
  out.push_back('}');
}

// Frees the communicator write() exchanges on, which is its own so that its messages can never
// match a receive posted elsewhere on the caller's communicator.
struct CommGuard {
  MPI_Comm comm = MPI_COMM_NULL;
  explicit CommGuard(MPI_Comm parent) : comm(comm::duplicate(parent)) {}
  ~CommGuard() { MPI_Comm_free(&comm); }
  CommGuard(const CommGuard&) = delete;
  CommGuard& operator=(const CommGuard&) = delete;
};

constexpr int kTag = 1;
// Bounds the memory used for the text on every rank, however long the trace.
constexpr std::size_t kPieceBytes = std::size_t{1} << 20;

}  // namespace

Trace::Trace(int threads) : enabled_(true), origin_(Clock::now()) {
  set_threads(threads);
}

void Trace::set_threads(int threads) {
  const std::size_t n = std::size_t(std::max(threads, 1));
  for (std::size_t t = n; t < buffers_.size(); ++t) {
    auto& from = buffers_[t].events;
    auto& to = buffers_[0].events;
    to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
  }
  buffers_.resize(n);
}

double Trace::now_us() const {
  if (!enabled_) return 0.0;
  return std::chrono::duration<double, std::micro>(Clock::now() - origin_).count();
}

void Trace::record(TraceEvent ev) {
  if (!enabled_) return;
  if (ev.tid < 0 || std::size_t(ev.tid) >= buffers_.size()) {
    dropped_.n.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  buffers_[std::size_t(ev.tid)].events.push_back(std::move(ev));
}

std::size_t Trace::size() const {
  std::size_t n = 0;
  for (const auto& b : buffers_) n += b.events.size();
  return n;
}

template <class Sink>
void Trace::format_events(int rank, std::size_t piece_bytes, Sink&& sink) const {
  std::vector<const TraceEvent*> events;
  events.reserve(size());
  int threads = int(buffers_.size());
  for (const auto& b : buffers_)
    for (const auto& ev : b.events) {
      events.push_back(&ev);
      threads = std::max(threads, ev.tid + 1);
    }
  std::stable_sort(events.begin(), events.end(), [](const TraceEvent* a, const TraceEvent* b) {
    return finite_or_zero(a->ts_us) < finite_or_zero(b->ts_us);
  });

  Out out;
  bool first = true;
  const auto next = [&] {
    if (out.size() >= piece_bytes) {
      sink(std::string_view(out.data(), out.size()));
      out.clear();
    }
    if (!first) put(out, ",\n");
    first = false;
  };
  next();
  put_metadata(out, "process_name", rank, 0, "name", fmt::format("rank {}", rank), 0);
  next();
  put_metadata(out, "process_sort_index", rank, 0, "sort_index", {}, rank);
  for (int t = 0; t < threads; ++t) {
    next();
    put_metadata(out, "thread_name", rank, t, "name", fmt::format("worker {}", t), 0);
    next();
    put_metadata(out, "thread_sort_index", rank, t, "sort_index", {}, t);
  }
  for (const TraceEvent* ev : events) {
    next();
    put_event(out, *ev, rank);
  }
  if (out.size() > 0) sink(std::string_view(out.data(), out.size()));
}

std::string Trace::write(const comm::Communicator& comm, const std::string& path) const {
  CommGuard guard(comm.get());
  MPI_Comm c = guard.comm;
  const int rank = comm.rank(), ranks = comm.size();

  std::int64_t mine[2] = {std::int64_t(size()), dropped_.n.load(std::memory_order_relaxed)};
  std::vector<std::int64_t> counts(rank == 0 ? 2 * std::size_t(ranks) : 0);
  MPI_Gather(mine, 2, MPI_INT64_T, counts.data(), 2, MPI_INT64_T, 0, c);

  io::OutputFile file;
  int ok = (rank == 0 && file.open(path)) ? 1 : 0;
  MPI_Bcast(&ok, 1, MPI_INT, 0, c);
  const auto failed = [&] { return rank == 0 ? file.error() : std::string("failed on rank 0"); };
  if (!ok) return failed();

  if (rank != 0) {
    format_events(rank, kPieceBytes, [&](std::string_view piece) {
      MPI_Send(piece.data(), int(piece.size()), MPI_BYTE, 0, kTag, c);
    });
    MPI_Send(nullptr, 0, MPI_BYTE, 0, kTag, c);  // the empty message ends this rank's part
  } else {
    file.put("{\"traceEvents\":[\n");
    format_events(0, kPieceBytes, [&](std::string_view piece) { file.put(piece); });
    std::string piece;
    for (int r = 1; r < ranks; ++r) {
      file.put(",\n");
      for (;;) {
        MPI_Status status;
        MPI_Probe(r, kTag, c, &status);
        int n = 0;
        MPI_Get_count(&status, MPI_BYTE, &n);
        piece.resize(std::size_t(n));
        MPI_Recv(piece.data(), n, MPI_BYTE, r, kTag, c, MPI_STATUS_IGNORE);
        if (n == 0) break;
        file.put(piece);
      }
    }
    std::int64_t events = 0, dropped = 0;
    for (int r = 0; r < ranks; ++r) {
      events += counts[2 * std::size_t(r)];
      dropped += counts[2 * std::size_t(r) + 1];
    }
    file.put(
        fmt::format("\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{{\"ranks\":{},\"events\":{},"
                    "\"dropped_events\":{},\"clock\":\"steady_clock, origin per rank at trace "
                    "construction\"}}}}\n",
                    ranks, events, dropped));
    ok = file.commit() ? 1 : 0;
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, c);
  return ok ? std::string() : failed();
}

}  // namespace miniamr::runtime

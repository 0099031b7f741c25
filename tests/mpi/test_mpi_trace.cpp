// The Chrome trace writer on 1..4 ranks: events recorded by two threads on every rank reach one
// well-formed JSON file on rank 0, written atomically, and a write that cannot happen fails on
// every rank alike.
//
// Only rank 0 touches the file system (as write() itself does), and every check goes through
// all_ranks() so that all ranks reach the same verdict and none leaves a collective early.
#include <gtest/gtest.h>
#include <mpi.h>
#include <stdlib.h>

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "comm/mpi.hpp"
#include "mpi_checks.hpp"
#include "runtime/trace.hpp"

namespace {

namespace fs = std::filesystem;
using miniamr::comm::Communicator;
using miniamr::runtime::Trace;
using miniamr::runtime::TraceEvent;

using mpi_checks::all_ranks;
using mpi_checks::world_rank;
using mpi_checks::world_sum;

// A fresh directory made by rank 0 and removed with its contents at the end of the test; the
// other ranks hold an empty path.
class ScratchDir {
 public:
  ScratchDir() {
    if (world_rank() != 0) return;
    std::string pattern = (fs::temp_directory_path() / "miniamr_trace_XXXXXX").string();
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::size_t count(std::string_view text, std::string_view what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string_view::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  return names;
}

// Accepts exactly one JSON value (RFC 8259 grammar; strings are checked for escapes and raw
// control characters, not for UTF-8), so a viewer's parser would accept the file.
class JsonChecker {
 public:
  explicit JsonChecker(std::string_view s) : s_(s) {}
  bool valid() {
    space();
    if (!value()) return false;
    space();
    return i_ == s_.size();
  }

 private:
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  bool eat(char c) {
    if (peek() != c) return false;
    ++i_;
    return true;
  }
  void space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t'))
      ++i_;
  }
  bool digits() {
    std::size_t start = i_;
    while (peek() >= '0' && peek() <= '9') ++i_;
    return i_ > start;
  }
  bool literal(std::string_view word) {
    if (s_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }
  bool value() {
    if (++depth_ > 64) return false;
    bool ok = false;
    switch (peek()) {
      case '{':
        ok = object();
        break;
      case '[':
        ok = array();
        break;
      case '"':
        ok = string();
        break;
      case 't':
        ok = literal("true");
        break;
      case 'f':
        ok = literal("false");
        break;
      case 'n':
        ok = literal("null");
        break;
      default:
        ok = number();
    }
    --depth_;
    return ok;
  }
  bool object() {
    eat('{');
    space();
    if (eat('}')) return true;
    do {
      space();
      if (!string()) return false;
      space();
      if (!eat(':')) return false;
      space();
      if (!value()) return false;
      space();
    } while (eat(','));
    return eat('}');
  }
  bool array() {
    eat('[');
    space();
    if (eat(']')) return true;
    do {
      space();
      if (!value()) return false;
      space();
    } while (eat(','));
    return eat(']');
  }
  bool string() {
    if (!eat('"')) return false;
    while (i_ < s_.size()) {
      const auto c = static_cast<unsigned char>(s_[i_++]);
      if (c == '"') return true;
      if (c < 0x20) return false;
      if (c != '\\') continue;
      const char e = peek();
      ++i_;
      if (e == 'u') {
        for (int k = 0; k < 4; ++k, ++i_)
          if (!std::isxdigit(static_cast<unsigned char>(peek()))) return false;
      } else if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) {
        return false;
      }
    }
    return false;
  }
  bool number() {
    eat('-');
    if (!eat('0') && !digits()) return false;
    if (eat('.') && !digits()) return false;
    if (eat('e') || eat('E')) {
      if (!eat('+')) eat('-');
      if (!digits()) return false;
    }
    return true;
  }

  std::string_view s_;
  std::size_t i_ = 0;
  int depth_ = 0;
};

// Every rank's two threads record `per_thread(rank)` events each.
int per_thread(int rank) {
  return 20 + 7 * rank;
}

void record_from_two_threads(Trace& trace, int rank) {
  std::vector<std::thread> workers;
  for (int t = 0; t < 2; ++t)
    workers.emplace_back([&trace, rank, t] {
      for (int i = 0; i < per_thread(rank); ++i) {
        TraceEvent ev;
        ev.name = i % 2 == 0 ? "task" : "send";
        ev.cat = i % 2 == 0 ? "task" : "message";
        ev.ts_us = trace.now_us();
        ev.dur_us = 1.5;
        ev.tid = t;
        ev.ints[0] = {"level", i % 5};
        ev.ints[2] = {"bytes", std::int64_t{1} << 40};
        ev.text_name = "block";
        ev.text_value = "(2: 3,4,5)";
        if (i == 0) ev.text_value = "q\"b\\n\nt\tc\x01 u\xc3\xa9 bad\xff";
        trace.record(std::move(ev));
      }
    });
  for (auto& w : workers) w.join();
}

TEST(Trace, DisabledRecordsNothing) {
  Trace trace;
  EXPECT_FALSE(trace.enabled());
  trace.set_threads(4);
  TraceEvent ev;
  ev.name = "task";
  ev.cat = "task";
  trace.record(ev);
  EXPECT_EQ(trace.size(), 0u);
  EXPECT_EQ(trace.now_us(), 0.0);
}

TEST(Trace, RecordsPerThreadAndDropsUnknownThreads) {
  Trace trace(1);
  EXPECT_TRUE(trace.enabled());
  const double t0 = trace.now_us();
  EXPECT_GE(trace.now_us(), t0);
  TraceEvent ev;
  ev.name = "refine";
  ev.cat = "mesh";
  ev.tid = 2;
  trace.record(ev);  // no buffer for thread 2 yet
  EXPECT_EQ(trace.size(), 0u);
  trace.set_threads(3);
  trace.record(ev);
  EXPECT_EQ(trace.size(), 1u);
  trace.set_threads(1);  // shrinking keeps what was recorded
  EXPECT_EQ(trace.size(), 1u);
}

TEST(Trace, WritesEveryRanksEventsToOneFile) {
  Communicator comm;
  const int rank = comm.rank(), ranks = comm.size();
  ScratchDir dir;
  Trace trace(2);
  record_from_two_threads(trace, rank);
  ASSERT_TRUE(all_ranks(trace.size() == 2 * std::size_t(per_thread(rank)), "local event count"));
  const std::int64_t total = world_sum(std::int64_t(trace.size()));

  const std::string path = rank == 0 ? (dir.path() / "trace.json").string() : std::string();
  // Twice: the second write replaces the first file.
  for (int round = 0; round < 2; ++round) {
    const bool wrote = trace.write(comm, path).empty();
    ASSERT_TRUE(all_ranks(wrote, "write returned false"));

    bool ok = true;
    std::string why;
    if (rank == 0) {
      const std::string text = read_file(path);
      const auto expect = [&](bool cond, const std::string& what) {
        if (!cond && ok) why = what;
        ok = ok && cond;
      };
      expect(JsonChecker(text).valid(), "not valid JSON");
      expect(text.starts_with("{\"traceEvents\":["), "no traceEvents array first");
      expect(text.find("\"displayTimeUnit\":\"ms\"") != std::string::npos, "no displayTimeUnit");
      expect(text.find("\"otherData\":{") != std::string::npos, "no otherData");
      expect(text.find("\"events\":" + std::to_string(total)) != std::string::npos,
             "otherData's event count");
      expect(count(text, "\"ph\":\"X\"") == std::size_t(total),
             "complete events: " + std::to_string(count(text, "\"ph\":\"X\"")) + " of " +
                 std::to_string(total));
      expect(count(text, "\"name\":\"thread_name\"") == 2 * std::size_t(ranks), "thread names");
      for (int r = 0; r < ranks; ++r) {
        const std::string pid = "\"pid\":" + std::to_string(r) + ",";
        expect(count(text, pid) >= 2 * std::size_t(per_thread(r)), "events of rank " + pid);
        expect(text.find("\"name\":\"rank " + std::to_string(r) + "\"") != std::string::npos,
               "process name of rank " + std::to_string(r));
      }
      expect(text.find("\"name\":\"worker 1\"") != std::string::npos, "thread name worker 1");
      const std::string args = R"j("args":{"level":0,"bytes":1099511627776,"block":"(2: 3,4,5)"})j";
      expect(text.find(args) != std::string::npos, "args");
      const std::string escaped = R"j("block":"q\"b\\n\nt\tc\u0001 u)j"
                                  "\xc3\xa9"
                                  R"j( bad\ufffd")j";
      expect(count(text, escaped) == 2 * std::size_t(ranks), "escaped text");
      const auto names = entries(dir.path());
      expect(names == std::vector<std::string>{"trace.json"}, "leftover files in the directory");
    }
    ASSERT_TRUE(all_ranks(ok, why));
  }
}

TEST(Trace, UnwritablePathFailsOnEveryRank) {
  Communicator comm;
  ScratchDir dir;
  Trace trace(2);
  record_from_two_threads(trace, comm.rank());
  const fs::path d = dir.path();
  // The path only matters on rank 0; the other ranks pass a writable-looking one to show that
  // rank 0's verdict is the one every rank returns.
  const std::vector<std::string> bad = {(d / "missing" / "trace.json").string(), d.string()};
  for (const auto& p : bad) {
    const std::string path = comm.is_root() ? p : std::string("trace.json");
    const bool wrote = trace.write(comm, path).empty();
    ASSERT_TRUE(all_ranks(!wrote, "write to " + p + " returned true"));
  }
  bool clean = !comm.is_root() || entries(d).empty();
  ASSERT_TRUE(all_ranks(clean, "files left behind"));
}

// More text than one message piece (1 MiB) on every rank, so parts arrive in several messages.
TEST(Trace, LongTraceArrivesWhole) {
  Communicator comm;
  ScratchDir dir;
  Trace trace(1);
  const int n = 12000 + comm.rank();
  for (int i = 0; i < n; ++i) {
    TraceEvent ev;
    ev.name = "recv";
    ev.cat = "message";
    ev.ts_us = double(n - i);  // reverse order: the file is sorted by time
    ev.dur_us = 0.25;
    ev.ints[0] = {"peer", i % 4};
    ev.ints[1] = {"bytes", 8 * i};
    ev.text_name = "block";
    ev.text_value = "(" + std::to_string(i % 20) + ": 1023,1023,1023)";
    trace.record(std::move(ev));
  }
  const std::int64_t total = world_sum(n);
  const std::string path = comm.is_root() ? (dir.path() / "long.json").string() : std::string();
  ASSERT_TRUE(all_ranks(trace.write(comm, path).empty(), "write failed"));
  bool ok = true;
  if (comm.is_root()) {
    const std::string text = read_file(path);
    ok = text.size() > std::size_t(comm.size()) << 20 && JsonChecker(text).valid() &&
         count(text, "\"ph\":\"X\"") == std::size_t(total);
  }
  ASSERT_TRUE(all_ranks(ok, "long trace incomplete or malformed"));
}

}  // namespace

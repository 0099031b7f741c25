// The benchmark's input: which tests to run, over which message sizes, how often. Parsed from
// YAML text on every rank (rank 0 reads the file and broadcasts it), so every rank agrees on the
// tests and on any error before a single message is timed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace miniamr::netbench {

enum class TestKind {
  kPingPong,           // one-way latency: half the round trip of a blocking send and receive
  kStream,             // one direction: a window of nonblocking sends, then one acknowledgement
  kBidirectional,      // both directions at once: a window each way
  kAllreduce,          // MPI_Allreduce of doubles over every rank
  kNeighbourExchange,  // a stage's halo pattern: every rank Isend/Irecv to several partners
};

// The name in config files and in results.csv ("pingpong", "neighbour_exchange").
std::string_view test_name(TestKind kind);
// A point-to-point test runs between two ranks; the others involve every rank.
bool is_point_to_point(TestKind kind);

struct SizeRange {
  std::int64_t min_bytes = 0, max_bytes = 0;
  double factor = 2;  // each size is the previous one times this (> 1), rounded
};

struct TestSpec {
  TestKind kind = TestKind::kPingPong;
  SizeRange sizes;
  int reps = 1;        // timed repetitions per size
  int warmup = 0;      // untimed ones before them (page faults, protocol set-up)
  int window = 1;      // messages in flight per repetition (stream, bidirectional)
  int neighbours = 1;  // messages each rank sends and receives (neighbour_exchange)
};

struct BenchConfig {
  std::vector<TestSpec> tests;  // in the file's order, each kind at most once
};

// Parses the text of a config file. Throws app::UsageError naming `path`, the line, the test and
// the problem: YAML syntax, an unknown or missing key, an unknown test, a size below 1, min above
// max, a factor of at most 1, reps below 1, a value that is not a number, a test given twice.
BenchConfig parse_config(std::string_view text, const std::string& path);

// The message sizes of a range: min, then each previous size times the factor (rounded, and at
// least one byte more), up to max.
std::vector<std::int64_t> message_sizes(const SizeRange& range);

// Bounds that keep every buffer and MPI count in range.
constexpr std::int64_t kMaxMessageBytes = std::int64_t{1} << 28;  // 256 MiB
constexpr std::int64_t kMaxBufferBytes = std::int64_t{1} << 30;   // per rank, all messages
constexpr int kMaxReps = 1000000;
constexpr int kMaxWindow = 1024;

}  // namespace miniamr::netbench

#include "netbench/config.hpp"

#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "app/errors.hpp"
#include "io/printable.hpp"

namespace miniamr::netbench {

namespace {

using app::UsageError;

constexpr TestKind kKinds[] = {TestKind::kPingPong, TestKind::kStream, TestKind::kBidirectional,
                               TestKind::kAllreduce, TestKind::kNeighbourExchange};

// Where a problem is: "<path>:<line>" (yaml-cpp counts lines from 0; a node without a mark, as
// for a missing key, names the file only).
std::string where(const std::string& path, const YAML::Mark& mark) {
  if (mark.is_null()) return path;
  return fmt::format("{}:{}", path, mark.line + 1);
}

// The scalars of a config are short; anything else is echoed cut and escaped.
std::string shown_node(const YAML::Node& node) {
  if (node.IsScalar()) return io::shown(node.Scalar());
  return node.IsSequence() ? "a list" : node.IsMap() ? "a map" : "nothing";
}

// Reads one test entry, naming the file, line and test in every error.
class EntryReader {
 public:
  EntryReader(const std::string& path, const YAML::Node& entry, std::size_t index)
      : path_(path), entry_(entry), label_(fmt::format("tests[{}]", index)) {}

  [[noreturn]] void fail(const YAML::Node& at, std::string_view what) const {
    throw UsageError(fmt::format(
        "{}: {}: {}", where(path_, at.IsDefined() ? at.Mark() : entry_.Mark()), label_, what));
  }

  void set_label(std::string label) { label_ = std::move(label); }

  // Every key of `map` must be one of `allowed`, and given once.
  void check_keys(const YAML::Node& map, std::string_view prefix,
                  std::initializer_list<std::string_view> allowed) const {
    std::set<std::string> seen;
    for (const auto& kv : map) {
      const YAML::Node key = kv.first;
      const std::string name = key.IsScalar() ? key.Scalar() : std::string();
      bool known = false;
      for (std::string_view a : allowed) known = known || a == name;
      if (!known) {
        std::string list;
        for (std::string_view a : allowed) list += fmt::format("{}{}", list.empty() ? "" : ", ", a);
        fail(key,
             fmt::format("unknown key {} (expected {})",
                         key.IsScalar() ? io::shown(std::string(prefix) + name) : shown_node(key),
                         list));
      }
      if (!seen.insert(name).second)
        fail(key, fmt::format("the key {}{} is given twice", prefix, name));
    }
  }

  YAML::Node required(const YAML::Node& map, std::string_view key, std::string_view shown) const {
    const YAML::Node v = map[std::string(key)];
    if (!v.IsDefined() || v.IsNull()) fail(map, fmt::format("the key '{}' is missing", shown));
    return v;
  }

  std::int64_t integer(const YAML::Node& v, std::string_view key, std::int64_t lo,
                       std::int64_t hi) const {
    std::int64_t x = 0;
    if (!v.IsScalar() || !YAML::convert<std::int64_t>::decode(v, x))
      fail(v, fmt::format("'{}' expects an integer, got {}", key, shown_node(v)));
    // The bound that was crossed: a count too large is not "below 1".
    if (x < lo)
      fail(v, hi == std::numeric_limits<std::int64_t>::max() || hi == kMaxReps
                  ? fmt::format("'{}' must be at least {}, got {}", key, lo, x)
                  : fmt::format("'{}' must be between {} and {}, got {}", key, lo, hi, x));
    if (x > hi) fail(v, fmt::format("'{}' must be at most {}, got {}", key, hi, x));
    return x;
  }
  int small_integer(const YAML::Node& v, std::string_view key, int lo, int hi) const {
    return int(integer(v, key, lo, hi));
  }

  double real(const YAML::Node& v, std::string_view key) const {
    double x = 0;
    if (!v.IsScalar() || !YAML::convert<double>::decode(v, x) || !std::isfinite(x))
      fail(v, fmt::format("'{}' expects a number, got {}", key, shown_node(v)));
    return x;
  }

 private:
  const std::string& path_;
  const YAML::Node& entry_;
  std::string label_;
};

TestKind kind_named(const EntryReader& r, const YAML::Node& name_node) {
  if (name_node.IsScalar())
    for (TestKind k : kKinds)
      if (test_name(k) == name_node.Scalar()) return k;
  r.fail(name_node, fmt::format("unknown test {} (expected pingpong, stream, bidirectional, "
                                "allreduce or neighbour_exchange)",
                                shown_node(name_node)));
}

SizeRange read_sizes(const EntryReader& r, const YAML::Node& sizes) {
  if (!sizes.IsMap())
    r.fail(sizes, fmt::format("'sizes' expects a map {{min: ..., max: ..., factor: ...}}, got {}",
                              shown_node(sizes)));
  r.check_keys(sizes, "sizes.", {"min", "max", "factor"});
  SizeRange s;
  s.min_bytes = r.integer(r.required(sizes, "min", "sizes.min"), "sizes.min", 1, kMaxMessageBytes);
  s.max_bytes = r.integer(r.required(sizes, "max", "sizes.max"), "sizes.max", 1, kMaxMessageBytes);
  if (s.min_bytes > s.max_bytes)
    r.fail(sizes,
           fmt::format("sizes.min {} is larger than sizes.max {}", s.min_bytes, s.max_bytes));
  const YAML::Node factor = r.required(sizes, "factor", "sizes.factor");
  s.factor = r.real(factor, "sizes.factor");
  if (!(s.factor > 1) || s.factor > 1024)
    r.fail(factor,
           fmt::format("'sizes.factor' must be above 1 and at most 1024, got {}", factor.Scalar()));
  return s;
}

TestSpec read_test(const std::string& path, const YAML::Node& entry, std::size_t index) {
  EntryReader r(path, entry, index);
  if (!entry.IsMap())
    r.fail(entry, fmt::format("a test is a map {{name: ..., sizes: ..., reps: ...}}, got {}",
                              shown_node(entry)));
  const YAML::Node name = r.required(entry, "name", "name");
  TestSpec t;
  t.kind = kind_named(r, name);
  r.set_label(fmt::format("tests[{}] ({})", index, test_name(t.kind)));
  switch (t.kind) {
    case TestKind::kStream:
    case TestKind::kBidirectional:
      r.check_keys(entry, "", {"name", "sizes", "reps", "warmup", "window"});
      break;
    case TestKind::kNeighbourExchange:
      r.check_keys(entry, "", {"name", "sizes", "reps", "warmup", "neighbours"});
      break;
    default:
      r.check_keys(entry, "", {"name", "sizes", "reps", "warmup"});
  }
  t.sizes = read_sizes(r, r.required(entry, "sizes", "sizes"));
  t.reps = r.small_integer(r.required(entry, "reps", "reps"), "reps", 1, kMaxReps);
  if (const YAML::Node w = entry["warmup"]; w.IsDefined())
    t.warmup = r.small_integer(w, "warmup", 0, kMaxReps);
  if (t.kind == TestKind::kStream || t.kind == TestKind::kBidirectional) {
    t.window = 16;  // OSU's osu_bw default is 64; 16 keeps the CI config's buffers small
    if (const YAML::Node w = entry["window"]; w.IsDefined())
      t.window = r.small_integer(w, "window", 1, kMaxWindow);
  }
  if (t.kind == TestKind::kNeighbourExchange) {
    t.neighbours = 6;  // a block's faces
    if (const YAML::Node n = entry["neighbours"]; n.IsDefined())
      t.neighbours = r.small_integer(n, "neighbours", 1, 26);
  }
  const std::int64_t messages = std::max(t.window, t.neighbours);
  if (t.sizes.max_bytes * messages > kMaxBufferBytes)
    r.fail(entry, fmt::format("{} messages of up to {} bytes need more than the {} MiB of buffers "
                              "a rank may use",
                              messages, t.sizes.max_bytes, kMaxBufferBytes >> 20));
  return t;
}

}  // namespace

std::string_view test_name(TestKind kind) {
  switch (kind) {
    case TestKind::kPingPong:
      return "pingpong";
    case TestKind::kStream:
      return "stream";
    case TestKind::kBidirectional:
      return "bidirectional";
    case TestKind::kAllreduce:
      return "allreduce";
    case TestKind::kNeighbourExchange:
      return "neighbour_exchange";
  }
  return "unknown";
}

bool is_point_to_point(TestKind kind) {
  return kind == TestKind::kPingPong || kind == TestKind::kStream ||
         kind == TestKind::kBidirectional;
}

BenchConfig parse_config(std::string_view text, const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::ParserException& e) {
    throw UsageError(fmt::format("{}:{}:{}: not valid YAML: {}", path, e.mark.line + 1,
                                 e.mark.column + 1, e.msg));
  }
  if (!root.IsMap())
    throw UsageError(
        fmt::format("{}: expected a map with the key 'tests' (a list of tests), got {}", path,
                    shown_node(root)));
  for (const auto& kv : root)
    if (!kv.first.IsScalar() || kv.first.Scalar() != "tests")
      throw UsageError(fmt::format("{}: unknown key {} at the top level (expected tests)",
                                   where(path, kv.first.Mark()), shown_node(kv.first)));
  const YAML::Node tests = root["tests"];
  if (!tests.IsDefined() || tests.IsNull())
    throw UsageError(fmt::format("{}: the key 'tests' is missing", path));
  if (!tests.IsSequence() || tests.size() == 0)
    throw UsageError(
        fmt::format("{}: 'tests' must be a non-empty list of tests", where(path, tests.Mark())));
  BenchConfig config;
  for (std::size_t i = 0; i < tests.size(); ++i) {
    TestSpec t = read_test(path, tests[i], i);
    for (std::size_t j = 0; j < config.tests.size(); ++j)
      if (config.tests[j].kind == t.kind)
        throw UsageError(
            fmt::format("{}: tests[{}] ({}): this test is already tests[{}]; give "
                        "each test once",
                        where(path, tests[i].Mark()), i, test_name(t.kind), j));
    config.tests.push_back(t);
  }
  return config;
}

std::vector<std::int64_t> message_sizes(const SizeRange& range) {
  std::vector<std::int64_t> sizes;
  for (std::int64_t s = range.min_bytes; s <= range.max_bytes;) {
    sizes.push_back(s);
    const double next = std::floor(double(s) * range.factor + 0.5);
    s = std::max(s + 1, std::int64_t(next));
  }
  return sizes;
}

}  // namespace miniamr::netbench

#include "app/lb_replay.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/collective_error.hpp"
#include "app/errors.hpp"
#include "app/input_file.hpp"
#include "app/root_io.hpp"
#include "app/timeline.hpp"
#include "io/printable.hpp"
#include "octree/key.hpp"

namespace miniamr::app {

namespace {

using Json = nlohmann::json;

// A logged line nests three deep (line, moves, key); far deeper is not a log, and would only
// cost the parser time and memory.
constexpr int kMaxDepth = 8;

// The deepest nesting of arrays and objects in `line`, outside strings.
int nesting(std::string_view line) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char c : line) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

// Throws the line's error: "--lb_replay 'PATH' line N: WHY".
struct LineContext {
  const std::string& path;
  std::size_t line = 0;
  [[noreturn]] void fail(std::string_view why) const {
    throw UsageError(fmt::format("--lb_replay {} line {}: {}", io::shown(path, 200), line, why));
  }
};

std::int64_t integer(const Json& j, const char* key, std::int64_t low, std::int64_t high,
                     const LineContext& at) {
  const auto it = j.find(key);
  if (it == j.end()) at.fail(fmt::format("no \"{}\"", key));
  if (!it->is_number_integer() ||
      (it->is_number_unsigned() &&
       it->get<std::uint64_t>() > std::uint64_t(std::numeric_limits<std::int64_t>::max())))
    at.fail(fmt::format("\"{}\" must be an integer from {} to {}", key, low, high));
  const auto v = it->get<std::int64_t>();
  if (v < low || v > high)
    at.fail(fmt::format("\"{}\" is {}, outside {} to {}", key, v, low, high));
  return v;
}

// A range end: level 0..num_refine and coordinates on the root grid, on that level's lattice.
std::array<std::uint32_t, 4> block_key(const Json& move, const char* key, const Config& config,
                                       const LineContext& at) {
  const auto it = move.find(key);
  if (it == move.end() || !it->is_array() || it->size() != 4 ||
      !std::all_of(it->begin(), it->end(), [](const Json& v) { return v.is_number_integer(); }))
    at.fail(fmt::format("a move's \"{}\" must be 4 integers (level, x, y, z)", key));
  const auto word = [&](std::size_t i) {
    const Json& v = (*it)[i];
    return v.is_number_unsigned()
               ? v.get<std::uint64_t>()
               : (v.get<std::int64_t>() < 0 ? std::numeric_limits<std::uint64_t>::max()
                                            : v.get<std::uint64_t>());
  };
  const std::uint64_t level = word(0);
  if (level > std::uint64_t(config.num_refine))
    at.fail(fmt::format("a move's \"{}\" is at level {}, outside 0..{} (num_refine)", key,
                        (*it)[0].dump(), config.num_refine));
  const octree::RootGrid grid{config.root_blocks()};
  std::array<std::uint32_t, 4> k{std::uint32_t(level), 0, 0, 0};
  const std::uint64_t side = octree::side(int(level));
  for (int d = 0; d < 3; ++d) {
    const std::uint64_t x = word(std::size_t(d) + 1);
    if (x >= grid.extent(d) || x % side != 0)
      at.fail(fmt::format("a move's \"{}\" coordinate {} is not a level-{} block of the mesh", key,
                          (*it)[std::size_t(d) + 1].dump(), level));
    k[std::size_t(d) + 1] = std::uint32_t(x);
  }
  return k;
}

octree::Key key_of(const std::array<std::uint32_t, 4>& w) {
  octree::Key k;
  k.level = std::int8_t(w[0]);
  k.x = {w[1], w[2], w[3]};
  return k;
}

std::string key_text(const std::array<std::uint32_t, 4>& w) {
  return fmt::format("[{}, {}, {}, {}]", w[0], w[1], w[2], w[3]);
}

}  // namespace

ReplayLog parse_replay_log(std::string_view text, const std::string& path, const Config& config,
                           int ranks) {
  ReplayLog log;
  LineContext at{path};
  bool header = false;
  std::optional<std::int64_t> previous;  // the last timestep seen
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++at.line;
    if (io::trim(line).empty()) continue;
    if (nesting(line) > kMaxDepth) at.fail("not a line of an --lb_log file (nested too deep)");
    Json j;
    try {
      j = Json::parse(line);
    } catch (const Json::exception&) {
      at.fail("not JSON: an --lb_log file has one JSON object per line");
    }
    if (!j.is_object()) at.fail("not a JSON object: an --lb_log file has one per line");
    if (!header) {
      if (!j.contains("miniamr_lb_log")) at.fail("not an --lb_log file (no miniamr_lb_log header)");
      if (integer(j, "miniamr_lb_log", 1, 1, at) != 1) at.fail("an unknown log version");
      const std::int64_t logged = integer(j, "ranks", 1, std::numeric_limits<int>::max(), at);
      if (logged != ranks)
        throw UsageError(fmt::format("--lb_replay {} was logged on {} ranks, this run has {}",
                                     io::shown(path, 200), logged, ranks));
      header = true;
      continue;
    }
    const std::int64_t ts = integer(j, "timestep", 0, std::numeric_limits<int>::max(), at);
    if (previous && ts <= *previous)
      at.fail(fmt::format("timestep {} after timestep {}: the timesteps of a log increase", ts,
                          *previous));
    previous = ts;
    if (const auto kind = j.find("kind"); kind != j.end() && *kind == "refinement") {
      const auto shares = j.find("shares");
      if (shares == j.end() || !shares->is_array() || shares->size() != std::size_t(ranks))
        at.fail(fmt::format("a refinement cut needs \"shares\": a list of {} numbers", ranks));
      std::vector<double>& cut = log.shares[int(ts)];
      for (const Json& share : *shares) {
        const double v = share.is_number() ? share.get<double>() : -1.0;
        if (!(v > 0 && v <= 1e6)) at.fail("a cut's shares must be positive numbers (at most 1e6)");
        cut.push_back(v);
      }
      if (const auto recut = j.find("recut"); recut != j.end()) {
        if (!recut->is_boolean()) at.fail("\"recut\" must be true or false");
        if (!recut->get<bool>()) log.kept.insert(int(ts));
      }
      continue;
    }
    const auto taken = j.find("taken");
    if (taken == j.end() || !taken->is_boolean()) at.fail("\"taken\" must be true or false");
    if (!taken->get<bool>()) continue;
    if (ts % config.lb_freq != 0 && !refines_after(config, int(ts) - 1))  // a recheck's
      at.fail(
          fmt::format("timestep {} is not a balancing step of --lb_freq {}", ts, config.lb_freq));
    const auto moves = j.find("moves");
    if (moves == j.end() || !moves->is_array()) at.fail("\"moves\" must be a list");
    auto& replayed = log.moves[int(ts)];
    for (const Json& m : *moves) {
      if (!m.is_object()) at.fail("a move must be an object {from, to, first, last, blocks}");
      ReplayMove mv;
      mv.from = int(integer(m, "from", 0, ranks - 1, at));
      mv.to = int(integer(m, "to", 0, ranks - 1, at));
      if (mv.from == mv.to) at.fail(fmt::format("a move from rank {} to itself", mv.from));
      mv.first = block_key(m, "first", config, at);
      mv.last = block_key(m, "last", config, at);
      mv.blocks = integer(m, "blocks", 1, std::numeric_limits<std::int64_t>::max(), at);
      replayed.push_back(mv);
    }
  }
  if (!header)
    throw UsageError(
        fmt::format("--lb_replay {}: empty, not an --lb_log file", io::shown(path, 200)));
  return log;
}

ReplayLog read_replay_log(const Config& config, const comm::Communicator& comm) {
  const std::string& path = config.lb_replay_path;
  const std::string text = text_from_root(
      comm.get(), [&] { return read_input_text(path, "--lb_replay", kMaxReplayBytes); });
  return parse_replay_log(text, path, config, comm.size());
}

std::vector<int> replay_targets(const ReplayLog& log, int ts, const comm::Communicator& comm,
                                const octree::LeafSet& leaves, std::span<const std::size_t> order) {
  const int me = comm.rank();
  std::vector<int> targets(order.size(), me);
  const auto it = log.moves.find(ts);
  // Every rank holds the same log: all return here together, or all go on to the verdict.
  if (it == log.moves.end()) return targets;
  std::string problem;
  const auto where = [&](const ReplayMove& m) {
    return fmt::format(
        "--lb_replay: timestep {}: the move of {} blocks from rank {} to rank {} ({} to {})", ts,
        m.blocks, m.from, m.to, key_text(m.first), key_text(m.last));
  };
  std::unordered_map<octree::Key, std::size_t> position;  // curve position of each block here
  std::vector<char> moved(order.size(), 0);
  for (const ReplayMove& m : it->second) {
    if (m.from != me || !problem.empty()) continue;
    if (position.empty())
      for (std::size_t p = 0; p < order.size(); ++p) position.emplace(leaves[order[p]], p);
    const auto first = position.find(key_of(m.first));
    const auto last = position.find(key_of(m.last));
    if (first == position.end() || last == position.end()) {
      problem = where(m) + fmt::format(
                               ": rank {} does not hold its {} block (the log is from "
                               "another run)",
                               me, first == position.end() ? "first" : "last");
    } else if (first->second > last->second) {
      problem = where(m) + ": its last block comes before its first along the curve";
    } else if (const auto n = std::int64_t(last->second - first->second + 1); n != m.blocks) {
      problem = where(m) + fmt::format(": the range holds {} blocks", n);
    } else {
      for (std::size_t p = first->second; p <= last->second; ++p) {
        if (moved[p] != 0) {
          problem = where(m) + ": it overlaps another move of that timestep";
          break;
        }
        moved[p] = 1;
        targets[p] = m.to;
      }
    }
  }
  // The runtime owns curve ranges: the new owners must not decrease along the curve, within this
  // rank's blocks and across the ranks (each rank's first and last new owner, gathered).
  if (problem.empty() && !std::is_sorted(targets.begin(), targets.end()))
    problem = fmt::format(
        "--lb_replay: timestep {}: the moves from rank {} leave its blocks' owners out of curve "
        "order (each rank owns one range of the curve, in rank order)",
        ts, me);
  const std::int64_t ends[3] = {std::int64_t(targets.size()), targets.empty() ? 0 : targets.front(),
                                targets.empty() ? 0 : targets.back()};
  std::vector<std::int64_t> all(3 * std::size_t(comm.size()));
  comm.allgather_bytes(ends, sizeof ends, all.data());
  std::optional<std::int64_t> before;  // the last new owner on the ranks before this one
  for (int r = 0; r < me; ++r)
    if (all[3 * std::size_t(r)] > 0) before = all[3 * std::size_t(r) + 2];
  if (problem.empty() && before && !targets.empty() && *before > targets.front())
    problem = fmt::format(
        "--lb_replay: timestep {}: the moves leave rank {}'s first block to rank {}, after "
        "blocks given to rank {} (each rank owns one range of the curve, in rank order)",
        ts, me, targets.front(), *before);
  all_or_none(comm.get(), "checking the replayed moves", [&] {
    if (!problem.empty()) throw RunError(problem);
  });
  return targets;
}

}  // namespace miniamr::app

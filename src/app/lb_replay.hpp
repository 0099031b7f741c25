// Balancing decisions replayed from an --lb_log file (--lb_replay). The log is read like a deck
// (a regular file of bounded size, on rank 0 for all), every line is checked against this run
// before it starts, and each timestep's moves are checked on every rank, with one verdict for
// all, before any block moves: a log from another run, or a damaged or hand-edited one, ends
// every rank with one message instead of leaving some waiting or corrupting the field.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "app/config.hpp"
#include "comm/mpi.hpp"
#include "octree/leaf_set.hpp"

namespace miniamr::app {

// Replay logs grow with the run (one line per decision); anything larger is a wrong path.
constexpr std::size_t kMaxReplayBytes = std::size_t{64} << 20;

// One logged move: rank `from` gives the blocks from `first` to `last` along the ownership curve
// (both ends included, `blocks` of them) to rank `to`.
struct ReplayMove {
  int from = 0, to = 0;
  std::array<std::uint32_t, 4> first{}, last{};  // level, x, y, z of the range's ends
  std::int64_t blocks = 0;
};

// What a log took, by timestep: the moves of the decisions taken, the shares of each
// refinement step's cut, and the refinement steps that changed nothing and kept their partition
// (a re-cut that did not pay: "recut": false).
struct ReplayLog {
  std::map<int, std::vector<ReplayMove>> moves;
  std::map<int, std::vector<double>> shares;
  std::set<int> kept;
};

// The cuts and moves of an --lb_log text, checked against a run of `config` on `ranks` ranks: the
// header names that many ranks; timesteps strictly increase, and those of decisions taken are
// balancing steps of --lb_freq; a cut gives each rank a positive finite share; each move names
// two different ranks of the run, ends at blocks of levels 0..num_refine on the root grid, and
// moves at least one block. Throws UsageError "--lb_replay 'PATH' line N: ...".
ReplayLog parse_replay_log(std::string_view text, const std::string& path, const Config& config,
                           int ranks);

// Collective. Rank 0 reads config.lb_replay_path (a regular file of at most kMaxReplayBytes) and
// every rank parses it; the same log or the same UsageError everywhere.
ReplayLog read_replay_log(const Config& config, const comm::Communicator& comm);

// Collective: every rank calls it at every balancing step. This rank's new owner for each of its
// blocks along the curve (`order`: positions of `leaves` in curve order) under the moves logged
// at `ts`. Before any rank acts every move is checked where it applies: its ends are blocks its
// `from` rank holds, in curve order, `blocks` apart, not overlapping another move, and the new
// owners follow one another along the whole curve (as the runtime's ownership of curve ranges
// needs). One verdict for all ranks: a RunError on every rank, naming the first bad move.
std::vector<int> replay_targets(const ReplayLog& log, int ts, const comm::Communicator& comm,
                                const octree::LeafSet& leaves, std::span<const std::size_t> order);

}  // namespace miniamr::app

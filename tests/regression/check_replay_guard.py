#!/usr/bin/env python3
"""Replay logs that are not this run's (--lb_replay) end every rank with one message, never a
hang, a crash or a corrupted field: a block that does not exist or that the `from` rank does not
hold, a move to the rank itself, a negative or repeated timestep, level 25, a coordinate of 2^70,
a range wider than the blocks it claims, moves that leave ownership out of curve order, /dev/zero
and a FIFO. A well-formed hand-written log replays and gives the results of the run without it.
Two ranks, 8 root blocks, so that the sanitizer build runs it too.

  check_replay_guard.py --miniamr BIN
"""
import concurrent.futures
import json
import os
import sys
import tempfile

import yaml

from mpi_env import failure_problems, result_differences, run_bounded, script_arguments, verdict

M = 1 << 20  # a level-0 block's side in key coordinates
OPTIONS = ["--runtime", "dynamic", "--nx", "4", "--ny", "4", "--nz", "4", "--num_vars", "1",
           "--num_refine", "1", "--init_x", "8", "--num_tsteps", "4", "--stages_per_ts", "2",
           "--checksum_freq", "1", "--lb_freq", "1", "--quiet"]


def block(x, level=0):
    return [level, x * M, 0, 0]


def move(frm, to, first, last, blocks):
    return {"from": frm, "to": to, "first": first, "last": last, "blocks": blocks}


def log(*decisions, ranks=2):
    """An --lb_log text: the header, then (timestep, moves) decisions taken."""
    lines = [{"miniamr_lb_log": 1, "ranks": ranks}]
    lines += [{"timestep": ts, "taken": True, "moves": moves} for ts, moves in decisions]
    return "".join(json.dumps(l) + "\n" for l in lines)


# Rank 0 holds blocks 0..3 along x, rank 1 blocks 4..7.
GOOD = log((2, [move(0, 1, block(2), block(3), 2)]), (3, [move(1, 0, block(2), block(2), 1)]))
# (name, log text, expected status, text the message must hold)
CASES = [
    ("missing", log((2, [move(0, 1, block(2, level=1), block(3), 2)])), 1,
     "rank 0 does not hold its first block (the log is from another run)"),
    ("not_held", log((2, [move(1, 0, block(2), block(3), 2)])), 1,
     "rank 1 does not hold its first block"),
    ("self", log((2, [move(1, 1, block(4), block(5), 2)])), 2, "line 2: a move from rank 1 to itself"),
    ("negative", log((-1, [move(0, 1, block(3), block(3), 1)])), 2,
     "line 2: \"timestep\" is -1, outside 0 to"),
    ("repeated", log((2, [move(0, 1, block(3), block(3), 1)]), (2, [])), 2,
     "line 3: timestep 2 after timestep 2: the timesteps of a log increase"),
    ("level25", log((2, [move(0, 1, block(3, level=25), block(3), 1)])), 2,
     "a move's \"first\" is at level 25, outside 0..1 (num_refine)"),
    ("huge", log((2, [move(0, 1, [0, 2 ** 70, 0, 0], block(3), 1)])), 2,
     "a move's \"first\" must be 4 integers"),
    ("outside", log((2, [move(0, 1, block(9), block(9), 1)])), 2,
     "coordinate 9437184 is not a level-0 block of the mesh"),
    ("wide", log((2, [move(0, 1, block(1), block(3), 1)])), 1, "the range holds 3 blocks"),
    ("middle", log((2, [move(0, 1, block(1), block(2), 2)])), 1,
     "the moves from rank 0 leave its blocks' owners out of curve order"),
    ("swap", log((2, [move(0, 1, block(0), block(3), 4), move(1, 0, block(4), block(7), 4)])), 1,
     "the moves leave rank 1's first block to rank 0, after blocks given to rank 1"),
    ("overlap", log((2, [move(0, 1, block(2), block(3), 2), move(0, 1, block(3), block(3), 1)])),
     1, "it overlaps another move of that timestep"),
    ("ranks", log((2, []), ranks=3), 2, "was logged on 3 ranks, this run has 2"),
    ("cut_ranks", log() + json.dumps({"timestep": 0, "kind": "refinement", "shares": [1]}) + "\n",
     2, "line 2: a refinement cut needs \"shares\": a list of 2 numbers"),
    ("cut_share", log() + json.dumps({"timestep": 0, "kind": "refinement", "shares": [1, -1]})
     + "\n", 2, "line 2: a cut's shares must be positive numbers"),
    ("nested", '{"miniamr_lb_log": 1, "ranks": 2}\n' + "[" * 100000 + "\n", 2,
     "nested too deep"),
    ("binary", '{"miniamr_lb_log": 1, "ranks": 2}\n\x00\xff\x1b[31m\n', 2, "line 2: not JSON"),
    ("/dev/zero", None, 2, "cannot read --lb_replay file '/dev/zero': it is not a regular file"),
    ("FIFO", None, 2, "it is not a regular file (a pipe, device or socket)"),
]


def main():
    a = script_arguments(deck=False).parse_args()
    miniamr = os.path.abspath(a.miniamr)
    failures = []
    with tempfile.TemporaryDirectory() as work:
        def run(*extra, cwd=work):
            cmd = ["mpirun", "-q", "-np", "2", "--oversubscribe", miniamr, *OPTIONS, *extra]
            return run_bounded(cmd, cwd, timeout=120)

        def check(case):
            name, text, status, want = case
            folder = os.path.join(work, name.strip("/").replace("/", "_"))
            os.mkdir(folder)
            if name == "/dev/zero":
                path = name
            elif name == "FIFO":
                path = os.path.join(folder, "fifo")
                os.mkfifo(path)  # no writer: opening it for reading would wait forever
            else:
                path = os.path.join(folder, "log.jsonl")
                with open(path, "w", encoding="latin-1") as f:
                    f.write(text)
            r = run("--lb_replay", path, "--report_perf", "1", cwd=folder)
            if r is None:
                return [f"{name}: no end within 120 s (a hang)"]
            problems = [f"{name}: {p}" for p in failure_problems(r, status, want)]
            if os.path.exists(os.path.join(folder, "results.yaml")):
                problems.append(f"{name}: results.yaml written")
            if problems:
                problems.append(f"{name}: stderr {r.stderr[-800:]!r}")
            return problems

        with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
            for problems in pool.map(check, CASES):
                failures += problems

        # A hand-written log that is this run's: the moves happen, the results do not change.
        with open(os.path.join(work, "good.jsonl"), "w") as f:
            f.write(GOOD)
        results = {}
        for name, extra in (("plain", ["--lb", "none"]),
                            ("replayed", ["--lb_replay", "good.jsonl", "--lb_log", "again.jsonl"])):
            r = run(*extra, "--results", f"{name}.yaml")
            if r is None or r.returncode != 0:
                failures.append(f"{name} run: {r and r.returncode}: {r and r.stderr[-600:]}")
                continue
            with open(os.path.join(work, f"{name}.yaml")) as f:
                results[name] = yaml.safe_load(f)
        if len(results) == 2:
            failures += result_differences(results["replayed"], results["plain"], "the run "
                                           "without a replay")
            if results["replayed"].get("blocks_migrated") != 3:
                failures.append(f"the good log moved {results['replayed'].get('blocks_migrated')} "
                                f"blocks, want 3")
    return verdict(failures, f"{len(CASES)} bad replay logs refused on every rank with one message; "
                             "a good one replays")


if __name__ == "__main__":
    sys.exit(main())

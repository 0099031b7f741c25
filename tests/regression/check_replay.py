#!/usr/bin/env python3
"""A balancing log replays exactly: the same cuts and moves at every timestep, the same digest.

  check_replay.py --miniamr BIN --deck DECK --np N -- [miniamr options]

Runs the deck with --runtime dynamic and the options, writing --lb_log; then again with
--lb_replay of that log (and a log of its own). The refinement steps must be cut by the same
shares and move the same blocks, the decisions taken must move the same ranges at every
timestep (so ownership is the same after each), at least one cut must have moved blocks and
one decision must have been taken, and the field_digest and final_checksums must agree.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import yaml

from mpi_env import mpi_env, result_differences, script_arguments, verdict


def run(cmd, work):
    env = mpi_env()
    p = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    with open(os.path.join(work, "results.yaml")) as f:
        return yaml.safe_load(f)


def read_log(path):
    """The log's refinement cuts {timestep: (shares, blocks)} and taken moves {timestep: moves}."""
    with open(path) as f:
        lines = [json.loads(l) for l in f if l.strip()]
    assert "miniamr_lb_log" in lines[0], f"{path}: no header line"
    cuts = {l["timestep"]: (l["shares"], l["blocks"]) for l in lines[1:]
            if l.get("kind") == "refinement"}
    moves = {l["timestep"]: l["moves"] for l in lines[1:]
             if l.get("kind", "decision") == "decision" and l["taken"]}
    return cuts, moves


def main():
    ap = script_arguments()
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("extra", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    extra = [x for x in a.extra if x != "--"]
    base = ["mpirun", "-np", str(a.np), "--oversubscribe", os.path.abspath(a.miniamr),
            os.path.abspath(a.deck), "--runtime", "dynamic"]
    if "--report_perf" not in extra:
        base += ["--report_perf", "1"]
    with tempfile.TemporaryDirectory() as work:
        first = run(base + extra + ["--lb_log", "first.jsonl"], work)
        replay = run(base + extra + ["--lb_replay", "first.jsonl", "--lb_log", "replay.jsonl"],
                     work)
        want_cuts, want = read_log(os.path.join(work, "first.jsonl"))
        got_cuts, got = read_log(os.path.join(work, "replay.jsonl"))
    failures = []
    if not want:
        failures.append("the first run took no balancing decision: nothing to replay")
    if not any(blocks for _, blocks in want_cuts.values()):
        failures.append("no refinement cut of the first run moved blocks: nothing to replay")
    if want != got:
        differ = sorted(set(want) ^ set(got)) or [t for t in want if want[t] != got.get(t)]
        failures.append(f"replayed moves differ at timesteps {differ[:5]}")
    if want_cuts != got_cuts:
        differ = sorted(t for t in set(want_cuts) | set(got_cuts)
                        if want_cuts.get(t) != got_cuts.get(t))
        failures.append(f"replayed refinement cuts differ at timesteps {differ[:5]}")
    failures += result_differences(replay, first, "the logged run")
    if replay.get("blocks_migrated") != first.get("blocks_migrated"):
        failures.append(f"blocks_migrated {replay.get('blocks_migrated')} != "
                        f"{first.get('blocks_migrated')}")
    return verdict(failures,
                   f"{len(want)} decisions and {len(want_cuts)} refinement cuts replayed, "
                   f"{first['blocks_migrated']} blocks moved")


if __name__ == "__main__":
    sys.exit(main())

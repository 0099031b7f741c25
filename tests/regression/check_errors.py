#!/usr/bin/env python3
"""Bad input must end with one clear message on rank 0, exit status 2 (usage) or 1 (run-time
failure), no crash, no hang and no results file. Runs every case on 2 ranks.

  check_errors.py --miniamr BIN --inputs DIR
"""
import argparse
import os
import subprocess
import sys
import tempfile

from mpi_env import mpi_env

SPHERE = ["--object", "2", "0", "0.5", "0.5", "0.5", "0", "0", "0", "0.3", "0.3", "0.3", "0", "0", "0"]

# (arguments, expected status, text the message must contain)
CASES = [
    (["--nz_", "4"], 2, "unknown option '--nz_' (did you mean '--nz'?)"),
    (["--nx"], 2, "missing value for --nx"),
    (["--nx", "abc"], 2, "--nx expects an integer, got 'abc'"),
    (["--nx", "3.9"], 2, "--nx expects an integer, got '3.9'"),
    (["--nx", "7"], 2, "--nx must be a positive even number"),
    (["--nx", "-4"], 2, "--nx must be a positive even number"),
    (["--object", "2", "0", "1"], 2, "expects 14 values"),
    (["--stencil", "5"], 2, "--stencil must be 0, 7 or 27"),
    (["--num_refine", "25"], 2, "--num_refine must be between 0 and 20"),
    (["--time", "0"], 2, "--time must be positive"),
    (["--comm_vars", "-1"], 2, "--comm_vars"),
    (["--num_objects", "2"] + SPHERE, 2, "fewer --object than --num_objects"),
    (["/nonexistent/deck.deck"], 2, "cannot read deck file"),
    (["DECK_WITH_TYPO"], 2, "unknown key 'nxx' (did you mean 'nx'?)"),
    (["--num_vars", "1", "--num_refine", "2", "--uniform_refine", "1", "--max_blocks", "4",
      "--nx", "4", "--ny", "4", "--nz", "4"], 1, "more than --max_blocks 4"),
    (["--num_vars", "1", "--num_refine", "2", "--error_tol", "40", "--nx", "4", "--ny", "4",
      "--nz", "4", "--num_tsteps", "1", "--checksum_freq", "1", "--num_objects", "1"] + SPHERE,
     1, "difference too large"),
    (["--runtime", "foo"], 2, "--runtime must be static or dynamic, got 'foo'"),
    (["--threads", "0"], 2, "--threads must be at least 1, got 0"),
    (["--threads", "-1"], 2, "--threads must be at least 1, got -1"),
    (["--task_order_seed", "-2"], 2, "--task_order_seed must be at least 0, got -2"),
    (["--trace", "/nonexistent-dir/t.json"], 2, "--trace '/nonexistent-dir/t.json': cannot write"),
    (["--dump_graph", "/nonexistent-dir/g.dot"], 2,
     "--dump_graph '/nonexistent-dir/g.dot': cannot write"),
    (["--trace", "A_DIRECTORY"], 2, "--trace 'a_directory': cannot write"),
    (["--runtime", "dynamic", "--slow_rank", "5:2"], 2, "--slow_rank 5:2: there are only ranks 0 to 1"),
    (["--slow_rank", "1:0.5"], 2, "--slow_rank factor must be at least 1"),
    (["--slow_rank", "x"], 2, "--slow_rank expects RANK:FACTOR"),
    (["--slow_rank", "1:abc"], 2, "--slow_rank factor expects a number, got 'abc'"),
    (["--runtime", "dynamic", "--lb", "foo"], 2, "--lb must be one of none, diffusion, sfc"),
    (["--lb", "sfc"], 2, "--lb chooses the dynamic runtime's balancer"),
    (["--runtime", "dynamic", "--lb_threshold", "0.5"], 2, "--lb_threshold must be at least 1"),
    (["--runtime", "dynamic", "--lb_max_move", "0"], 2, "--lb_max_move must be above 0"),
    (["--runtime", "dynamic", "--lb_max_move", "2"], 2, "--lb_max_move must be above 0"),
    (["--lb_log", "log.jsonl"], 2, "--lb_log logs the dynamic runtime's balancer"),
    (["--runtime", "dynamic", "--lb_replay", "/nonexistent/log.jsonl"], 2,
     "--lb_replay '/nonexistent/log.jsonl': cannot read the file"),
    (["--runtime", "dynamic", "--lb_replay", "DECK_WITH_TYPO"], 2, "line 1:"),
    (["--runtime", "dynamic", "--lb_replay", "REPLAY3"], 2, "was logged on 3 ranks, this run has 2"),
    # Object speeds that make the --time step zero (an endless loop) or infinite.
    (["--time", "1", "--num_objects", "1", "--object", "2", "0", "0.5", "0.5", "0.5", "1e308", "0",
      "0", "0.1", "0.1", "0.1", "0", "0", "0"], 2, "--time: the objects' speeds give a time step"),
    (["--time", "1", "--num_objects", "1", "--object", "2", "0", "0.5", "0.5", "0.5", "1e-321",
      "0", "0", "0.1", "0.1", "0.1", "0", "0", "0"], 2, "--time: the objects' speeds give a time step"),
]


def listing(top):
    """Every file and directory under top, relative to it."""
    return {os.path.relpath(os.path.join(d, n), top) for d, dirs, files in os.walk(top)
            for n in dirs + files}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--miniamr", required=True)
    a = ap.parse_args()
    env = mpi_env()
    failures = 0
    with tempfile.TemporaryDirectory() as work:
        typo = os.path.join(work, "typo.deck")
        with open(typo, "w") as f:
            f.write("# a deck with a misspelt key\nnum_refine = 1\nnxx = 8\n")
        os.mkdir(os.path.join(work, "a_directory"))
        replay3 = os.path.join(work, "replay3.jsonl")
        with open(replay3, "w") as f:
            f.write('{"miniamr_lb_log": 1, "ranks": 3}\n')
        before = listing(work)
        for args, status, text in CASES:
            args = [typo if x == "DECK_WITH_TYPO" else x for x in args]
            args = ["a_directory" if x == "A_DIRECTORY" else x for x in args]
            args = [replay3 if x == "REPLAY3" else x for x in args]
            cmd = ["mpirun", "-q", "-np", "2", "--oversubscribe", os.path.abspath(a.miniamr)] + args
            try:
                run = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True,
                                     timeout=120)
            except subprocess.TimeoutExpired:
                print(f"FAIL (hang) {' '.join(args)}")
                failures += 1
                continue
            problems = []
            if run.returncode != status:
                problems.append(f"exit status {run.returncode}, want {status}")
            if run.stderr.count(text) != 1:
                problems.append(f"stderr should hold {text!r} exactly once")
            if "MPI_ABORT" in run.stderr or "Segmentation" in run.stderr or "signal" in run.stderr:
                problems.append("abort or signal banner")
            if os.path.exists(os.path.join(work, "results.yaml")):
                problems.append("results.yaml written")
            after = listing(work)
            if after != before:
                problems.append(f"files written: {sorted(after - before)}")
                for path in sorted(after - before, reverse=True):
                    full = os.path.join(work, path)
                    os.rmdir(full) if os.path.isdir(full) else os.remove(full)
            if problems:
                failures += 1
                print(f"FAIL {' '.join(args)}: {'; '.join(problems)}\n--- stdout\n{run.stdout[-2000:]}"
                      f"\n--- stderr\n{run.stderr[-2000:]}")
            else:
                print(f"ok   {' '.join(args)} -> {status}")
        # --help: miniamr's own help on stdout, exit 0.
        run = subprocess.run(["mpirun", "-q", "-np", "2", "--oversubscribe",
                              os.path.abspath(a.miniamr), "--help"], cwd=work, env=env,
                             capture_output=True, text=True, timeout=120)
        if (run.returncode != 0 or not run.stdout.startswith("usage: miniamr")
                or run.stdout.count("usage: miniamr") != 1 or "--object" not in run.stdout):
            failures += 1
            print(f"FAIL --help: exit {run.returncode}\n{run.stdout[:500]}")
        else:
            print("ok   --help -> 0")
    print(f"{len(CASES) + 1 - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

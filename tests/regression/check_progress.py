#!/usr/bin/env python3
"""Rank 0's progress reaches a pipe while the run goes on, in the documented shape, and
--progress_every, --progress_interval, --quiet and --verbose change what is printed: by default
at most about a line a second, and always the last timestep's.

  check_progress.py --miniamr BIN --deck DECK
"""
import os
import re
import subprocess
import sys
import tempfile
import time

from mpi_env import mpi_env, script_arguments, verdict

LINE = re.compile(r"^step (\d+)/(\d+)  t=\S+  wall (\S+) s  \S+ s/step  \S+ cell-updates/s  "
                  r"blocks (\d+)  ETA \S+")


def main():
    a = script_arguments().parse_args()
    env = mpi_env()
    base = ["mpirun", "-q", "-np", "2", os.path.abspath(a.miniamr), os.path.abspath(a.deck)]
    failures = []
    with tempfile.TemporaryDirectory() as work:
        # Through a pipe, as under tee or a batch system: lines must arrive one by one.
        start = time.monotonic()
        # Enough work per timestep (64 stages) that the run outlasts the start-up and the pipe's
        # delivery on a fast machine: 16 stages took 0.18 s, too short to tell lines apart.
        proc = subprocess.Popen(base + ["--num_tsteps", "60", "--stages_per_ts", "64",
                                           "--num_vars", "2", "--progress_interval", "0"], cwd=work,
                                env=env, stdout=subprocess.PIPE, text=True, bufsize=1)
        arrivals = []
        for line in proc.stdout:
            if LINE.match(line):
                arrivals.append((time.monotonic() - start, line.rstrip()))
        proc.wait(timeout=300)
        end = time.monotonic() - start
        steps = [int(LINE.match(l).group(1)) for _, l in arrivals]
        if proc.returncode != 0:
            failures.append(f"the piped run failed: exit {proc.returncode}")
        elif steps != list(range(1, 61)):
            failures.append(f"progress lines for steps {steps[:5]}..., want 1..60")
        else:
            # A buffered pipe delivers every line at once, at the end. Lines that arrive as the
            # run goes spread over it, the first half of them well before the last (not in the
            # last tenth of the spread: the deck's late steps can be the quick ones).
            half = arrivals[29][0]
            spread = arrivals[-1][0] - arrivals[0][0]
            if spread < 0.2 or half > arrivals[-1][0] - 0.1 * spread:
                failures.append(f"lines arrived in a burst: step 30 at {half:.2f} s, step 60 at "
                                f"{arrivals[-1][0]:.2f} s, exit at {end:.2f} s")
            print(f"ok   piped progress: step 1 at {arrivals[0][0]:.2f} s, step 30 at "
                  f"{half:.2f} s, step 60 at {arrivals[-1][0]:.2f} s, exit at {end:.2f} s")
            print(f"     {arrivals[-1][1]}")

        def out(extra):
            p = subprocess.run(base + ["--num_tsteps", "12"] + extra, cwd=work, env=env,
                               capture_output=True, text=True, timeout=300)
            if p.returncode != 0:
                failures.append(f"{extra}: exit {p.returncode}\n{p.stderr[-500:]}")
            return p.stdout.splitlines()

        every = [int(LINE.match(l).group(1)) for l in
                 out(["--progress_every", "5", "--progress_interval", "0"]) if LINE.match(l)]
        if every != [5, 10, 12]:
            failures.append(f"--progress_every 5 printed steps {every}, want [5, 10, 12]")
        # By default at most about a line a second, and the last timestep's always: a run of
        # 60 short timesteps prints far fewer than 60 lines, each a second after the one before.
        for extra, gap in (([], 1.0), (["--progress_interval", "0.05"], 0.05)):
            lines = [LINE.match(l) for l in out(["--num_tsteps", "60", "--stages_per_ts", "16",
                                                 "--num_vars", "2"][2:] + extra) if LINE.match(l)]
            steps = [int(m.group(1)) for m in lines]
            walls = [float(m.group(3)) for m in lines]
            if not steps or steps[-1] != 12:
                failures.append(f"{extra}: no line for the last timestep: {steps}")
            elif any(b - a < gap - 0.011 for a, b in zip(walls[:-2], walls[1:-1])):
                failures.append(f"{extra}: lines closer than {gap} s apart: {walls}")
            if not extra and len(steps) > 1 + walls[-1] / gap + 1:
                failures.append(f"default: {len(steps)} lines in {walls[-1]} s")
        every_step = [l for l in out(["--progress_interval", "0"]) if LINE.match(l)]
        if len(every_step) != 12:
            failures.append(f"--progress_interval 0 printed {len(every_step)} lines, want 12")
        quiet = out(["--quiet"])
        if len(quiet) != 1 or not quiet[0].startswith("Summary: ranks 2 ts 12"):
            failures.append(f"--quiet printed {quiet[:5]}")
        verbose = out(["--verbose"])
        if sum(l.startswith("Timestep ") for l in verbose) != 12 or any(LINE.match(l)
                                                                        for l in verbose):
            failures.append("--verbose must print the reference's 12 Timestep lines and no "
                            "progress lines")
        normal = out([])
        tables = sum(l.startswith("Total number of blocks") for l in normal)
        all_tables = sum(l.startswith("Total number of blocks") for l in verbose)
        if not 1 <= tables < all_tables:
            failures.append(f"block tables: {tables} in a normal run (only when the mesh "
                            f"changed), {all_tables} with --verbose")
    return verdict(failures, "progress lines, --progress_every, --quiet and --verbose")


if __name__ == "__main__":
    sys.exit(main())

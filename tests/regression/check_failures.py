#!/usr/bin/env python3
"""Failures on some ranks end every rank: one clear message, a non-zero exit, no hang and no
signal; and runs that share a folder never mix or lose their results.

  check_failures.py --miniamr BIN --deck DECK

- a plot file that rank 0 cannot write in the middle of the run (a folder sits at its name), on 2
  and 3 ranks, both runtimes: exit 1 with rank 0's reason, printed once;
- results.yaml is a folder: refused before any work (exit 2);
- three runs at a time writing results.yaml in one folder, several rounds: each ends well and the
  file is always one whole run's results, with no temporary files left behind.
"""
import os
import subprocess
import sys
import tempfile
import time

import yaml

from mpi_env import failure_problems, mpi_env, script_arguments, verdict

def main():
    a = script_arguments().parse_args()
    env = mpi_env()
    exe = os.path.abspath(a.miniamr)
    deck = os.path.abspath(a.deck)
    failures = []

    def run(np, args, cwd, timeout=120):
        start = time.monotonic()
        try:
            p = subprocess.run(["mpirun", "-q", "-np", str(np), exe, deck] + args, cwd=cwd,
                               env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return None, timeout
        return p, time.monotonic() - start

    def expect(name, p, seconds, status, text):
        if p is None:
            failures.append(f"{name}: hang (no exit in {seconds} s)")
            return
        problems = failure_problems(p, status, text)
        if problems:
            failures.append(f"{name}: {'; '.join(problems)}\n{p.stderr[-1500:]}")
        else:
            print(f"ok   {name}: exit {status} in {seconds:.1f} s")

    with tempfile.TemporaryDirectory() as work:
        for runtime in ("static", "dynamic"):
            for np in (2, 3):
                d = os.path.join(work, f"plot_{runtime}_{np}")
                os.makedirs(os.path.join(d, "plot.02"))  # the second plot's name is taken
                p, s = run(np, ["--num_tsteps", "4", "--plot_freq", "2", "--runtime", runtime],
                           d)
                expect(f"plot file unwritable mid-run, {runtime}, {np} ranks", p, s, 1,
                       "cannot write plot file 'plot.02'")
                if p is not None and "End report" in p.stdout:
                    failures.append(f"plot {runtime} {np}: the run went on after the failure")

        d = os.path.join(work, "results_folder")
        os.makedirs(os.path.join(d, "results.yaml"))
        p, s = run(2, ["--report_perf", "1"], d)
        expect("results.yaml is a folder", p, s, 2,
               "--report_perf 1 'results.yaml': cannot write there: 'results.yaml' is a folder")
        if p is not None and ("step 1/" in p.stdout or "Number of blocks" in p.stdout):
            failures.append("results.yaml folder: work started before the refusal")

        d = os.path.join(work, "shared")
        os.mkdir(d)
        steps = (2, 3, 4)  # each run's results say which run wrote them
        for round_ in range(4):
            procs = [subprocess.Popen(["mpirun", "-q", "-np", "1", exe, deck, "--num_tsteps",
                                       str(n), "--report_perf", "1"], cwd=d, env=env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                     for n in steps]
            for n, proc in zip(steps, procs):
                try:
                    _, err = proc.communicate(timeout=120)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    failures.append(f"concurrent round {round_}: run {n} hung")
                    continue
                if proc.returncode != 0:
                    failures.append(f"concurrent round {round_}: run {n} exit {proc.returncode}"
                                    f"\n{err[-800:]}")
            with open(os.path.join(d, "results.yaml")) as f:
                try:
                    got = yaml.safe_load(f)
                except yaml.YAMLError as e:
                    failures.append(f"concurrent round {round_}: results.yaml is not YAML: {e}")
                    continue
            if not isinstance(got, dict) or got.get("num_tsteps") not in steps or \
                    "field_digest" not in got:
                failures.append(f"concurrent round {round_}: results.yaml is not one run's")
            left = sorted(set(os.listdir(d)) - {"results.yaml"})
            if left:
                failures.append(f"concurrent round {round_}: files left behind: {left}")
        if not any(f.startswith("concurrent") for f in failures):
            print("ok   3 concurrent runs x 4 rounds in one folder")

    return verdict(failures, "failures on some ranks end every rank; concurrent runs never mix")


if __name__ == "__main__":
    sys.exit(main())

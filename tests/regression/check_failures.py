#!/usr/bin/env python3
"""Failures on some ranks end every rank: one clear message, a non-zero exit, no hang and no
signal; and runs that share a folder never mix or lose their results.

  check_failures.py --miniamr BIN --deck DECK --plot-deck DECK

- a plot file that rank 0 cannot write in the middle of the run (a folder sits at its name), on 2
  and 3 ranks, both runtimes, text and xdmf plots: exit 1 with rank 0's reason, printed once;
  xdmf plots keep an index of the steps written before, and no temporary file;
- xdmf plots that outgrow a file-size limit (ulimit -f on the ranks) or, as root, a full disk
  (a small tmpfs): one message, exit 1, the index of the steps before, no temporary file;
- results.yaml is a folder: refused before any work (exit 2);
- three runs at a time writing results.yaml in one folder, several rounds: each ends well and the
  file is always one whole run's results, with no temporary files left behind.
"""
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

import yaml

from mpi_env import failure_problems, mpi_env, script_arguments, verdict

def indexed_steps(folder):
    """The timesteps plot.xmf lists (None when there is no index), and the temporary files
    left in the folder."""
    left = sorted(f for f in os.listdir(folder) if f.startswith(".") and f.endswith(".tmp"))
    path = os.path.join(folder, "plot.xmf")
    if not os.path.exists(path):
        return None, left
    grids = ET.parse(path).getroot().findall("Domain/Grid[@Name='blocks']/Grid")
    steps = [float(g.find("Time").get("Value")) for g in grids]
    missing = [g.find("Topology/DataItem").text.split(":")[0] for g in grids]
    missing = [f for f in missing if not os.path.exists(os.path.join(folder, f))]
    return (steps if not missing else None), left


def main():
    ap = script_arguments()
    ap.add_argument("--plot-deck", required=True, help="a deck whose mesh grows (xdmf cases)")
    a = ap.parse_args()
    env = mpi_env()
    exe = os.path.abspath(a.miniamr)
    deck = os.path.abspath(a.deck)
    failures = []

    def run(np, args, cwd, timeout=120, run_deck=deck):
        start = time.monotonic()
        try:
            p = subprocess.run(["mpirun", "-q", "-np", str(np), exe, run_deck] + args, cwd=cwd,
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

        for runtime, np in (("static", 2), ("dynamic", 3)):
            d = os.path.join(work, f"xdmf_{runtime}_{np}")
            os.makedirs(os.path.join(d, "plots", "plot.02.h5"))  # the second plot's name is taken
            p, s = run(np, ["--num_tsteps", "4", "--plot_freq", "2", "--runtime", runtime,
                            "--plot_format", "xdmf", "--plot_dir", "plots"], d)
            expect(f"xdmf plot file unwritable mid-run, {runtime}, {np} ranks", p, s, 1,
                   "cannot write plot file 'plots/plot.02.h5': cannot rename the temporary file")
            steps, left = indexed_steps(os.path.join(d, "plots"))
            if steps != [0.0] or left:
                failures.append(f"xdmf {runtime} {np}: index lists {steps} (want [0.0]), "
                                f"temporary files {left}")

        # A file-size limit on the ranks only (mpirun's own shared memory files need room).
        plot_run = ["--num_tsteps", "10", "--plot_freq", "5", "--plot_format", "xdmf"]
        for np in (2, 3):
            d = os.path.join(work, f"fsize_{np}")
            os.mkdir(d)
            start = time.monotonic()
            try:
                p = subprocess.run(["mpirun", "-q", "-np", str(np), "prlimit", "--fsize=200000",
                                    exe, os.path.abspath(a.plot_deck)] + plot_run, cwd=d, env=env,
                                   capture_output=True, text=True, timeout=120)
            except subprocess.TimeoutExpired:
                p = None
            expect(f"xdmf plots over a file-size limit, {np} ranks", p, time.monotonic() - start,
                   1, "more than the file-size limit of 195 KiB (ulimit -f)")
            steps, left = indexed_steps(d)
            if steps != [0.0] or left:
                failures.append(f"file-size limit {np}: index lists {steps}, temporary files {left}")

        # A full disk: a 512 KiB tmpfs, where root may mount one.
        d = os.path.join(work, "full_disk")
        os.mkdir(d)
        mounted = os.geteuid() == 0 and subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", d], capture_output=True).returncode == 0
        if mounted:
            try:
                p, s = run(2, ["--num_tsteps", "30", "--plot_freq", "5", "--plot_format", "xdmf"],
                           d, run_deck=os.path.abspath(a.plot_deck))
                expect("xdmf plots on a full disk, 2 ranks", p, s, 1, "it needs: No space left on device")
                steps, left = indexed_steps(d)
                if not steps or steps[-1] >= 30 or left:
                    failures.append(f"full disk: index lists {steps}, temporary files {left}")
            finally:
                subprocess.run(["umount", d], capture_output=True)
        else:
            print("skip full disk: mounting a tmpfs needs root")

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

#!/usr/bin/env python3
"""`miniamr-study balancer LOG` reports what an --lb_log says.

  check_balancer_log.py --miniamr BIN --study TOOL --deck DECK -- [miniamr options]

A hand-written log of known figures gives its imbalance weighted by timesteps, the gap between
the work held and the shares cut, and the counts exactly. A real log (2 ranks, the dynamic
runtime with the options) gives one row per line and the counts that results.yaml has, and
writes its plot. Files that are not balancer logs end the tool with one message and exit 2.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

from mpi_env import run_results, script_arguments, verdict

# Two ranks. Timestep 10: the equal cut of timestep 0 held work 2:1 on equal speeds, measured 2
# and 1 (imbalance 4/3 over 10 timesteps). Timestep 15, a decision not taken: the cut of
# timestep 10 (2:1) held work 2:1 on speeds 2:1, 1 and 1 (balanced, over 5 timesteps). Timestep
# 20, a decision taken (3 blocks): work 3:1 held under that cut, 1 and 1 (over 5 timesteps).
# Weighted: (2 * 10 + 1 * 5 + 1 * 5) / (1.5 * 10 + 1 * 5 + 1 * 5) = 1.2, 1/6 of the time lost.
# Gaps: 1/6 over a stage time of 2 x 10, 0 over 1 x 5, 1/12 over 1 x 5: 0.125 on average, at
# most 1/6.
SYNTHETIC = [
    {"miniamr_lb_log": 1, "ranks": 2, "strategy": "sfc", "lb_threshold": 1.1, "lb_freq": 5,
     "link_model": "measured"},
    {"kind": "refinement", "timestep": 0, "blocks": 0, "shares": [0.5, 0.5], "speeds": [1, 1],
     "predicted_s_per_stage_before": [0, 0], "measured_s_per_stage": [0, 0]},
    {"kind": "refinement", "timestep": 10, "blocks": 3, "shares": [2, 1], "speeds": [1, 1],
     "predicted_s_per_stage_before": [2, 1], "measured_s_per_stage": [2, 1]},
    {"kind": "decision", "timestep": 15, "taken": False, "reason": "within noise",
     "shares": [2, 1], "speeds": [2, 1], "predicted_s_per_stage_before": [1, 1], "moves": []},
    {"kind": "decision", "timestep": 20, "taken": True, "reason": "pays", "shares": [3, 1],
     "speeds": [3, 1], "predicted_s_per_stage_before": [1, 1],
     "moves": [{"from": 0, "to": 1, "blocks": 2}, {"from": 0, "to": 1, "blocks": 1}]},
]


def write_lines(path, lines):
    """A log of JSON lines at `path`; returns the path."""
    with open(path, "w") as f:
        f.write("\n".join(json.dumps(line) for line in lines) + "\n")
    return path


def table_rows(report):
    return [line for line in report.splitlines() if re.match(r"\| \d+ \|", line)]


def study(tool, *args):
    return subprocess.run([sys.executable, tool, "balancer", *args], capture_output=True,
                          text=True, timeout=120)


def figure(pattern, text, what, failures):
    m = re.search(pattern, text)
    if not m:
        failures.append(f"{what}: no line matching {pattern!r} in\n{text[-800:]}")
        return None
    return m.groups()


def check_synthetic(tool, work, failures):
    p = study(tool, write_lines(os.path.join(work, "synthetic.jsonl"), SYNTHETIC))
    if p.returncode != 0:
        failures.append(f"synthetic log: exit {p.returncode}: {p.stderr[-400:]}")
        return
    rows = table_rows(p.stdout)
    if len(rows) != 4:
        failures.append(f"synthetic log: {len(rows)} rows, want 4:\n{p.stdout}")
    if "| 10 | refinement | cut, 3 blocks moved | 0.667 0.333 | 0.667 0.333 | 2 1 | 1.333 |" \
            not in p.stdout:
        failures.append(f"synthetic log: the row of timestep 10 is not as computed:\n{p.stdout}")
    got = figure(r"weighted by timesteps: (\d\.\d+) \((\d+\.\d)%", p.stdout, "synthetic",
                 failures)
    if got and got != ("1.200", "16.7"):
        failures.append(f"synthetic log: weighted imbalance {got}, want 1.200 and 16.7%")
    got = figure(r"(\d\.\d+) of the whole on average .*at most (\d\.\d+)", p.stdout, "synthetic",
                 failures)
    if got and got != ("0.125", "0.167"):
        failures.append(f"synthetic log: share gaps {got}, want 0.125 and 0.167")
    got = figure(r"Decisions: (\d+), (\d+) taken \((\d+) blocks moved\), not taken: (\d+) "
                 r"within noise", p.stdout, "synthetic", failures)
    if got and got != ("2", "1", "3", "1"):
        failures.append(f"synthetic log: decisions {got}, want 2, 1 taken (3 blocks), 1 within "
                        f"noise")
    if "| 20 | decision | taken, 3 blocks moved | 0.750 0.250 | 0.750 0.250 | 1 1 | 1.000 |" \
            not in p.stdout:
        failures.append(f"synthetic log: the row of timestep 20 is not as computed:\n{p.stdout}")


def check_bad_inputs(tool, work, failures):
    results = os.path.join(work, "results.yaml")
    with open(results, "w") as f:
        f.write("total_time_max: 1.0\n")
    headless = write_lines(os.path.join(work, "headless.jsonl"), SYNTHETIC[1:])
    short = write_lines(os.path.join(work, "short.jsonl"),
                        [SYNTHETIC[0], dict(SYNTHETIC[2], shares=[1.0])])
    binary = os.path.join(work, "binary")
    with open(binary, "wb") as f:
        f.write(bytes(range(256)))
    moves = write_lines(os.path.join(work, "moves.jsonl"),
                        [SYNTHETIC[0], dict(SYNTHETIC[4], moves=[{"blocks": "two"}])])
    for path, says in ((results, "not a JSON line"), (headless, "no --lb_log header"),
                       (short, "shares is not 2 numbers"), (binary, "not a balancer log"),
                       (moves, "not counts of blocks"), ("/dev/zero", "not a regular file"),
                       (os.path.join(work, "missing.jsonl"), "No such file")):
        p = study(tool, path)
        lines = p.stderr.strip().splitlines()
        if p.returncode != 2 or len(lines) != 1 or says not in lines[0] or p.stdout:
            failures.append(f"{os.path.basename(path)}: exit {p.returncode}, want 2 and one line "
                            f"saying {says!r}; stderr {p.stderr[-400:]!r}")


def check_real_log(a, extra, work, failures):
    report = [] if "--report_perf" in extra else ["--report_perf", "1"]
    doc = run_results(["mpirun", "-np", "2", os.path.abspath(a.miniamr), os.path.abspath(a.deck),
                       "--runtime", "dynamic", "--lb_log", "run.jsonl", *report, *extra], work)
    log = os.path.join(work, "run.jsonl")
    with open(log) as f:
        entries = [json.loads(line) for line in f if line.strip()][1:]
    png = os.path.join(work, "run.png")
    p = study(a.study, log, "--plot", png)
    if p.returncode != 0:
        failures.append(f"real log: exit {p.returncode}: {p.stderr[-400:]}")
        return
    rows = table_rows(p.stdout)
    if len(rows) != len(entries):
        failures.append(f"real log: {len(rows)} rows for {len(entries)} lines")
    if not os.path.exists(png) or os.path.getsize(png) == 0:
        failures.append("real log: no plot written")
    got = figure(r"Refinement cuts: (\d+), (\d+) blocks moved", p.stdout, "real", failures)
    want = (str(doc["lb_refinement_cuts"]), str(doc["blocks_migrated_at_refinement"]))
    if got and got != want:
        failures.append(f"real log: cuts and blocks {got}, results.yaml says {want}")
    got = figure(r"Decisions: (\d+), (\d+) taken \((\d+) blocks? moved", p.stdout, "real",
                 failures)
    by_decisions = doc["blocks_migrated"] - doc["blocks_migrated_at_refinement"]
    want = (doc["lb_decisions_taken"], by_decisions)
    if got and (int(got[1]), int(got[2])) != want:
        failures.append(f"real log: decisions taken and blocks they moved {got[1:]}, results.yaml "
                        f"says {want}")
    got = figure(r"weighted by timesteps: (\d+\.\d+)", p.stdout, "real", failures)
    if got and not 1.0 <= float(got[0]) < 10:
        failures.append(f"real log: weighted imbalance {got[0]}")


def main():
    ap = script_arguments()
    ap.add_argument("--study", required=True, help="tools/miniamr-study")
    ap.add_argument("extra", nargs="*")
    a = ap.parse_args()
    extra = [x for x in a.extra if x != "--"]
    failures = []
    with tempfile.TemporaryDirectory() as work:
        check_synthetic(a.study, work, failures)
        check_bad_inputs(a.study, work, failures)
        check_real_log(a, extra, work, failures)
    return verdict(failures, "miniamr-study balancer reports its logs")


if __name__ == "__main__":
    sys.exit(main())

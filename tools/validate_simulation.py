#!/usr/bin/env python3
"""Simulated against real: the scenario decks on 1 and 2 ranks of this machine, each runtime,
run for real (mpirun, the normal build) and simulated (tools/miniamr-simulate on
platforms/this_machine.xml with the compute calibration), alternately. Writes the table of
times and errors per phase, as Markdown, to --out and, with --docs, into docs/simulation.md between
its validation markers. Run it on a quiet machine: the real runs are the reference.

    tools/validate_simulation.py [--calibrate] [--num-tsteps N] [--ranks 1,2] [--docs]

Machines differ from day to day by more than the model's error, so --calibrate first measures
the kernels again (tools/calibrate_compute.py into --calibration): the table then compares
real and simulated runs of one sitting.

Each case's figures are kept in --rows (JSON), so cases measured in separate invocations (say
--ranks 1, then --ranks 2) make one table.
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # tools/: miniamr_results
import miniamr_results  # noqa: E402
from miniamr_results import system_python  # noqa: E402

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from miniamr_study import UsageError  # noqa: E402
from miniamr_study.inputs import check_output_file, read_text, run_tool  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DECKS = ("expanding_sphere", "moving_sphere", "two_spheres")
PHASES = (("total", "total_time_max"), ("compute", "compute_time_ave"),
          ("comm", "total_comm_ave"), ("refine", "refine_time_ave"),
          ("balance", "time_total_load_bal_ave"))
BEGIN, END = "<!-- simulation-validation:begin -->", "<!-- simulation-validation:end -->"


def revision():
    """The commit measured (`git describe`), as the figures' tables name it."""
    out = subprocess.run(["git", "-C", REPO, "describe", "--always", "--dirty"],
                         capture_output=True, text=True)
    return out.stdout.strip() or "unknown"


def env():
    e = dict(os.environ)
    for k in ("OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"):
        e.setdefault(k, "1")
    return e


def run(cmd, folder):
    out = os.path.join(folder, "r.yaml")
    r = subprocess.run(cmd + ["--results", out, "--quiet"], cwd=folder, env=env(),
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"validate_simulation: {' '.join(cmd)} failed:\n{r.stderr[-2000:]}")
    return miniamr_results.load(out)


def error(sim, real):
    return "-" if not real else f"{100 * (sim - real) / real:+.0f}%"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--miniamr", default=os.path.join(REPO, "build", "miniamr"))
    ap.add_argument("--simulation", default=os.path.join(REPO, "build-smpi", "miniamr"))
    ap.add_argument("--platform", default=os.path.join(REPO, "platforms", "this_machine.xml"))
    ap.add_argument("--calibration", default=os.path.join(REPO, "platforms", "calibration.yaml"))
    ap.add_argument("--num-tsteps", type=int, default=0, help="timesteps (0: each deck's own)")
    ap.add_argument("--out", default=os.path.join(REPO, "docs", "simulation_validation.md"))
    ap.add_argument("--docs", action="store_true",
                    help="also put the table into docs/simulation.md")
    ap.add_argument("--calibrate", action="store_true",
                    help="first rewrite --calibration with tools/calibrate_compute.py")
    ap.add_argument("--ranks", default="1,2",
                    help="rank counts to run (default 1,2; '' runs nothing and writes the table "
                         "of --rows)")
    ap.add_argument("--rows", default=os.path.join(REPO, "docs", "simulation_validation.json"),
                    help="the figures of every case measured so far (read, then updated)")
    a = ap.parse_args()
    system_python.ensure("validate_simulation.py", ["yaml"])
    ranks_list = [r.strip() for r in a.ranks.split(",") if r.strip()]
    if not all(r.isdigit() and 1 <= int(r) <= 1024 for r in ranks_list):
        raise UsageError(f"--ranks {a.ranks[:60]!r}: expects rank counts 1 to 1024, e.g. 1,2")
    if a.num_tsteps < 0:
        raise UsageError(f"--num-tsteps {a.num_tsteps}: expects 0 (each deck's own) or more")
    if ranks_list:
        for what, exe in (("--miniamr", a.miniamr), ("--simulation", a.simulation)):
            if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
                raise UsageError(f"{what} {exe}: not an executable miniamr (build it first)")
        for what, path in (("--platform", a.platform), ("--calibration", a.calibration)):
            if not a.calibrate or what != "--calibration":
                read_text(path, what)
    check_output_file(a.out, "--out", (".md",))
    check_output_file(a.rows, "--rows", (".json",))
    if a.calibrate:
        check_output_file(a.calibration, "--calibration", (".yaml", ".yml"))
    steps = ["--num_tsteps", str(a.num_tsteps)] if a.num_tsteps > 0 else []
    keep = [k for _, k in PHASES]
    cases = {}
    if os.path.exists(a.rows):
        try:
            cases = json.loads(read_text(a.rows, "--rows"))
        except ValueError:
            raise UsageError(f"--rows {a.rows}: not JSON (a file this tool wrote)") from None
        if not isinstance(cases, dict):
            raise UsageError(f"--rows {a.rows}: not a file this tool wrote")
    if a.calibrate:
        r = subprocess.run([sys.executable, os.path.join(REPO, "tools", "calibrate_compute.py"),
                            "--miniamr", a.miniamr, "--out", a.calibration], env=env())
        if r.returncode != 0:
            sys.exit("validate_simulation: tools/calibrate_compute.py failed")
    with tempfile.TemporaryDirectory(prefix="miniamr-validate-") as tmp:
        for deck in DECKS:
            path = os.path.join(REPO, "inputs", f"{deck}.deck")
            for ranks in (int(r) for r in ranks_list):
                for runtime in ("static", "dynamic"):
                    # (--max_blocks: a cap only, which the 2-rank decks would hit on one rank;
                    # --chunk_vars: every variable in each stage, the order modelled runs take)
                    opts = [path, "--runtime", runtime, "--max_blocks", "100000", "--chunk_vars",
                            "1000000"] + steps
                    real = run(["mpirun", "-np", str(ranks), "--bind-to", "core", a.miniamr]
                               + opts, tmp)
                    sim = run([sys.executable, os.path.join(REPO, "tools", "miniamr-simulate"),
                               "--np", str(ranks), "--platform", a.platform, "--calibration",
                               a.calibration, "--miniamr", a.simulation, "--"] + opts, tmp)
                    cases[f"{deck} {ranks} {runtime}"] = {
                        "real": {k: real[k] for k in keep}, "simulated": {k: sim[k] for k in keep},
                        "num_tsteps": a.num_tsteps, "calibrated": a.calibrate}
                    with open(a.rows + ".tmp", "w") as f:
                        json.dump(cases, f, indent=1)
                    os.replace(a.rows + ".tmp", a.rows)
                    print(f"{deck} {ranks} {runtime}: real {real['total_time_max']:.3f} s, "
                          f"simulated {sim['total_time_max']:.3f} s", flush=True)
    head = ("| deck | ranks | runtime | real s | simulated s | total | compute | comm | refine "
            "| balance |\n|---|---|---|---|---|---|---|---|---|---|\n")
    lines = []
    worst = 0.0
    order = {d: i for i, d in enumerate(DECKS)}
    rows = sorted(((*k.split(), v["real"], v["simulated"]) for k, v in cases.items()),
                  key=lambda r: (order[r[0]], int(r[1]), r[2] != "static"))
    for deck, ranks, runtime, real, sim in rows:
        errs = [error(sim[k], real[k]) for _, k in PHASES]
        worst = max(worst, abs(sim["total_time_max"] - real["total_time_max"]) /
                    real["total_time_max"])
        lines.append(f"| {deck} | {ranks} | {runtime} | {real['total_time_max']:.2f} | "
                     f"{sim['total_time_max']:.2f} | " + " | ".join(errs) + " |")
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    measured_steps = {v.get("num_tsteps", 0) for v in cases.values()}
    n = measured_steps.pop() if len(measured_steps) == 1 else a.num_tsteps
    calibrated = all(v.get("calibrated", False) for v in cases.values())
    cmd = ("tools/validate_simulation.py" + (" --calibrate" if calibrated else "") +
           (f" --num-tsteps {n}" if n else ""))
    table = (f"Simulated minus real, relative to real, per phase (time loop of the slowest rank; "
             f"phases averaged over ranks). Measured {when} at commit {revision()} by `{cmd}`; largest total error "
             f"{100 * worst:.0f}%.\n\n" + head + "\n".join(lines) + "\n")
    os.makedirs(os.path.dirname(a.out), exist_ok=True)
    with open(a.out + ".tmp", "w") as f:
        f.write("# Simulation against real runs\n\n" + table)
    os.replace(a.out + ".tmp", a.out)
    print(table)
    if a.docs:
        page = os.path.join(REPO, "docs", "simulation.md")
        with open(page) as f:
            text = f.read()
        if BEGIN not in text or END not in text:
            sys.exit(f"validate_simulation: {page} has no {BEGIN} ... {END} block")
        text = text[:text.index(BEGIN) + len(BEGIN)] + "\n" + table + text[text.index(END):]
        with open(page + ".tmp", "w") as f:
            f.write(text)
        os.replace(page + ".tmp", page)
    return 0


if __name__ == "__main__":
    sys.exit(run_tool("validate_simulation", main))

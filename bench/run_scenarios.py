#!/usr/bin/env python3
"""Times the three scenario decks and compares them with the reference miniAMR.

  run_scenarios.py [--miniamr PATH] [--np N] [--repeat K] [--only NAME] [--extra "..."]
                   [--stream GBs] [--json OUT] [--allow-oversubscribe]

Each run is `mpirun -np N miniamr DECK [deck args] --report_perf 13 [extra]` in a fresh temporary
directory; the wall time is measured around mpirun (start-up and shutdown included, as the
reference's figures were), everything else comes from the run's results.yaml. Prints one table
with the reference's figures and the ratio ours/reference (the goal is <= 1/5 of its wall time).

Columns:
  wall          min and median over --repeat runs, seconds, around mpirun
  blocks/ts     total_blocks_ts_ave (blocks per stage, averaged over the run)
  updates/s     cell_var_updates_per_s (cell-variable updates per second of compute + comm)
  bandwidth     results.yaml's effective_bandwidth_gbs: 16 bytes x cell_var_updates over the
                time in stages (ghosts, stencil, checksums), max over ranks; the memory
                traffic of a streaming stencil (one read, one write of a double per update)
                over the time the ranks spent in stages; with --stream, the share of that
                STREAM figure
  rss/rank      peak_rss_max (the largest peak resident set of a rank)

Exit status: 0 when every run finished with conserved checksums, 1 when a run failed, 2 for a
usage error or a refused (oversubscribed) run.
"""
import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The reference (Mantevo miniAMR 1.7.0) on this kind of machine, 2 ranks, 40 variables
# (/work/shared/reference/README.md): wall seconds as (fastest, slowest) seen on a noisy VM,
# and its resident memory per rank.
SCENARIOS = [
    {"name": "expanding_sphere", "deck": "inputs/expanding_sphere.deck", "args": [],
     "ref_wall": (22.0, 46.0)},
    {"name": "moving_sphere", "deck": "inputs/moving_sphere.deck", "args": [],
     "ref_wall": (270.0, 270.0)},
    {"name": "two_spheres", "deck": "inputs/two_spheres.deck", "args": ["--num_tsteps", "20"],
     "ref_wall": (76.0, 76.0)},
]
REF_RSS = (2.5e9, 3.8e9)  # bytes per rank
REF_NP = 2
GOAL = 0.2  # ours / reference wall time


def usable_cores():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def fmt_range(lo, hi, fmt):
    return fmt.format(lo) if lo == hi else (fmt.format(lo) + "-" + fmt.format(hi))


def run_once(cmd, env, timeout):
    with tempfile.TemporaryDirectory(prefix="miniamr-bench-") as work:
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True,
                              timeout=timeout)
        wall = time.perf_counter() - t0
        results = None
        path = os.path.join(work, "results.yaml")
        if os.path.exists(path):
            with open(path) as f:
                results = yaml.safe_load(f)
    return proc, wall, results


def summarise(scn, runs, args):
    """One table row (and the JSON record) from the runs of one scenario."""
    walls = [r["wall_s"] for r in runs]
    ys = [r["results"] for r in runs]
    med = statistics.median

    def bandwidth(y):
        # miniamr's own figure: 16 B per update over the time in stages, max over ranks.
        if "effective_bandwidth_gbs" in y:
            return float(y["effective_bandwidth_gbs"]) * 1e9
        t = float(y["compute_time_max"]) + float(y["total_comm_max"])
        return 16.0 * float(y["cell_var_updates"]) / t if t > 0 else 0.0

    row = {
        "scenario": scn["name"],
        "np": args.np,
        "runs": len(runs),
        "wall_min_s": min(walls),
        "wall_median_s": med(walls),
        "blocks_per_ts": med(float(y["total_blocks_ts_ave"]) for y in ys),
        "cell_var_updates": int(ys[0]["cell_var_updates"]),
        "cell_var_updates_per_s_median": med(float(y["cell_var_updates_per_s"]) for y in ys),
        "cell_var_updates_per_s_max": max(float(y["cell_var_updates_per_s"]) for y in ys),
        "bandwidth_Bps_median": med(bandwidth(y) for y in ys),
        "bandwidth_Bps_max": max(bandwidth(y) for y in ys),
        "peak_rss_max_bytes": max(float(y["peak_rss_max"]) for y in ys),
        "total_time_max_s": med(float(y["total_time_max"]) for y in ys),
        "compute_time_max_s": med(float(y["compute_time_max"]) for y in ys),
        "total_comm_max_s": med(float(y["total_comm_max"]) for y in ys),
        "num_vars": int(ys[0]["num_vars"]),
        "num_tsteps": int(ys[0]["num_tsteps"]),
        "ref_wall_s": list(scn["ref_wall"]),
        "ref_rss_bytes": list(REF_RSS),
        # Against the fastest reference figure: the strictest reading of the goal.
        "ratio_wall_min_to_ref": min(walls) / scn["ref_wall"][0],
        "ratio_wall_median_to_ref": med(walls) / scn["ref_wall"][0],
        "ratio_wall_median_to_ref_slowest": med(walls) / scn["ref_wall"][1],
        "final_checksums": ys[0].get("final_checksums"),
        "wall_s": walls,
    }
    row["goal_met"] = row["ratio_wall_median_to_ref"] <= GOAL
    if args.stream:
        row["stream_GBps"] = args.stream
        row["bandwidth_fraction_of_stream"] = row["bandwidth_Bps_median"] / (args.stream * 1e9)
    return row


def print_table(rows, args, comparable):
    head = ["scenario", "wall s min/med", "ref wall s", "ours/ref", "blocks/ts", "updates/s",
            "bandwidth GB/s"]
    if args.stream:
        head.append("of STREAM")
    head += ["rss/rank GB", "ref rss GB"]
    table = [head]
    for r in rows:
        ratio = fmt_range(r["ratio_wall_median_to_ref_slowest"], r["ratio_wall_median_to_ref"],
                          "{:.3f}")
        if not comparable:
            ratio += "*"
        line = [
            r["scenario"],
            f"{r['wall_min_s']:.2f} / {r['wall_median_s']:.2f}",
            fmt_range(*r["ref_wall_s"], "{:.0f}"),
            ratio,
            f"{r['blocks_per_ts']:.1f}",
            f"{r['cell_var_updates_per_s_median']:.3e}",
            f"{r['bandwidth_Bps_median'] / 1e9:.2f}",
        ]
        if args.stream:
            line.append(f"{100.0 * r['bandwidth_fraction_of_stream']:.0f}%")
        line += [f"{r['peak_rss_max_bytes'] / 1e9:.3f}",
                 fmt_range(REF_RSS[0] / 1e9, REF_RSS[1] / 1e9, "{:.1f}")]
        table.append(line)
    widths = [max(len(t[i]) for t in table) for i in range(len(head))]
    for n, t in enumerate(table):
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                        for i, (c, w) in enumerate(zip(t, widths))))
        if n == 0:
            print("  ".join("-" * w for w in widths))
    print()
    print(f"ours/ref: median wall over the reference's (its slowest-fastest figure); goal <= "
          f"{GOAL:g} against the fastest.")
    if not comparable:
        print("* these runs differ from the reference's (--extra or a rank count other than "
              f"{REF_NP}): the ratio is indicative only.")
    for r in rows:
        verdict = "met" if r["goal_met"] else "NOT met"
        if not comparable:
            verdict += " (indicative)"
        print(f"{r['scenario']}: {r['runs']} run(s), {r['num_vars']} variables, "
              f"{r['num_tsteps']} timesteps, goal {verdict} "
              f"(median {r['ratio_wall_median_to_ref']:.3f} of {r['ref_wall_s'][0]:.0f} s)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--miniamr", default=os.path.join(ROOT, "build", "miniamr"),
                    help="the miniamr executable (default: build/miniamr)")
    ap.add_argument("--np", type=int, default=REF_NP, help="MPI ranks (default 2)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per scenario (min and median)")
    ap.add_argument("--only", action="append", choices=[s["name"] for s in SCENARIOS],
                    help="run only this scenario (may be repeated)")
    ap.add_argument("--extra", default="", help="more miniamr options, e.g. \"--num_tsteps 5\"")
    ap.add_argument("--stream", type=float, help="STREAM bandwidth of the machine, GB/s")
    ap.add_argument("--json", help="write the figures (and every run's) as JSON here")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per run")
    ap.add_argument("--allow-oversubscribe", action="store_true",
                    help="run even with more ranks than cores (timings then mean nothing)")
    args = ap.parse_args()

    if args.np < 1 or args.repeat < 1:
        ap.error("--np and --repeat must be at least 1")
    miniamr = os.path.abspath(args.miniamr)
    if not os.access(miniamr, os.X_OK):
        print(f"run_scenarios: no executable miniamr at {miniamr} (build it, or pass --miniamr)",
              file=sys.stderr)
        return 2
    mpirun = shutil.which("mpirun")
    if not mpirun:
        print("run_scenarios: mpirun is not on PATH", file=sys.stderr)
        return 2

    cores = usable_cores()
    oversubscribed = args.np > cores
    if oversubscribed and not args.allow_oversubscribe:
        print(f"run_scenarios: refusing to time {args.np} ranks on {cores} core(s): ranks would "
              "share cores and the wall times would measure the scheduler, not miniamr. Use "
              f"--np <= {cores}, or --allow-oversubscribe to run anyway.",
              file=sys.stderr)
        return 2
    if oversubscribed:
        print(f"WARNING: {args.np} ranks on {cores} core(s): oversubscribed, the timings below "
              "are meaningless.", file=sys.stderr)

    env = dict(os.environ)
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    if oversubscribed:
        # Ranks sharing a core must yield instead of busy-polling, or the run crawls.
        env.setdefault("OMPI_MCA_mpi_yield_when_idle", "1")

    extra = shlex.split(args.extra)
    comparable = not extra and args.np == REF_NP
    chosen = [s for s in SCENARIOS if not args.only or s["name"] in args.only]
    rows, failed = [], False
    for scn in chosen:
        cmd = [mpirun, "-np", str(args.np)]
        if oversubscribed:
            cmd.append("--oversubscribe")
        # report_perf 13 = the default 12 (report, progress) + 1 (results.yaml); --extra comes
        # last so it can override anything.
        cmd += [miniamr, os.path.join(ROOT, scn["deck"])] + scn["args"] + \
            ["--report_perf", "13"] + extra
        runs = []
        for k in range(args.repeat):
            print(f"[{scn['name']} {k + 1}/{args.repeat}] {shlex.join(cmd)}", file=sys.stderr,
                  flush=True)
            try:
                proc, wall, results = run_once(cmd, env, args.timeout)
            except subprocess.TimeoutExpired:
                print(f"  timed out after {args.timeout:.0f} s", file=sys.stderr)
                failed = True
                break
            print(f"  {wall:.2f} s, exit {proc.returncode}", file=sys.stderr, flush=True)
            if proc.returncode != 0 or results is None:
                why = "no results.yaml" if results is None else f"exit status {proc.returncode}"
                print(f"  run failed ({why}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}",
                      file=sys.stderr)
                failed = True
                break
            runs.append({"wall_s": wall, "results": results})
        if len(runs) == args.repeat:
            rows.append(summarise(scn, runs, args))

    if rows:
        print()
        print(f"miniamr {miniamr}, {args.np} rank(s) on {cores} core(s), "
              f"{args.repeat} run(s) each" + (f", extra: {args.extra}" if extra else ""))
        if oversubscribed:
            print("WARNING: more ranks than cores (--allow-oversubscribe): these timings are "
                  "meaningless.")
        print()
        print_table(rows, args, comparable)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"miniamr": miniamr, "np": args.np, "cores": cores,
                       "repeat": args.repeat, "extra": args.extra,
                       "comparable_with_reference": comparable,
                       "oversubscribed": oversubscribed, "scenarios": rows,
                       "failed": failed}, f, indent=2)
            f.write("\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Measures what the stencil kernels cost on this machine, for miniamr's --compute model.

Runs the normal build's miniamr on one rank over a uniform mesh of 8^3-cell blocks with 40
variables, for each runtime (static, dynamic) and kernel (7-point, 27-point, variable work),
and writes the seconds per cell-variable update: (compute + communicate time) over the
updates. On one rank every ghost face is an on-rank copy, so the cost per update includes the
ghost work that comes with it; a modelled run skips both and charges this.

    tools/calibrate_compute.py --miniamr build/miniamr --out platforms/calibration.yaml
"""
import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
import tempfile

import yaml

MESH = ["--nx", "8", "--ny", "8", "--nz", "8", "--npx", "1", "--npy", "1", "--npz", "1",
        "--init_x", "4", "--init_y", "4", "--init_z", "4", "--num_refine", "0",
        "--num_vars", "40", "--num_tsteps", "4", "--stages_per_ts", "10", "--checksum_freq", "10",
        "--report_perf", "1", "--quiet"]
KERNELS = {"stencil7": ["--stencil", "7"], "stencil27": ["--stencil", "27"],
           "variable": ["--stencil", "0"]}


def per_update(miniamr, runtime, kernel_opts, folder):
    out = os.path.join(folder, "r.yaml")
    cmd = [miniamr, *MESH, *kernel_opts, "--runtime", runtime, "--results", out]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        r = yaml.safe_load(f)
    return (r["compute_time_ave"] + r["total_comm_ave"]) / r["cell_var_updates"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--miniamr", default="build/miniamr", help="the normal (not simulation) build")
    ap.add_argument("--out", default="platforms/calibration.yaml")
    ap.add_argument("--reps", type=int, default=3, help="median of this many runs per kernel")
    args = ap.parse_args()
    if not os.access(args.miniamr, os.X_OK):
        sys.exit(f"calibrate_compute: {args.miniamr} is not an executable miniamr (build it first)")
    costs = {}
    with tempfile.TemporaryDirectory() as tmp:
        for runtime in ("static", "dynamic"):
            costs[runtime] = {}
            for name, opts in KERNELS.items():
                xs = [per_update(args.miniamr, runtime, opts, tmp) for _ in range(args.reps)]
                costs[runtime][name] = float(f"{statistics.median(xs):.4g}")
                print(f"{runtime:8s} {name:10s} {costs[runtime][name]:.4g} s per update")
    doc = {
        "machine": platform.node(),
        "method": "tools/calibrate_compute.py: one rank, uniform 4x4x4 roots of 8^3 cells, "
                  f"40 variables, 40 stages; (compute + on-rank ghost time) / updates, median of {args.reps}",
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "seconds_per_update": costs,
    }
    with open(args.out, "w") as f:
        f.write("# miniamr compute calibration (--compute model --calibration FILE)\n")
        yaml.safe_dump(doc, f, sort_keys=False)
    print(f"written {args.out}")


if __name__ == "__main__":
    main()

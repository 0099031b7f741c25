#!/usr/bin/env python3
"""Measures what the stencil kernels cost on this machine, for miniamr's --compute model.

Runs the normal build's miniamr on one rank over uniform meshes of 8^3-cell blocks with 40
variables, for each runtime (static, dynamic) and kernel (7-point, 27-point, variable work),
and writes the seconds per cell-variable update: (compute + communicate time) over the
updates. On one rank every ghost face is an on-rank copy, so the cost per update includes the
ghost work that comes with it; a modelled run skips both and charges this. A stage sweeps
one group of variables (--comm_vars) over all blocks before the next, so what it streams
through is that group's storage: the calibration runs 8 blocks with groups of 2 variables,
and 8, 64, 512 and 4096 blocks with all 40 together (0.16, 2.6, 20, 164 MB and 1.3 GB), from
cache to memory, where the cost per update differs by 2x and more. The largest lies beyond the
last-level cache of any current processor (164 MB still fitted in one with 300 MB, where a mesh
of 700 MB cost 1.7 times as much per update); it runs 10 stages instead of 40, 3.4 billion
updates. A modelled sweep is charged the cost at its own group's size (`working_sets`);
`seconds_per_update` repeats the 64-block figures. Modelled runs keep no variables in cache
between stages (no --chunk_vars chunks), so neither do these: each runs with chunks of its
group.

    tools/calibrate_compute.py --miniamr build/miniamr --out platforms/calibration.yaml
"""
import argparse
import copy
import datetime
import os
import platform
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # tools/: miniamr_results
import miniamr_results  # noqa: E402
from miniamr_results import system_python  # noqa: E402

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from miniamr_study import UsageError  # noqa: E402
from miniamr_study.inputs import check_output_file, run_tool  # noqa: E402

CELLS, VARS = 8, 40
MESH = ["--nx", str(CELLS), "--ny", str(CELLS), "--nz", str(CELLS), "--npx", "1", "--npy", "1",
        "--npz", "1", "--num_refine", "0", "--num_vars", str(VARS), "--stages_per_ts", "10",
        "--checksum_freq", "10", "--report_perf", "1", "--quiet"]
# (roots per direction, variables per group): the sizes measured, smallest first.
SIZES = ((2, 2), (2, VARS), (4, VARS), (8, VARS), (16, VARS))
# Timesteps of 10 stages at each size: the largest sweeps 3.4 billion updates in 10 stages.
TIMESTEPS = {16: 1}
KERNELS = {"stencil7": ["--stencil", "7"], "stencil27": ["--stencil", "27"],
           "variable": ["--stencil", "0"]}


def storage_bytes(roots, group):
    """Storage of one group of variables of every block: each block's cells with their ghost
    layer, every variable starting on a cache line (stencil::BlockShape::var_stride)."""
    cells = (CELLS + 2) ** 3
    return roots ** 3 * (cells + 7) // 8 * 8 * group * 8


class RunFailure(Exception):
    """A calibration run failed: exit status 1."""


def per_update(miniamr, runtime, kernel_opts, size, folder):
    out = os.path.join(folder, "r.yaml")
    roots, group = size
    cmd = [miniamr, *MESH, "--num_tsteps", str(TIMESTEPS.get(roots, 4)), "--init_x", str(roots),
           "--init_y", str(roots), "--init_z", str(roots), "--comm_vars", str(group),
           "--chunk_vars", str(group), *kernel_opts, "--runtime", runtime, "--results", out]
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise RunFailure(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()[-400:]}")
    r = miniamr_results.load(out)
    return (r["compute_time_ave"] + r["total_comm_ave"]) / r["cell_var_updates"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--miniamr", default="build/miniamr", help="the normal (not simulation) build")
    ap.add_argument("--out", default="platforms/calibration.yaml")
    ap.add_argument("--reps", type=int, default=3, help="median of this many runs per kernel")
    args = ap.parse_args()
    system_python.ensure("calibrate_compute.py", ["yaml"])
    import yaml
    if not (os.path.isfile(args.miniamr) and os.access(args.miniamr, os.X_OK)):
        raise UsageError(f"{args.miniamr} is not an executable miniamr (build it first)")
    if not 1 <= args.reps <= 100:
        raise UsageError(f"--reps {args.reps}: expects 1 to 100")
    check_output_file(args.out, "--out", (".yaml", ".yml"))
    sets = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in SIZES:
            costs = {}
            for runtime in ("static", "dynamic"):
                costs[runtime] = {}
                for name, opts in KERNELS.items():
                    xs = [per_update(args.miniamr, runtime, opts, size, tmp)
                          for _ in range(args.reps)]
                    costs[runtime][name] = float(f"{statistics.median(xs):.4g}")
                    print(f"{size[0] ** 3:4d} blocks x {size[1]:2d} variables {runtime:8s} "
                          f"{name:10s} {costs[runtime][name]:.4g} s per update")
            sets.append({"bytes": storage_bytes(*size), "seconds_per_update": costs})
    doc = {
        "machine": platform.node(),
        "method": "tools/calibrate_compute.py: one rank, uniform meshes of 2^3 roots of 8^3 "
                  "cells in groups of 2 of 40 variables, and 2^3, 4^3, 8^3, 16^3 roots with all "
                  "40 together, 40 stages (10 on 16^3 roots); (compute + on-rank ghost time) / "
                  f"updates, median of {args.reps}",
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "seconds_per_update": copy.deepcopy(sets[SIZES.index((4, VARS))]["seconds_per_update"]),
        "working_sets": sets,
    }
    with open(args.out, "w") as f:
        f.write("# miniamr compute calibration (--compute model --calibration FILE)\n")
        yaml.safe_dump(doc, f, sort_keys=False)
    print(f"written {args.out}")


def calibrate():
    try:
        return main() or 0
    except RunFailure as e:
        print(f"calibrate_compute: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(run_tool("calibrate_compute", calibrate))

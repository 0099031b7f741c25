#!/usr/bin/env python3
"""--plot_format xdmf: the files ParaView opens, checked with real readers against the run's own
results. Runs the deck on 2 and 3 ranks (and 3 with the dynamic runtime) for 10 timesteps
with --plot_freq 5 --plot_format xdmf --plot_dir plots, then:

- plot.xmf (python's xml.etree): two temporal collections, the blocks and the cells, of one
  hexahedron grid per plot, at the timesteps and simulated times expected; every DataItem names
  a dataset of its step's file with that dataset's dimensions and element type;
- the cells grids: 512 cells per block of every level, the corners inside the unit cube, and
  the cell values summing (exactly) to the run's checksum at the last step;
- every plot.NNN.h5 (h5py): blocks per level equal to results.yaml's mesh_history at that
  timestep and final_blocks_per_level at the last; owner ranks cover every rank (once there
  are as many blocks as ranks), each in one contiguous run of rows; keys unique and agreeing with the levels; the hexahedra tile the unit
  cube; the block means finite, and their sum times the cells per block equal to the run's
  checksum (within --error_tol at every step, to rounding at the last);
- the 3-rank files (both runtimes) hold bitwise the 2-rank keys, levels, corners and means at
  every step, in the same rows;
- with ParaView's pvpython at hand: ParaView's XDMF reader sees the same time steps, cells per
  level and cell arrays (skipped, and said so, without ParaView).

  check_paraview.py --miniamr BIN --deck DECK [--pvpython PATH]
"""
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import h5py
import numpy as np
import yaml

from mpi_env import mpi_env, script_arguments, verdict

STEPS, EVERY = 10, 5
OPTIONS = ["--num_tsteps", str(STEPS), "--plot_freq", str(EVERY), "--plot_format", "xdmf",
           "--plot_vars", "0", "--plot_dir", "plots", "--results", "R.yaml", "--quiet"]
TYPES = {("Float", "8"): np.float64, ("Float", "4"): np.float32, ("Int", "8"): np.int64,
         ("Int", "4"): np.int32, ("UInt", "4"): np.uint32, ("UChar", "1"): np.uint8}


def run(a, np_, work, failures, extra=()):
    """Runs miniamr on np_ ranks in work; returns results.yaml as a dict, or None."""
    os.makedirs(work)
    p = subprocess.run(["mpirun", "-q", "-np", str(np_), os.path.abspath(a.miniamr),
                        os.path.abspath(a.deck)] + OPTIONS + list(extra), cwd=work, env=mpi_env(),
                       capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        failures.append(f"{np_} ranks: exit {p.returncode}\n{p.stdout[-1500:]}{p.stderr[-1500:]}")
        return None
    with open(os.path.join(work, "R.yaml")) as f:
        return yaml.safe_load(f)


def read_index(path, failures, collection="blocks"):
    """The steps of the index's collection: time, elements and {name: (file, dataset, dims,
    dtype)} per grid."""
    root = ET.parse(path).getroot()
    series = root.find(f"Domain/Grid[@Name='{collection}']")
    if series is None or series.get("CollectionType") != "Temporal":
        failures.append(f"{path}: no temporal collection")
        return []
    steps = []
    for grid in series.findall("Grid"):
        items = {}
        for owner, name in [(grid.find("Topology"), "hexahedra"), (grid.find("Geometry"), "points")] + \
                [(at, at.get("Name")) for at in grid.findall("Attribute")]:
            item = owner.find("DataItem")
            file, dataset = item.text.strip().split(":")
            items[name] = (file, dataset, tuple(int(x) for x in item.get("Dimensions").split()),
                           TYPES.get((item.get("NumberType"), item.get("Precision"))))
            if name not in ("hexahedra", "points") and owner.get("Center") != "Cell":
                failures.append(f"{path}: attribute {name} is not cell data")
        if grid.find("Topology").get("TopologyType") != "Hexahedron":
            failures.append(f"{path}: topology is not Hexahedron")
        steps.append({"time": float(grid.find("Time").get("Value")),
                      "blocks": int(grid.find("Topology").get("NumberOfElements")),
                      "items": items})
    return steps


def read_steps(folder, results, np_, failures, static=True):
    """Checks one run's files against its results; returns every step's arrays by name."""
    what = f"{np_} ranks"
    steps = read_index(os.path.join(folder, "plot.xmf"), failures)
    want_ts = list(range(0, STEPS + 1, EVERY))
    if [s["time"] for s in steps] != [float(t) for t in want_ts]:
        failures.append(f"{what}: index times {[s['time'] for s in steps]}, want {want_ts}")
        return []
    if steps[-1]["time"] != float(results["sim_time"]):
        failures.append(f"{what}: last time {steps[-1]['time']}, sim_time {results['sim_time']}")
    history = {m["timestep"]: m["blocks_per_level"] for m in results["mesh_history"]}
    cells = results["x_block_size"] * results["y_block_size"] * results["z_block_size"]
    tol = 10.0 ** -results["error_tol"]
    leftovers = sorted(f for f in os.listdir(folder) if f.startswith("."))
    if leftovers:
        failures.append(f"{what}: temporary files left: {leftovers}")
    out = []
    for ts, step in zip(want_ts, steps):
        where = f"{what}, timestep {ts}"
        data = {}
        for name, (file, dataset, dims, dtype) in step["items"].items():
            with h5py.File(os.path.join(folder, file), "r") as h5:
                if dataset.lstrip("/") not in h5:
                    failures.append(f"{where}: {file} has no {dataset}")
                    continue
                d = h5[dataset]
                if d.shape != dims or d.dtype != dtype:
                    failures.append(f"{where}: {dataset} is {d.shape} {d.dtype}, the index says "
                                    f"{dims} {dtype}")
                data[name] = d[...]
                if h5.attrs["timestep"] != ts or h5.attrs["time"] != step["time"]:
                    failures.append(f"{where}: the file's timestep and time attributes differ")
        if set(data) != {"hexahedra", "points", "level", "rank", "key", "var0_mean"}:
            failures.append(f"{where}: arrays {sorted(data)}")
            continue
        n = step["blocks"]
        level, rank, key = data["level"][:, 0], data["rank"][:, 0], data["key"]
        means, points = data["var0_mean"][:, 0], data["points"]
        per_level = np.bincount(level, minlength=len(results["final_blocks_per_level"])).tolist()
        if ts in history and per_level != history[ts]:
            failures.append(f"{where}: blocks per level {per_level}, mesh_history {history[ts]}")
        if ts == STEPS and per_level != results["final_blocks_per_level"]:
            failures.append(f"{where}: blocks per level {per_level}, final "
                            f"{results['final_blocks_per_level']}")
        # (a rank may hold no block while there are fewer blocks than ranks, and the dynamic
        # balancer may empty a rank it measured as much slower on a loaded machine)
        owners = sorted(set(rank.tolist()))
        if not set(owners) <= set(range(np_)) or \
                (static and n >= np_ and len(owners) != np_) or \
                np.any(np.diff(rank) < 0):
            failures.append(f"{where}: owner ranks {owners} are not 0..{np_ - 1} in contiguous "
                            "rows")
        if len({tuple(k) for k in key.tolist()}) != n or np.any(key[:, 3] != level):
            failures.append(f"{where}: keys not unique or not agreeing with the levels")
        if not np.array_equal(data["hexahedra"], np.arange(8 * n).reshape(n, 8)):
            failures.append(f"{where}: hexahedra do not name their own 8 corners")
        corners = points.reshape(n, 8, 3)
        size = corners.max(axis=1) - corners.min(axis=1)
        if points.min() < 0 or points.max() > 1 or not math.isclose(
                float(np.prod(size, axis=1).sum()), 1.0, rel_tol=1e-12):
            failures.append(f"{where}: the hexahedra do not tile the unit cube")
        if not np.all(np.isfinite(means)) or means.min() < 0:
            failures.append(f"{where}: block means not finite and non-negative")
        total = float(np.sum(means * cells))
        initial = results["initial_checksums"][0]
        if abs(total - initial) > tol * abs(initial):
            failures.append(f"{where}: means sum to {total}, the checksum started at {initial}")
        if ts == STEPS and not math.isclose(total, results["final_checksums"][0], rel_tol=1e-12):
            failures.append(f"{where}: means sum to {total}, final checksum "
                            f"{results['final_checksums'][0]}")
        data["cells"] = read_cells(folder, ts, results, where, failures)
        out.append(data)
    return out


def read_cells(folder, ts, results, where, failures):
    """The cells grid of step `ts`: 512 cells per block, corners in the unit cube, values
    summing to the checksum; returns its values."""
    steps = [s for s in read_index(os.path.join(folder, "plot.xmf"), failures, "cells")
             if s["time"] == float(ts)]
    if len(steps) != 1 or set(steps[0]["items"]) != {"hexahedra", "points", "level", "var0"}:
        failures.append(f"{where}: no cells grid with level and var0 ({steps})")
        return None
    data = {}
    for name, (file, dataset, dims, dtype) in steps[0]["items"].items():
        with h5py.File(os.path.join(folder, file), "r") as h5:
            d = h5[dataset]
            if d.shape != dims or d.dtype != dtype:
                failures.append(f"{where}: cells {dataset} is {d.shape} {d.dtype}, the index "
                                f"says {dims} {dtype}")
            data[name] = d[...]
    per_block = results["x_block_size"] * results["y_block_size"] * results["z_block_size"]
    history = {m["timestep"]: m["blocks_per_level"] for m in results["mesh_history"]}
    per_level = np.bincount(data["level"][:, 0], minlength=len(results["final_blocks_per_level"]))
    if ts in history and per_level.tolist() != [per_block * b for b in history[ts]]:
        failures.append(f"{where}: cells per level {per_level.tolist()}, want {per_block} per "
                        f"block of {history[ts]}")
    points = data["points"]
    if points.min() < 0 or points.max() > 1 or data["hexahedra"].min() < 0 or \
            data["hexahedra"].max() >= len(points):
        failures.append(f"{where}: cell corners outside the unit cube or the points")
    total = math.fsum(data["var0"][:, 0].tolist())
    if ts == STEPS and total != results["final_checksums"][0]:
        failures.append(f"{where}: the cell values sum to {total!r}, final checksum "
                        f"{results['final_checksums'][0]!r}")
    return data["var0"]


def check_paraview_reader(pvpython, folder, steps2, failures):
    """ParaView's own XDMF reader sees the steps, cells per level and cell arrays."""
    reader = os.path.join(os.path.dirname(os.path.abspath(__file__)), "paraview_read.py")
    p = subprocess.run([pvpython, reader, os.path.join(folder, "plot.xmf")], capture_output=True,
                       text=True, timeout=300)
    line = [x for x in p.stdout.splitlines() if x.startswith("PARAVIEW_JSON ")]
    if p.returncode != 0 or not line:
        failures.append(f"pvpython: exit {p.returncode}\n{p.stdout[-1000:]}{p.stderr[-1000:]}")
        return
    seen = json.loads(line[0][len("PARAVIEW_JSON "):])
    if [s["time"] for s in seen] != [float(t) for t in range(0, STEPS + 1, EVERY)]:
        failures.append(f"ParaView sees times {[s['time'] for s in seen]}")
    for s, data in zip(seen, steps2):
        counts = np.bincount(data["level"][:, 0])
        want = {str(lv): int(c) for lv, c in enumerate(counts) if c}
        arrays = {"level": 1, "rank": 1, "key": 4, "var0_mean": 1}
        if s["per_level"] != want or s["cells"] != len(data["level"]) or s["arrays"] != arrays:
            failures.append(f"ParaView at time {s['time']}: {s['per_level']} {s['arrays']}, "
                            f"want {want} {arrays}")
    print(f"ok   ParaView's XDMF reader: {len(seen)} steps, cells per level and cell arrays")


def check_plot_vars(a, work, failures):
    """--num_vars 4 --plot_vars 3,1: the last step's file holds the means of variables 3 and 1
    (and of no other), each summing to that variable's final checksum."""
    os.makedirs(work)
    opts = ["--num_tsteps", "6", "--num_vars", "4", "--comm_vars", "4", "--plot_freq", "6",
            "--plot_format", "xdmf", "--plot_vars", "3,1", "--plot_dir", "plots", "--results",
            "R.yaml", "--quiet"]
    p = subprocess.run(["mpirun", "-q", "-np", "2", os.path.abspath(a.miniamr),
                        os.path.abspath(a.deck)] + opts, cwd=work, env=mpi_env(),
                       capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        failures.append(f"--plot_vars 3,1: exit {p.returncode}\n{p.stderr[-1500:]}")
        return
    with open(os.path.join(work, "R.yaml")) as f:
        results = yaml.safe_load(f)
    cells = results["x_block_size"] * results["y_block_size"] * results["z_block_size"]
    files = sorted(f for f in os.listdir(os.path.join(work, "plots")) if f.endswith(".h5"))
    with h5py.File(os.path.join(work, "plots", files[-1]), "r") as h5:
        names = sorted(n for n in h5["cells"].keys() if n.startswith("var"))
        if names != ["var1_mean", "var3_mean"]:
            failures.append(f"--plot_vars 3,1: datasets {names}, want var1_mean and var3_mean")
            return
        for v in (1, 3):
            total = float(np.sum(h5[f"cells/var{v}_mean"][...] * cells))
            want = results["final_checksums"][v]
            if not math.isclose(total, want, rel_tol=1e-12):
                failures.append(f"--plot_vars 3,1: var{v}_mean sums to {total}, variable {v}'s "
                                f"final checksum is {want}")
    print("ok   --plot_vars 3,1 plots the means of variables 3 and 1, and only those")


def main():
    ap = script_arguments()
    ap.add_argument("--pvpython", default=shutil.which("pvpython"))
    a = ap.parse_args()
    failures = []
    with tempfile.TemporaryDirectory() as work:
        steps = {}
        # (name, ranks, options): the dynamic runtime moves blocks between ranks as it balances
        runs = [("np2", 2, []), ("np3", 3, []), ("dynamic.np3", 3, ["--runtime", "dynamic"])]
        for name, np_, extra in runs:
            results = run(a, np_, os.path.join(work, name), failures, extra)
            if results is not None:
                steps[name] = read_steps(os.path.join(work, name, "plots"), results, np_,
                                         failures, static="dynamic" not in extra)
        for name in ("np3", "dynamic.np3"):
            if name not in steps or "np2" not in steps or len(steps[name]) != len(steps["np2"]):
                continue
            for i, (two, other) in enumerate(zip(steps["np2"], steps[name])):
                for array in ("key", "level", "points", "var0_mean", "cells"):
                    if not np.array_equal(two[array], other[array]):
                        failures.append(f"step {i}: {array} differs between np2 and {name}")
        check_plot_vars(a, os.path.join(work, "plot_vars"), failures)
        if a.pvpython and "np2" in steps:
            check_paraview_reader(a.pvpython, os.path.join(work, "np2", "plots"), steps["np2"],
                                  failures)
        elif not a.pvpython:
            print("skip ParaView's reader: no pvpython (Debian's paraview package)")
    return verdict(failures, f"xdmf plots on 2 and 3 ranks, both runtimes: {STEPS // EVERY + 1} "
                             "steps read with h5py and xml.etree agree with the runs' results and "
                             "each other")


if __name__ == "__main__":
    sys.exit(main())

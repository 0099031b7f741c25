#!/usr/bin/env python3
"""--plot_format vtkhdf: the files VTK's own reader opens. Runs

  mpirun -np 2 miniamr two_spheres-ci.deck --num_tsteps 10 --plot_freq 5 --plot_format vtkhdf

and reads every file of plot.vtkhdf.series with vtkHDFReader (Debian's python3-vtk9, VTK 9.1):
one hexahedron per cell, 512 per block of every level of results.yaml's mesh at that
timestep, a piece per rank, and a cell array var0 whose values sum (exactly) to the run's final
checksum at the last step. The same run on 3 ranks with the dynamic runtime writes bitwise the
same cell values; --plot_vars 1 with two variables writes var1 alone, summing to its checksum.

  check_vtkhdf.py --miniamr BIN --deck DECK
"""
import json
import math
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

from mpi_env import mpi_env, run_results, script_arguments, verdict

try:
    from vtkmodules.util.numpy_support import vtk_to_numpy
    from vtkmodules.vtkIOHDF import vtkHDFReader
except ImportError:
    sys.exit("check_vtkhdf.py: needs VTK's Python modules (apt-get install python3-vtk9; "
             "bash tools/bootstrap.sh installs it)")

VTK_HEXAHEDRON = 12


def read(path):
    """The unstructured grid vtkHDFReader makes of `path`."""
    reader = vtkHDFReader()
    if not reader.CanReadFile(path):
        return None
    reader.SetFileName(path)
    reader.Update()
    return reader.GetOutput()


def cell_array(grid, name):
    array = grid.GetCellData().GetArray(name)
    return None if array is None else vtk_to_numpy(array)


def check_series(folder, results, ranks, failures, var="var0", checksum=0):
    """Every step of the series: the grid's cells, levels, pieces and values; returns the last
    step's values."""
    with open(os.path.join(folder, "plot.vtkhdf.series")) as f:
        series = json.load(f)
    files = series.get("files", [])
    times = [f["time"] for f in files]
    if series.get("file-series-version") != "1.0" or times != [0.0, 5.0, 10.0]:
        failures.append(f"{ranks} ranks: series {series}")
        return None
    history = {m["timestep"]: m["blocks_per_level"] for m in results["mesh_history"]}
    per_block = results["x_block_size"] * results["y_block_size"] * results["z_block_size"]
    values = None
    for entry in files:
        ts, where = int(entry["time"]), f"{ranks} ranks, {entry['name']}"
        path = os.path.join(folder, entry["name"])
        grid = read(path)
        if grid is None or grid.GetClassName() != "vtkUnstructuredGrid":
            failures.append(f"{where}: vtkHDFReader cannot read it")
            continue
        with h5py.File(path, "r") as h5:
            pieces = len(h5["VTKHDF/NumberOfPoints"])
        if pieces != ranks:
            failures.append(f"{where}: {pieces} pieces, want one per rank")
        types = set(np.unique(vtk_to_numpy(grid.GetCellTypesArray())).tolist())
        if types != {VTK_HEXAHEDRON}:
            failures.append(f"{where}: cell types {types}, want hexahedra")
        level = cell_array(grid, "level")
        values = cell_array(grid, var)
        rank = cell_array(grid, "rank")
        if level is None or values is None or rank is None:
            failures.append(f"{where}: cell arrays level, {var} and rank missing")
            continue
        per_level = np.bincount(level, minlength=len(history[ts])).tolist()
        if per_level != [per_block * b for b in history[ts]]:
            failures.append(f"{where}: cells per level {per_level}, want {per_block} per block "
                            f"of {history[ts]}")
        if grid.GetNumberOfCells() != per_block * sum(history[ts]):
            failures.append(f"{where}: {grid.GetNumberOfCells()} cells")
        if not set(np.unique(rank).tolist()) <= set(range(ranks)):
            failures.append(f"{where}: owner ranks {np.unique(rank)}")
        bounds = grid.GetBounds()
        if min(bounds[0::2]) < 0 or max(bounds[1::2]) > 1:
            failures.append(f"{where}: cells outside the unit cube: {bounds}")
    total = math.fsum(values.tolist()) if values is not None else None
    if total != results["final_checksums"][checksum]:
        failures.append(f"{ranks} ranks: the last step's {var} sums to {total!r}, final checksum "
                        f"{results['final_checksums'][checksum]!r}")
    return values


def main():
    a = script_arguments().parse_args()
    failures = []
    base = [os.path.abspath(a.deck), "--num_tsteps", "10", "--plot_freq", "5", "--plot_format",
            "vtkhdf", "--report_perf", "1", "--quiet"]
    with tempfile.TemporaryDirectory() as work:
        last = {}
        for name, ranks, extra in (("np2", 2, []), ("dynamic.np3", 3, ["--runtime", "dynamic"])):
            folder = os.path.join(work, name)
            os.makedirs(folder)
            results = run_results(["mpirun", "-q", "-np", ranks, os.path.abspath(a.miniamr)] +
                                  base + extra, folder)
            last[name] = check_series(folder, results, ranks, failures)
        if last["np2"] is not None and last["dynamic.np3"] is not None and \
                not np.array_equal(last["np2"], last["dynamic.np3"]):
            failures.append("the last step's cell values differ between 2 ranks (static) and 3 "
                            "(dynamic)")
        folder = os.path.join(work, "plot_vars")
        os.makedirs(folder)
        results = run_results(["mpirun", "-q", "-np", 2, os.path.abspath(a.miniamr)] + base +
                              ["--num_vars", "2", "--plot_vars", "1"], folder)
        check_series(folder, results, 2, failures, var="var1", checksum=1)
        grid = read(os.path.join(folder, "plot.10.vtkhdf"))
        if grid is not None and cell_array(grid, "var0") is not None:
            failures.append("--plot_vars 1 wrote var0 too")
    return verdict(failures, "vtkhdf plots: vtkHDFReader reads 512 hexahedra per block, a piece "
                             "per rank, cell values summing to the checksum, on 2 and 3 ranks")


if __name__ == "__main__":
    sys.exit(main())

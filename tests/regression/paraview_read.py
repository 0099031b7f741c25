"""Run by ParaView's pvpython: reads an xdmf plot index with ParaView's XDMF reader and prints,
as JSON, every time step's cell count per level and the cell arrays with their component
counts, so check_paraview.py can compare them with what the run wrote.

  pvpython paraview_read.py plot.xmf
"""
import json
import sys

from paraview.simple import XDMFReader, servermanager


def first_leaf(data):
    """The unstructured grid of one step (the reader may wrap it in a composite data set)."""
    while data.IsA("vtkCompositeDataSet"):
        it = data.NewIterator()
        it.InitTraversal()
        data = it.GetCurrentDataObject()
    return data


def main():
    reader = XDMFReader(FileNames=[sys.argv[1]])
    reader.GridStatus = ["blocks"]  # the blocks' time series (the cells' is the other grid)
    steps = []
    for t in reader.TimestepValues:
        reader.UpdatePipeline(t)
        grid = first_leaf(servermanager.Fetch(reader))
        cells = grid.GetCellData()
        levels = cells.GetArray("level")
        per_level = {}
        for i in range(levels.GetNumberOfTuples()):
            lv = int(levels.GetValue(i))
            per_level[lv] = per_level.get(lv, 0) + 1
        steps.append({"time": t, "cells": grid.GetNumberOfCells(),
                      "points": grid.GetNumberOfPoints(),
                      "per_level": {str(k): v for k, v in sorted(per_level.items())},
                      "arrays": {cells.GetArrayName(i): cells.GetArray(i).GetNumberOfComponents()
                                 for i in range(cells.GetNumberOfArrays())}})
    print("PARAVIEW_JSON " + json.dumps(steps))


main()

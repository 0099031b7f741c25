"""Renders the last step of an xdmf plot series (miniamr --plot_format xdmf) to a PNG, offscreen:
the blocks as cells coloured by refinement level with their edges drawn, clipped through the
middle so the refined shells inside show, over the outline of the domain.

  xvfb-run -a pvbatch tools/render_mesh.py plots/plot.xmf docs/two_spheres_mesh.png \
      [--size 1000x750] [--title TEXT]

Needs ParaView's Python (Debian's paraview and python3-paraview). Debian's ParaView renders
through X only, so a machine without a display lends it a virtual one (xvfb-run, package xvfb).
"""
import argparse
import os
import re
import sys

try:
    from paraview.simple import (Clip, ColorBy, CreateView, GetColorTransferFunction,
                                 GetScalarBar, Hide3DWidgets, Outline, Render, SaveScreenshot,
                                 Show, Text, XDMFReader)
except ImportError:
    sys.exit("render_mesh.py: needs ParaView's Python: run it with pvbatch (Debian's paraview "
             "and python3-paraview)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("index", help="plot.xmf written by miniamr --plot_format xdmf")
    ap.add_argument("png")
    ap.add_argument("--size", default="1000x750", help="WIDTHxHEIGHT in pixels")
    ap.add_argument("--title", default="", help="text before the time and block count")
    a = ap.parse_args()
    size = re.fullmatch(r"([1-9]\d{0,4})x([1-9]\d{0,4})", a.size)
    if not size:
        ap.error(f"--size {a.size[:60]!r}: expects WIDTHxHEIGHT in pixels, e.g. 1000x750")
    width, height = int(size[1]), int(size[2])
    if not os.path.isfile(a.index):
        ap.error(f"{a.index}: no such plot index (plot.xmf of miniamr --plot_format xdmf)")
    if not a.png.lower().endswith(".png") or os.path.isdir(a.png):
        ap.error(f"{a.png}: the image name must end in .png")

    reader = XDMFReader(FileNames=[a.index])
    reader.GridStatus = ["blocks"]  # the blocks' time series (the cells' is the other grid)
    last = reader.TimestepValues[-1] if reader.TimestepValues else 0.0
    view = CreateView("RenderView")
    view.ViewSize = [width, height]
    view.ViewTime = last
    view.OrientationAxesVisibility = 0
    view.Background = [1.0, 1.0, 1.0]
    try:  # ParaView 5.11 draws a palette background unless told to use its own colour
        view.UseColorPaletteForBackground = 0
    except AttributeError:
        pass

    # The half of the domain behind the plane y = 0.5, whole cells kept (no cut blocks).
    clip = Clip(Input=reader)
    clip.ClipType = "Plane"
    clip.ClipType.Origin = [0.5, 0.5, 0.5]
    clip.ClipType.Normal = [0.0, -1.0, 0.0]
    clip.Crinkleclip = 1
    shown = Show(clip, view)
    shown.SetRepresentationType("Surface With Edges")
    shown.EdgeColor = [0.15, 0.15, 0.15]
    ColorBy(shown, ("CELLS", "level"))
    # Levels are categories: one colour each (viridis), named in the legend.
    levels = GetColorTransferFunction("level")
    levels.InterpretValuesAsCategories = 1
    levels.AnnotationsInitialized = 1
    levels.Annotations = [str(x) for lv in range(5) for x in (lv, lv)]
    levels.IndexedColors = [0.267, 0.005, 0.329, 0.231, 0.322, 0.545, 0.129, 0.565, 0.553,
                            0.369, 0.788, 0.384, 0.993, 0.906, 0.144]
    shown.SetScalarBarVisibility(view, True)
    bar = GetScalarBar(levels, view)
    bar.Title = "level"
    bar.ComponentTitle = ""
    bar.TitleColor = bar.LabelColor = [0.0, 0.0, 0.0]
    bar.TitleFontSize = bar.LabelFontSize = 18
    Hide3DWidgets(proxy=clip.ClipType)

    reader.UpdatePipeline(last)
    blocks = reader.GetDataInformation().GetNumberOfCells()
    title = Show(Text(Text=f"{a.title}time {last:g}: {blocks} blocks"), view)
    title.Color = [0.0, 0.0, 0.0]
    title.FontSize = 20
    title.WindowLocation = "Upper Left Corner"

    outline = Show(Outline(Input=reader), view)
    outline.AmbientColor = outline.DiffuseColor = [0.0, 0.0, 0.0]

    view.CameraPosition = [2.3, -1.6, 1.5]
    view.CameraFocalPoint = [0.5, 0.5, 0.45]
    view.CameraViewUp = [0.0, 0.0, 1.0]
    view.CameraViewAngle = 30
    Render(view)
    SaveScreenshot(a.png, view, ImageResolution=[width, height])
    print(f"render_mesh.py: time {last} of {a.index} -> {a.png}")


main()

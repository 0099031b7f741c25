#!/usr/bin/env python3
"""Plots a run from its results.yaml: blocks per refinement level over the timesteps (the mesh
history), the time per phase (average and slowest rank) and, for the dynamic runtime's
balancer, every rank's predicted seconds per stage at each decision (the load over time).

  python3 tools/plot_results.py results.yaml [-o run.png] [--title TEXT]

Needs Debian's python3-matplotlib and python3-yaml (run it with /usr/bin/python3).
"""
import argparse
import sys

import yaml

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from miniamr_study import UsageError  # noqa: E402
from miniamr_study.inputs import check_output_file, read_text, run_tool  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", help="a results.yaml written by miniamr (--report_perf 1)")
    ap.add_argument("-o", "--output", default="results.png", help="image to write (PNG, SVG, PDF)")
    ap.add_argument("--title", help="figure title (default: the run's ranks and scenario size)")
    a = ap.parse_args()
    check_output_file(a.output, "-o", (".png", ".svg", ".pdf"))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_results.py: matplotlib is missing (apt-get install python3-matplotlib)",
              file=sys.stderr)
        return 2
    try:
        r = yaml.safe_load(read_text(a.results, "results file"))
    except yaml.YAMLError as e:
        raise UsageError(f"{a.results} is not YAML: {str(e).splitlines()[0]}") from None
    if not isinstance(r, dict) or "mesh_history" not in r:
        raise UsageError(f"{a.results} has no mesh_history (not a miniamr results.yaml?)")
    try:
        fig = figure(r, a.title, plt)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as e:
        raise UsageError(f"{a.results} is not a miniamr results.yaml ({type(e).__name__}: "
                         f"{str(e)[:60]})") from None
    fig.savefig(a.output, dpi=110)
    print(f"wrote {a.output}")
    return 0


def figure(r, title, plt):
    """The figure of one run's results (a dict read from results.yaml)."""
    history = r["mesh_history"]
    steps = [m["timestep"] for m in history]
    levels = list(zip(*[m["blocks_per_level"] for m in history]))
    load = r.get("load_history") or []
    panels = 3 if load else 2
    fig, axes = plt.subplots(1, panels, figsize=(6 * panels, 4.5),
                             gridspec_kw={"width_ratios": [2, 1, 2][:panels]})
    mesh, phases = axes[0], axes[1]
    mesh.stackplot(steps, levels, labels=[f"level {l}" for l in range(len(levels))], step="post")
    mesh.set_xlabel("timestep")
    mesh.set_ylabel("blocks")
    mesh.set_title("blocks per refinement level")
    mesh.legend(loc="upper left", fontsize="small")

    names = list(r["phases"].keys())
    avg = [r["phases"][n]["avg"] for n in names]
    mx = [r["phases"][n]["max"] for n in names]
    x = range(len(names))
    phases.bar([i - 0.2 for i in x], avg, width=0.4, label="average over ranks")
    phases.bar([i + 0.2 for i in x], mx, width=0.4, label="slowest rank")
    phases.set_xticks(list(x), [n.replace("T_", "") for n in names], rotation=30)
    phases.set_ylabel("seconds")
    phases.set_title("time per phase")
    phases.legend(fontsize="small")

    if load:
        ax = axes[2]
        steps_lb = [h["timestep"] for h in load]
        for rank in range(len(load[0]["seconds_per_stage"])):
            ax.plot(steps_lb, [1e3 * h["seconds_per_stage"][rank] for h in load],
                    label=f"rank {rank}", drawstyle="steps-post")
        moved = [h["timestep"] for h in load if h["moved"]]
        for t in moved:
            ax.axvline(t, color="grey", alpha=0.15)
        ax.set_xlabel("timestep (grey: blocks moved)")
        ax.set_ylabel("predicted ms per stage")
        ax.set_title(f"load per rank ({r.get('lb_strategy', '')} balancer)")
        ax.legend(fontsize="small")

    fig.suptitle(title or (f"miniamr: {r['ranks']} ranks x {r.get('threads', 1)} threads, "
                           f"{r['num_vars']} variables, {r['num_tsteps']} timesteps, "
                           f"{r['cell_var_updates_per_s']:.3g} updates/s"))
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    sys.exit(run_tool("plot_results.py", main))

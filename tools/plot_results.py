#!/usr/bin/env python3
"""Plots a run from its results file (results.yaml or results.json).

Three panels: blocks per refinement level over the timesteps (the mesh history); each rank's
time loop split into its phases (compute, messages, checksums, refinement, balancing, idle);
and, for the dynamic runtime's balancer, every rank's predicted seconds per stage at each
decision (the load over time).

  tools/plot_results.py results.yaml [-o run.png] [--title TEXT]    (installed as miniamr-plot)

Needs Debian's python3-yaml and python3-matplotlib: run under another python3 (a virtual
environment first on PATH), it runs itself again under /usr/bin/python3.
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.realpath(__file__))
# miniamr's Python packages: beside this script in a source tree, under lib/python3/dist-packages
# of an installed prefix (bin/../lib/...).
sys.path[:0] = [d for d in (HERE, os.path.join(HERE, "..", "lib", "python3", "dist-packages"))
                if os.path.isdir(os.path.join(d, "miniamr_results"))]
import miniamr_results  # noqa: E402
from miniamr_results import system_python  # noqa: E402

# Each rank's time loop, phase by phase (per_rank keys of the results file), and their colours.
RANK_PHASES = [("compute_s", "compute"), ("comm_s", "messages"), ("checksum_s", "checksums"),
               ("refine_s", "refinement"), ("balance_s", "balancing"), ("idle_s", "idle")]

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from miniamr_study import UsageError  # noqa: E402
from miniamr_study.inputs import check_output_file, run_tool  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", help="a results file written by miniamr (--results PATH)")
    ap.add_argument("-o", "--output", default="results.png", help="image to write (PNG, SVG, PDF)")
    ap.add_argument("--title", help="figure title (default: the run's ranks and scenario size)")
    a = ap.parse_args()
    check_output_file(a.output, "-o", (".png", ".svg", ".pdf"))
    system_python.ensure("plot_results.py", ["yaml", "matplotlib"])
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    try:
        r = miniamr_results.load(a.results)
        fig = figure(r, a.title, plt)
    except miniamr_results.ResultsError as e:
        raise UsageError(str(e)) from None
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as e:
        raise UsageError(f"{a.results} is not a miniamr results file ({type(e).__name__}: "
                         f"{str(e)[:60]})") from None
    fig.savefig(a.output, dpi=110)
    print(f"wrote {a.output}")
    return 0


def figure(r, title, plt):
    """The figure of one run's results (a dict read by miniamr_results.load)."""
    history = r["mesh_history"]
    steps = [m["timestep"] for m in history]
    levels = list(zip(*[m["blocks_per_level"] for m in history]))
    load = r.get("load_history", [])
    panels = 3 if load else 2
    fig, axes = plt.subplots(1, panels, figsize=(6 * panels, 4.5),
                             gridspec_kw={"width_ratios": [2, 1.5, 2][:panels]})
    mesh, ranks = axes[0], axes[1]
    mesh.stackplot(steps, levels, labels=[f"level {l}" for l in range(len(levels))], step="post")
    mesh.set_xlabel("timestep")
    mesh.set_ylabel("blocks")
    mesh.set_title("blocks per refinement level")
    mesh.legend(loc="upper left", fontsize="small")

    per_rank = r["per_rank"]
    x = list(range(r["ranks"]))
    bottom = [0.0] * len(x)
    for key, label in RANK_PHASES:
        values = per_rank.get(key) or [0.0] * len(x)
        ranks.bar(x, values, bottom=bottom, label=label)
        bottom = [b + v for b, v in zip(bottom, values)]
    ranks.set_xticks(x)
    ranks.set_xlabel("rank")
    ranks.set_ylabel("seconds")
    ranks.set_title("time loop per rank, by phase")
    ranks.set_ylim(0, 1.35 * max(bottom) or 1)  # head room for the legend
    ranks.legend(fontsize="small", loc="upper center", ncol=3)

    if load:
        ax = axes[2]
        steps_lb = [h["timestep"] for h in load]
        for rank in range(len(load[0]["seconds_per_stage"])):
            ax.plot(steps_lb, [1e3 * h["seconds_per_stage"][rank] for h in load],
                    label=f"rank {rank}", drawstyle="steps-post")
        for t in (h["timestep"] for h in load if h["moved"]):
            ax.axvline(t, color="grey", alpha=0.15)
        ax.set_xlabel("timestep (grey: blocks moved)")
        ax.set_ylabel("predicted ms per stage")
        ax.set_title(f"load per rank ({r['lb_strategy']} balancer)")
        ax.legend(fontsize="small")

    fig.suptitle(title or (f"miniamr {r['runtime']}: {r['ranks']} ranks x {r['threads']} "
                           f"threads, {r['num_vars']} variables, {r['num_tsteps']} timesteps, "
                           f"{r['cell_var_updates_per_s']:.3g} updates/s"))
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    sys.exit(run_tool("plot_results.py", main))

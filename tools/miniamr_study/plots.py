"""PNG plots of a study (matplotlib, Agg): time and efficiency against ranks, median wall per
variant, and per-rank load from one run's own records."""
import os

import miniamr_results

from .results import finished


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _save(plt, fig, out, name, dpi=110):
    """Lays the figure out, writes it to out/name and frees it; returns the path."""
    fig.tight_layout()
    path = os.path.join(out, name)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path


def _time_label(info):
    if info.get("simulated"):
        return "simulated time, slowest rank's time loop [s]"
    return "wall time around the launcher [s]"


def _title(what, info, spread=True):
    text = f"{what}: {info['deck']} on {info['host']}\n{info['reps']} repetition(s)"
    if spread:
        text += ", median and min..max"
    if info.get("extra"):
        text += f"\nminiamr options: {info['extra']}"
    if info.get("simulated"):
        text += f"\nSIMULATED (SimGrid SMPI, {info['simulated']}): not measured"
    if info.get("oversubscribed"):
        text += "\nOVERSUBSCRIBED (more ranks x threads than cores): timings not meaningful"
    return text


def _series(stats):
    """(label, [stats by rank count]) per variant and thread count."""
    threads = {s["threads"] for s in stats}
    series = {}
    for s in stats:
        if "wall_median" not in s:
            continue
        label = s["variant"] if len(threads) == 1 else f"{s['variant']}, {s['threads']} threads"
        series.setdefault(label, []).append(s)
    return [(k, sorted(v, key=lambda s: s["ranks"])) for k, v in series.items()]


def _rank_axis(ax, ranks):
    ax.set_xscale("log", base=2)
    ax.set_xticks(ranks)
    ax.set_xticklabels([str(r) for r in ranks])
    ax.set_xlabel("MPI ranks")
    ax.grid(True, alpha=0.3)


def scaling_plots(out, stats, kind, info):
    plt = _pyplot()
    series = _series(stats)
    ranks = sorted({s["ranks"] for _, ss in series for s in ss})
    files = []
    fig, ax = plt.subplots(figsize=(8, 5.5))
    for label, ss in series:
        x = [s["ranks"] for s in ss]
        y = [s["wall_median"] for s in ss]
        err = [[s["wall_median"] - s["wall_min"] for s in ss],
               [s["wall_max"] - s["wall_median"] for s in ss]]
        ax.errorbar(x, y, yerr=err, marker="o", capsize=4, label=label)
    if kind != "weak":
        ax.set_yscale("log")
    _rank_axis(ax, ranks)
    ax.set_ylabel(_time_label(info))
    ax.set_title(_title(f"{kind} scaling, time", info), fontsize=9)
    ax.legend(fontsize=8)
    files.append(_save(plt, fig, out, "time.png"))

    fig, ax = plt.subplots(figsize=(8, 5.5))
    for label, ss in series:
        ss = [s for s in ss if s.get("efficiency") is not None]
        if not ss:
            continue
        x = [s["ranks"] for s in ss]
        y = [s["efficiency"] for s in ss]
        # The efficiency's spread follows from the wall time's (the base at its median).
        err = [[e - e * s["wall_median"] / s["wall_max"] for e, s in zip(y, ss)],
               [e * s["wall_median"] / s["wall_min"] - e for e, s in zip(y, ss)]]
        line = ax.errorbar(x, y, yerr=err, marker="o", capsize=4, label=label)
        if kind == "weak":
            w = [(s["ranks"], s["work_efficiency"]) for s in ss if s.get("work_efficiency")]
            if w:
                ax.plot([a for a, _ in w], [b for _, b in w], ls="--", marker="x",
                        color=line[0].get_color(), label=f"{label}, per block-stage")
    ax.axhline(1.0, color="grey", lw=0.8, ls=":")
    _rank_axis(ax, ranks)
    ax.set_ylabel("parallel efficiency " +
                  ("T(base)/T(P)" if kind == "weak" else "T(base)·P(base)/(P·T(P))"))
    ax.set_ylim(bottom=0)
    ax.set_title(_title(f"{kind} scaling, efficiency", info), fontsize=9)
    ax.legend(fontsize=8)
    files.append(_save(plt, fig, out, "efficiency.png"))
    return files


def compare_plot(out, stats, info):
    plt = _pyplot()
    done = [s for s in stats if "wall_median" in s]
    points = list(dict.fromkeys(s["point"] for s in done))
    variants = list(dict.fromkeys(s["variant"] for s in done))
    width = 0.8 / max(1, len(variants))
    fig, ax = plt.subplots(figsize=(max(7, 1.2 * len(points) * len(variants) + 2), 5.5))
    for j, v in enumerate(variants):
        xs, ys, lo, hi = [], [], [], []
        for i, p in enumerate(points):
            s = next((s for s in done if s["point"] == p and s["variant"] == v), None)
            if s:
                xs.append(i + (j - (len(variants) - 1) / 2) * width)
                ys.append(s["wall_median"])
                lo.append(s["wall_median"] - s["wall_min"])
                hi.append(s["wall_max"] - s["wall_median"])
        bars = ax.bar(xs, ys, width, yerr=[lo, hi], capsize=4, label=v)
        ax.bar_label(bars, fmt="%.3g", fontsize=7, label_type="center")
    ax.set_xticks(range(len(points)))
    ax.set_xticklabels([f"{p[1:].split('t')[0]} ranks x {p.split('t')[1]} threads"
                        for p in points])
    ax.set_ylabel("median " + _time_label(info))
    ax.set_title(_title("compare", info), fontsize=9)
    ax.legend(fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)
    return [_save(plt, fig, out, "compare.png")]


def _load_runs(out, rows, limit=4):
    """One finished miniamr run per variant at the largest rank count (its first repetition)
    with per-rank figures in its results.yaml."""
    chosen = {}
    top = max((int(r["ranks"]) for r in rows if finished(r)), default=0)
    for r in rows:
        if not finished(r) or r["runtime"] == "reference" or int(r["ranks"]) != top:
            continue
        if r["variant"] in chosen or len(chosen) >= limit:
            continue
        try:
            y = miniamr_results.load(os.path.join(out, r["run_dir"], "results.yaml"))
        except miniamr_results.ResultsError:
            continue
        if (y.get("per_rank") or {}).get("compute_s"):
            chosen[r["variant"]] = (r, y)
    return list(chosen.values())


# Each rank's time loop, phase by phase (per_rank keys of the results file).
RANK_PHASES = [("compute_s", "compute"), ("comm_s", "messages"), ("checksum_s", "checksums"),
               ("refine_s", "refinement"), ("balance_s", "balancing"), ("idle_s", "idle")]


def load_plot(out, rows, info):
    """Per variant: each rank's time loop by phase, and the balancer's load over time; the
    panels of a column share their axes, so runtimes compare at a glance."""
    runs = _load_runs(out, rows)
    if not runs:
        return []
    plt = _pyplot()
    fig, axes = plt.subplots(len(runs), 2, figsize=(11, 3.3 * len(runs) + 1), squeeze=False,
                             sharex="col", sharey="col")
    tallest = 0.0
    for (r, y), (left, right) in zip(runs, axes):
        per_rank = y["per_rank"]
        x = list(range(len(per_rank["compute_s"])))
        bottom = [0.0] * len(x)
        for key, label in RANK_PHASES:
            values = per_rank.get(key) or [0.0] * len(x)
            left.bar(x, values, bottom=bottom, label=label)
            bottom = [b + v for b, v in zip(bottom, values)]
        tallest = max(tallest, max(bottom))
        left.set_xticks(x)
        left.set_xlabel("rank")
        left.set_ylabel("seconds")
        left.set_title(f"{r['variant']}, {r['ranks']} ranks x {r['threads']} threads, "
                       f"rep {r['rep']}: time loop per rank", fontsize=9)
        left.legend(fontsize=7, loc="upper center", ncol=3)
        history = y.get("load_history", [])
        if history:
            steps = [h["timestep"] for h in history]
            for k in range(len(history[0]["seconds_per_stage"])):
                right.plot(steps, [h["seconds_per_stage"][k] * 1e3 for h in history],
                           label=f"rank {k}")
            moved = [h["timestep"] for h in history if h.get("moved")]
            if moved:
                right.plot(moved, [0] * len(moved), "|", color="black", ms=10,
                           label="blocks moved")
            right.set_xlabel("timestep")
            right.set_ylabel("predicted ms per stage")
            right.set_title("load over time (balancer's records)", fontsize=9)
            right.legend(fontsize=7)
            right.grid(True, alpha=0.3)
        else:
            right.axis("off")
            right.text(0.5, 0.5, "no load_history in this run\n(the static runtime has no "
                       "balancer records)", ha="center", va="center", fontsize=9,
                       transform=right.transAxes)
    # One scale for every run's bars, with head room for the legends above them.
    axes[0][0].set_ylim(0, 1.4 * tallest or 1)
    fig.suptitle(_title("per-rank load of one run per variant", info, spread=False), fontsize=9)
    return [_save(plt, fig, out, "load.png", dpi=100)]


def make_plots(out, rows, stats, kind, info):
    files = []
    if len({s["ranks"] for s in stats if "wall_median" in s}) > 1 or kind in ("strong", "weak"):
        files += scaling_plots(out, stats, kind, info)
    if kind == "compare":
        files += compare_plot(out, stats, info)
    files += load_plot(out, rows, info)
    return files

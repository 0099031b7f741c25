#!/usr/bin/env python3
"""Plots miniamr-netbench's results.csv: latency.png (the time of one ping-pong message, one
allreduce, one neighbour exchange against the message size) and bandwidth.png (every test's
bandwidth), log-log, one line per test and pair class (median times), with the fitted alpha-beta model of
model.yaml (when it is there) over the ping-pong times. miniamr-netbench runs it after writing
the CSV; it can be run again by hand:

  netbench_plot.py OUT/results.csv --out OUT

Needs Debian's python3-matplotlib (python3-yaml for the fitted lines).
"""
import argparse
import csv
import io
import os
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from miniamr_study import UsageError  # noqa: E402
from miniamr_study.inputs import check_output_folder, read_text, run_tool  # noqa: E402

LATENCY_TESTS = ("pingpong", "allreduce", "neighbour_exchange")
STYLE = {"same_node": "-", "other_node": "--", "all": ":"}


def read_rows(path):
    rows = list(csv.DictReader(io.StringIO(read_text(path, "results CSV"), newline="")))
    series = {}
    try:
        for r in rows:
            key = (r["test"], r["pair_class"])
            series.setdefault(key, []).append(
                (int(r["bytes"]), float(r["t_min_s"]), float(r["t_median_s"]),
                 float(r["t_max_s"]), float(r["bandwidth_Bps"])))
    except (KeyError, TypeError, ValueError) as e:
        raise UsageError(f"{path} is not a miniamr-netbench results.csv ({type(e).__name__}: "
                         f"{str(e)[:60]})") from None
    if not series:
        raise UsageError(f"{path} holds no results (not a miniamr-netbench results.csv?)")
    for points in series.values():
        points.sort()
    return series


def read_models(path):
    """The alpha-beta models per pair class, or {} without the file or python3-yaml."""
    try:
        import yaml
    except ImportError:
        return {}
    try:
        with open(path) as f:
            models = yaml.safe_load(f).get("pair_classes", {}) or {}
        return {c: m for c, m in models.items()
                if float(m["latency_s"]) >= 0 and float(m["bandwidth_Bps"]) > 0}
    except (OSError, AttributeError, KeyError, TypeError, ValueError, yaml.YAMLError):
        return {}


def save(fig, path):
    """Into a temporary file beside `path`, renamed over it: never a half-written PNG."""
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path), suffix=".tmp.png",
                               dir=os.path.dirname(path) or ".")
    os.close(fd)
    try:
        # mkstemp makes the file private; a plot gets a new file's usual mode (0666 less umask).
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        fig.savefig(tmp, dpi=110)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--out", help="folder of the PNG files (default: the CSV's)")
    a = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"{os.path.basename(sys.argv[0])}: python3-matplotlib is not installed for "
              f"{sys.executable}", file=sys.stderr)
        return 3
    out = a.out or os.path.dirname(os.path.abspath(a.csv))
    check_output_folder(out, "--out")
    series = read_rows(a.csv)
    os.makedirs(out, exist_ok=True)
    models = read_models(os.path.join(os.path.dirname(os.path.abspath(a.csv)), "model.yaml"))

    fig, ax = plt.subplots(figsize=(7, 5))
    for (test, cls), pts in sorted(series.items()):
        if test not in LATENCY_TESTS:
            continue
        x = [p[0] for p in pts]
        # Medians only: on a shared machine the maxima are the scheduler's, not the network's.
        ax.plot(x, [p[2] for p in pts], STYLE.get(cls, "-"), marker="o", ms=3,
                label=f"{test} ({cls})")
        if test == "pingpong" and cls in models:
            m = models[cls]
            dense = [x[0] * (x[-1] / x[0]) ** (i / 100) for i in range(101)]
            ax.plot(dense, [m["latency_s"] + n / m["bandwidth_Bps"] for n in dense], color="black",
                    lw=0.8, ls=STYLE.get(cls, "-"),
                    label=f"fit {cls}: {m['latency_s']:.2g} s + n / {m['bandwidth_Bps']:.2g} B/s")
    ax.set(xscale="log", yscale="log", xlabel="message size (bytes)",
           ylabel="median time per operation (s)",
           title="miniamr-netbench: latency")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    save(fig, os.path.join(out, "latency.png"))
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(7, 5))
    for (test, cls), pts in sorted(series.items()):
        ax.plot([p[0] for p in pts], [p[4] for p in pts], STYLE.get(cls, "-"), marker="o", ms=3,
                label=f"{test} ({cls})")
    ax.set(xscale="log", yscale="log", xlabel="message size (bytes)",
           ylabel="bandwidth (bytes/s, at the median time)", title="miniamr-netbench: bandwidth")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    save(fig, os.path.join(out, "bandwidth.png"))
    plt.close(fig)
    return 0


if __name__ == "__main__":
    sys.exit(run_tool(os.path.basename(sys.argv[0]), main))

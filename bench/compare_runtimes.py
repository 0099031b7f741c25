#!/usr/bin/env python3
"""Static against dynamic runtime, side by side in one invocation.

  compare_runtimes.py [--miniamr PATH] [--deck DECK] [--reps N] [--extra "..."]
                      [--variants NAME,...] [--json OUT]

Runs each variant once per repetition, alternating the variants inside every repetition (so a
machine that slows down or speeds up during the study affects all of them alike), and reports
per variant the median and the spread (min..max) of

  wall    seconds around mpirun (start-up and shutdown included)
  run     total_time_ave from results.yaml (the time loop, averaged over ranks)

plus the ratios of the pairs the dynamic runtime is judged by:

  dyn2x1/static2x1   2 ranks x 1 thread each (one core per rank)
  dyn1x2/static1x1   1 rank: dynamic on 2 threads against static on 1

Every run's field_digest must equal every other's (the runtimes compute the same bits); the
script fails otherwise. Never run it with more ranks x threads than cores: the timings would be
meaningless (it refuses).

Variants (name: ranks x threads, runtime):
  static2x1, dyn2x1, static1x1, dyn1x2, dyn1x1, static1x2
A variant may carry options of its own after '@', e.g. "dyn2x1@--lb sfc" against
"dyn2x1@--lb predictive" (naive against predictive balancing).

Examples (docs/performance.md):
  compare_runtimes.py --reps 3
  compare_runtimes.py --reps 3 --variants static2x1,dyn2x1 --extra "--slow_rank 1:2"
  compare_runtimes.py --reps 3 --deck inputs/moving_sphere.deck --extra "--num_tsteps 40" \
      --variants "dyn2x1@--lb sfc,dyn2x1@--lb predictive"
"""
import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "tools"))  # miniamr_results
import miniamr_results  # noqa: E402
from miniamr_results import system_python  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

VARIANTS = {
    "static2x1": (2, 1, "static"),
    "dyn2x1": (2, 1, "dynamic"),
    "static1x1": (1, 1, "static"),
    "dyn1x2": (1, 2, "dynamic"),
    "dyn1x1": (1, 1, "dynamic"),
    "static1x2": (1, 2, "static"),
}
PAIRS = [("dyn2x1", "static2x1"), ("dyn1x2", "static1x1"), ("dyn1x1", "static1x1")]


def base(variant):
    return variant.split("@", 1)[0]


def own_options(variant):
    return shlex.split(variant.split("@", 1)[1]) if "@" in variant else []


def run_once(miniamr, deck, variant, extra):
    ranks, threads, runtime = VARIANTS[base(variant)]
    env = dict(os.environ)
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    env.pop("OMPI_MCA_mpi_yield_when_idle", None)  # never oversubscribed here
    # One core per rank when ranks fill the machine; a multi-threaded rank needs them all.
    binding = ["--bind-to", "core"] if threads == 1 else ["--bind-to", "none"]
    cmd = (["mpirun", "-np", str(ranks)] + binding +
           [miniamr, deck, "--runtime", runtime, "--threads", str(threads),
            "--report_perf", "1"] + extra + own_options(variant))
    with tempfile.TemporaryDirectory() as work:
        t0 = time.monotonic()
        p = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True)
        wall = time.monotonic() - t0
        if p.returncode != 0:
            sys.exit(f"failed ({p.returncode}): {shlex.join(cmd)}\n{p.stdout[-2000:]}{p.stderr[-2000:]}")
        r = miniamr_results.load(os.path.join(work, "results.yaml"))
    return {"wall": wall, "run": r["total_time_ave"], "digest": r["field_digest"],
            "moved": r.get("blocks_migrated", r.get("blocks_moved_lb", 0)),
            "bytes": r.get("bytes_migrated", 0), "command": shlex.join(cmd)}


def spread(xs):
    return f"{statistics.median(xs):7.3f} ({min(xs):.3f}..{max(xs):.3f})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--miniamr", default=os.path.join(ROOT, "build", "miniamr"))
    ap.add_argument("--deck", default=os.path.join(ROOT, "inputs", "expanding_sphere.deck"))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--extra", default="", help="more miniamr options, one string")
    ap.add_argument("--variants", default="static2x1,dyn2x1,static1x1,dyn1x2")
    ap.add_argument("--json")
    a = ap.parse_args()
    system_python.ensure("compare_runtimes.py", ["yaml"])
    names = a.variants.split(",")
    for n in names:
        if base(n) not in VARIANTS:
            ap.error(f"unknown variant {n} (known: {', '.join(VARIANTS)})")
        ranks, threads, _ = VARIANTS[base(n)]
        if ranks * threads > (os.cpu_count() or 1):
            ap.error(f"{n} needs {ranks * threads} cores, the machine has {os.cpu_count()}")
    miniamr = os.path.abspath(a.miniamr)
    deck = os.path.abspath(a.deck)
    extra = shlex.split(a.extra)

    results = {n: [] for n in names}
    for rep in range(a.reps):
        for n in names:
            r = run_once(miniamr, deck, n, extra)
            results[n].append(r)
            print(f"rep {rep + 1}/{a.reps} {n} wall {r['wall']:.3f} s run {r['run']:.3f} s",
                  flush=True)

    digests = {r["digest"] for rs in results.values() for r in rs}
    print(f"\n{os.path.basename(deck)} {a.extra}  ({a.reps} alternating repetitions)")
    width = max(10, max(len(n) for n in names))
    print(f"{'variant':{width}s} {'wall s: median (min..max)':>28s} "
          f"{'run s: median (min..max)':>28s} {'blocks moved':>13s} {'MB moved':>9s}")
    for n in names:
        print(f"{n:{width}s} {spread([r['wall'] for r in results[n]]):>28s} "
              f"{spread([r['run'] for r in results[n]]):>28s} "
              f"{statistics.median(r['moved'] for r in results[n]):13.0f} "
              f"{statistics.median(r['bytes'] for r in results[n]) / 1e6:9.1f}")
    ratios = {}
    pairs = list(PAIRS)
    if all("@" in n for n in names) and len(names) == 2:
        pairs = [(names[1], names[0])]  # two option sets of one layout: the second over the first
    for x, y in pairs:
        if x in results and y in results:
            # The ratio of medians, and its spread over the repetitions' own ratios.
            per_rep = [rx["wall"] / ry["wall"] for rx, ry in zip(results[x], results[y])]
            med = statistics.median(r["wall"] for r in results[x]) / \
                statistics.median(r["wall"] for r in results[y])
            ratios[f"{x}/{y}"] = med
            print(f"{x}/{y}: {med:.3f} (per repetition {min(per_rep):.3f}..{max(per_rep):.3f})")
    print("commands:")
    for n in names:
        print(f"  {results[n][0]['command']}")
    if len(digests) != 1:
        print(f"field_digest differs between runs: {sorted(digests)}")
        return 1
    print(f"field_digest {digests.pop()} in every run")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"deck": deck, "extra": a.extra, "reps": a.reps, "ratios": ratios,
                       "runs": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

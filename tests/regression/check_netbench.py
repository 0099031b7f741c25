#!/usr/bin/env python3
"""miniamr-netbench on 2 ranks: results.csv has a row for every test and size of the config
(point-to-point tests as same_node, collectives as all), model.yaml holds positive finite fits
that miniamr's reader accepts the shape of, and latency.png and bandwidth.png are PNG files. Bad
input (config syntax, unknown test, negative size, missing key, min > max, an --out that cannot
be made, a missing --config file, an unknown option): exit status 2, one message naming the
problem, no traceback or abort, no output files.

  check_netbench.py --netbench BIN --config bench/netbench.yaml
"""
import argparse
import concurrent.futures
import csv
import math
import os
import subprocess
import sys
import tempfile

import yaml

from mpi_env import failure_problems, mpi_env, verdict

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
POINT_TO_POINT = ("pingpong", "stream", "bidirectional")


def sizes(r):
    """The message sizes of a config's range, as miniamr-netbench makes them."""
    out, s = [], r["min"]
    while s <= r["max"]:
        out.append(s)
        s = max(s + 1, int(math.floor(s * r["factor"] + 0.5)))
    return out


def run(netbench, args, env, np=2):
    return subprocess.run(["mpirun", "-np", str(np), "--oversubscribe", netbench] + args,
                          env=env, capture_output=True, text=True, timeout=120)


def check_good_run(netbench, config, env, work):
    problems = []
    out = os.path.join(work, "good", "nested")  # --out is created, parents too
    r = run(netbench, ["--config", config, "--out", out], env)
    if r.returncode != 0:
        return [f"good run: exit {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"]
    with open(config) as f:
        tests = yaml.safe_load(f)["tests"]
    with open(os.path.join(out, "results.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    got = {(row["test"], row["pair_class"], int(row["bytes"])) for row in rows}
    for t in tests:
        cls = "same_node" if t["name"] in POINT_TO_POINT else "all"
        for n in sizes(t["sizes"]):
            if (t["name"], cls, n) not in got:
                problems.append(f"results.csv: no row for {t['name']} {cls} {n} bytes")
    for row in rows:
        values = [float(row[k]) for k in ("t_min_s", "t_median_s", "t_max_s", "bandwidth_Bps")]
        if not all(math.isfinite(v) and v > 0 for v in values) or \
                not values[0] <= values[1] <= values[2]:
            problems.append(f"results.csv: bad times in {row}")
        if int(row["reps"]) < 1:
            problems.append(f"results.csv: reps in {row}")
    with open(os.path.join(out, "model.yaml")) as f:
        model = yaml.safe_load(f)
    if model.get("model") != "alpha-beta":
        problems.append(f"model.yaml: model {model.get('model')!r}")
    if model.get("source", {}).get("ranks") != 2:
        problems.append(f"model.yaml: source {model.get('source')}")
    same = model.get("pair_classes", {}).get("same_node")
    if not same:
        problems.append("model.yaml: no same_node model")
    else:
        lat, bw = same.get("latency_s"), same.get("bandwidth_Bps")
        if not (isinstance(lat, float) and math.isfinite(lat) and lat >= 0):
            problems.append(f"model.yaml: latency_s {lat!r}")
        if not (isinstance(bw, float) and math.isfinite(bw) and bw > 0):
            problems.append(f"model.yaml: bandwidth_Bps {bw!r}")
    if "other_node" in model.get("pair_classes", {}):
        problems.append("model.yaml: an other_node model on one node")
    for name in ("latency.png", "bandwidth.png"):
        path = os.path.join(out, name)
        if not os.path.isfile(path):
            problems.append(f"{name} missing ({r.stdout[-500:]})")
            continue
        with open(path, "rb") as f:
            if f.read(8) != PNG_MAGIC:
                problems.append(f"{name} is not a PNG file")
    leftovers = [n for n in os.listdir(out) if n.startswith(".")]
    if leftovers:
        problems.append(f"temporary files left: {leftovers}")
    # --no-plots: the CSV and the model, no PNG.
    out2 = os.path.join(work, "noplots")
    r = run(netbench, ["--config", config, "--out", out2, "--no-plots"], env)
    if r.returncode != 0 or sorted(os.listdir(out2)) != ["model.yaml", "results.csv"]:
        problems.append(f"--no-plots: exit {r.returncode}, files "
                        f"{sorted(os.listdir(out2)) if os.path.isdir(out2) else None}")
    return problems


TEST = "{name: pingpong, sizes: {min: 8, max: 64, factor: 2}, reps: 2}"
# (name, config text or None for a missing file, extra arguments, text the message must hold)
BAD = [
    ("syntax", "tests:\n  - {name: pingpong, sizes: {min: 8\n", [], "not valid YAML"),
    ("unknown_test", "tests:\n  - {name: pingpang, sizes: {min: 8, max: 64, factor: 2}, reps: 2}\n",
     [], "unknown test 'pingpang'"),
    ("negative_size", "tests:\n  - {name: stream, sizes: {min: -8, max: 64, factor: 2}, reps: 2}\n",
     [], "'sizes.min' must be between 1 and"),
    ("missing_key", "tests:\n  - {name: allreduce, sizes: {min: 8, max: 64, factor: 2}}\n", [],
     "the key 'reps' is missing"),
    ("min_above_max", "tests:\n  - {name: pingpong, sizes: {min: 64, max: 8, factor: 2}, reps: 2}\n",
     [], "sizes.min 64 is larger than sizes.max 8"),
    ("factor_one", "tests:\n  - {name: pingpong, sizes: {min: 8, max: 64, factor: 1}, reps: 2}\n",
     [], "'sizes.factor' must be above 1"),
    ("reps_zero", "tests:\n  - {name: pingpong, sizes: {min: 8, max: 64, factor: 2}, reps: 0}\n",
     [], "'reps' must be at least 1, got 0"),
    ("duplicate_key", "tests:\n  - {name: pingpong, sizes: {min: 8, max: 64, factor: 2}, reps: 2, "
     "reps: 3}\n", [], "the key reps is given twice"),
    ("missing_config", None, [], "cannot read config file"),
    ("unknown_option", f"tests:\n  - {TEST}\n", ["--bogus"], "unknown option '--bogus'"),
    ("out_not_creatable", f"tests:\n  - {TEST}\n", ["OUT_UNDER_FILE"], "--out"),
]


def check_bad_case(netbench, env, work, name, text, extra, want):
    problems = []
    case = os.path.join(work, "bad_" + name)
    os.makedirs(case)
    config = os.path.join(case, "c.yaml")
    if text is not None:
        with open(config, "w") as f:
            f.write(text)
    out = os.path.join(case, "out")
    if extra == ["OUT_UNDER_FILE"]:
        # A folder under a regular file can never be made.
        out = os.path.join(config, "out")
        extra = []
    r = run(netbench, ["--config", config, "--out", out] + extra, env)
    for p in failure_problems(r, 2, want):
        problems.append(f"{name}: {p}: {r.stderr.strip()[:400]!r}")
    if name != "missing_config" and config not in r.stderr and "--" not in want:
        problems.append(f"{name}: the message does not name {config}")
    if "Traceback" in r.stderr or "terminate called" in r.stderr:
        problems.append(f"{name}: crash")
    if os.path.exists(os.path.join(case, "out")):
        problems.append(f"{name}: the output folder was made")
    if r.stdout.strip():
        problems.append(f"{name}: output on stdout: {r.stdout[:200]!r}")
    return problems


def check_bad_input(netbench, env, work):
    # Two runs at a time: each is mostly mpirun starting and stopping, not CPU.
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        found = pool.map(lambda case: check_bad_case(netbench, env, work, *case), BAD)
        return [p for ps in found for p in ps]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--netbench", required=True)
    ap.add_argument("--config", required=True)
    a = ap.parse_args()
    env = mpi_env()
    netbench, config = os.path.abspath(a.netbench), os.path.abspath(a.config)
    with tempfile.TemporaryDirectory() as work:
        problems = check_good_run(netbench, config, env, work)
        problems += check_bad_input(netbench, env, work)
    return verdict(problems, "miniamr-netbench: results, model, plots and bad input")


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""tools/miniamr-study on tiny runs: strong, weak and compare sweeps (runs.csv, summary.csv, the
digest check, PNGs), --emit-slurm scripts run through a fake srun and collected, --resume, a
failing run, a digest mismatch, oversubscription and every bad input (exit 2, one message).

  check_study.py --miniamr BIN --study tools/miniamr-study [--deck DECK]
  check_study.py --miniamr BIN --study tools/miniamr-study --reference [--tarball TGZ]

--reference checks only the reference variant: building it (about a minute on 2 cores), its rows
beside miniamr's and the reuse of the build.
"""
import argparse
import csv
import json
import os
import shlex
import statistics
import struct
import subprocess
import sys
import tempfile
import time

import yaml

from mpi_env import mpi_env

HERE = os.path.dirname(os.path.abspath(__file__))
TINY = "--num_tsteps 4"


class Checker:
    def __init__(self, study, miniamr, deck, work):
        self.study, self.miniamr, self.deck, self.work = study, miniamr, deck, work
        self.problems = []
        self.env = mpi_env()
        try:
            cores = len(os.sched_getaffinity(0))
        except AttributeError:
            cores = os.cpu_count() or 1
        self.cores = cores
        # Two ranks on a one-core machine: allowed, and marked, by --oversubscribe.
        self.oversub = ["--oversubscribe"] if cores < 2 else []

    def run(self, *args, miniamr=True, env=None):
        cmd = [sys.executable, self.study] + list(args)
        if miniamr and args[0] != "collect" and "--miniamr" not in args:
            cmd += ["--miniamr", self.miniamr]
        t0 = time.monotonic()
        p = subprocess.run(cmd, env=env or self.env, capture_output=True, text=True, timeout=600)
        print(f"  ({time.monotonic() - t0:5.1f} s, exit {p.returncode}) "
              f"{shlex.join(['miniamr-study'] + list(args))}", flush=True)
        return p

    def check(self, cond, what, p=None):
        if not cond:
            detail = (f"\n    stdout: {p.stdout[-1500:]}\n    stderr: {p.stderr[-1500:]}"
                      if p else "")
            self.problems.append(what + detail)
        return cond

    def out(self, name):
        return os.path.join(self.work, name)


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def png_problem(path):
    """Why `path` is not a PNG of a real plot; None when it is."""
    if not os.path.exists(path):
        return "missing"
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return "not a PNG"
    width, height = struct.unpack(">II", head[16:24])
    if width < 300 or height < 200 or os.path.getsize(path) < 10000:
        return f"trivial ({width}x{height}, {os.path.getsize(path)} bytes)"
    return None


def check_strong(c):
    out = c.out("strong")
    p = c.run("strong", c.deck, "--ranks", "1,2", "--variants", "static,dynamic", "--reps", "2",
              "--extra", TINY, "--out", out, *c.oversub)
    if not c.check(p.returncode == 0, "strong: exit status", p):
        return
    rows = read_csv(os.path.join(out, "runs.csv"))
    ok = "oversubscribed" if c.oversub else "ok"
    c.check(len(rows) == 8 and all(r["status"] in ("ok", ok) for r in rows),
            f"strong: want 8 finished rows, got {[(r['point'], r['status']) for r in rows]}")
    order = [(r["rep"], r["point"], r["variant"]) for r in rows]
    # The variants rotate by one each repetition.
    want = [(str(rep), pt, v) for rep in (1, 2) for pt in ("p1t1", "p2t1")
            for v in (("static", "dynamic") if rep == 1 else ("dynamic", "static"))]
    c.check(order == want, f"strong: order {order}, want rep > point > variant {want}")
    digests = {r["field_digest"] for r in rows}
    c.check(len(digests) == 1 and "" not in digests, f"strong: field digests {digests}")
    for r in rows:
        c.check(float(r["wall_s"]) > 0 and r["total_time_ave"] and r["T_comp"] and r["T_comm"],
                f"strong: figures missing in {r}")
        c.check(os.path.exists(os.path.join(out, r["run_dir"], "results.yaml")) and
                os.path.exists(os.path.join(out, r["run_dir"], "stdout.txt")),
                f"strong: {r['run_dir']} lacks results.yaml or stdout.txt")
    summary = read_csv(os.path.join(out, "summary.csv"))
    c.check(len(summary) == 4, f"strong: {len(summary)} summary rows, want 4")
    for s in summary:
        c.check(s["n"] == "2" and s["speedup"] and s["efficiency"] and s["wall_median"] and
                float(s["wall_min"]) <= float(s["wall_median"]) <= float(s["wall_max"]),
                f"strong: summary row {s}")
        if s["ranks"] == "2":
            eff = float(s["speedup"]) / 2
            c.check(abs(float(s["efficiency"]) - eff) < 1e-4,
                    f"strong: efficiency {s['efficiency']} is not speed-up/2 ({eff})")
        if s["variant"] == "dynamic":
            c.check(bool(s["ratio_to_static"]), "strong: no ratio_to_static for dynamic")
    for name in ("time.png", "efficiency.png", "load.png"):
        why = png_problem(os.path.join(out, name))
        c.check(why is None, f"strong: {name}: {why}")
    c.check("field_digest equal" in p.stdout, "strong: no word on the digest check", p)


def check_weak(c):
    out = c.out("weak")
    p = c.run("weak", c.deck, "--ranks", "1,2", "--variants", "static", "--reps", "1", "--extra",
              "--num_tsteps 6", "--out", out, *c.oversub)
    if not c.check(p.returncode == 0, "weak: exit status", p):
        return
    rows = read_csv(os.path.join(out, "runs.csv"))
    roots = {}
    for r in rows:
        with open(os.path.join(out, r["run_dir"], "results.yaml")) as f:
            y = yaml.safe_load(f)
        roots[int(r["ranks"])] = (y["npx"] * y["init_block_x"], y["npy"] * y["init_block_y"],
                                  y["npz"] * y["init_block_z"])
        c.check(r["root_grid"] == "x".join(map(str, roots[int(r["ranks"])])),
                f"weak: runs.csv root_grid {r['root_grid']} against results.yaml {roots}")
    if c.check(set(roots) == {1, 2}, f"weak: rank counts {sorted(roots)}"):
        n1 = roots[1][0] * roots[1][1] * roots[1][2]
        n2 = roots[2][0] * roots[2][1] * roots[2][2]
        c.check(n2 == 2 * n1, f"weak: root grid {roots[1]} on 1 rank, {roots[2]} on 2: not doubled")
    c.check("--init_y 2" in next(r["command"] for r in rows if r["ranks"] == "2"),
            "weak: the 2-rank command does not double init_y")
    # Each run's collectives and closure rounds per refinement step: the medians of its
    # results.yaml's refine_traffic after timestep 0. Two ranks exchange what one rank keeps to
    # itself, so their steps take more closure rounds (neighbour messages), and no fewer
    # collectives (a step that changes no leaf takes one, its tally, on any rank count).
    for r in rows:
        with open(os.path.join(out, r["run_dir"], "results.yaml")) as f:
            steps = [t for t in yaml.safe_load(f)["refine_traffic"] if t["timestep"] > 0]
        for column, key in (("collectives_per_step", "collectives"),
                            ("closure_rounds_per_step", "closure_rounds")):
            want = statistics.median(t[key] for t in steps) if steps else None
            got = float(r[column]) if r[column] else None
            c.check(got == want, f"weak: {r['ranks']} ranks: runs.csv {column} {r[column]!r}, "
                                 f"results.yaml's refine_traffic gives {want}")
    summary = read_csv(os.path.join(out, "summary.csv"))
    c.check(all(s["efficiency"] and s["work_efficiency"] and s["blocks_per_rank"] for s in summary),
            f"weak: summary lacks efficiencies: {summary}")
    per_step = {int(s["ranks"]): s["collectives_per_step_median"] for s in summary}
    c.check(all(per_step.values()) and float(per_step[2]) >= float(per_step[1]),
            f"weak: collectives per refinement step by ranks {per_step}: want no fewer on 2 ranks")
    rounds = {int(s["ranks"]): s["closure_rounds_median"] for s in summary}
    c.check(all(rounds.values()) and float(rounds[2]) > float(rounds[1]),
            f"weak: closure rounds per refinement step by ranks {rounds}: want more on 2 ranks")
    c.check("coll/step" in p.stdout, "weak: the printed table has no collectives per step")
    for name in ("time.png", "efficiency.png"):
        why = png_problem(os.path.join(out, name))
        c.check(why is None, f"weak: {name}: {why}")


def check_compare(c):
    out = c.out("compare")
    variants = "static,static@--slow_rank 1:4,dynamic@--slow_rank 1:4"
    p = c.run("compare", c.deck, "--ranks", "2", "--variants", variants, "--reps", "1",
              "--extra", TINY, "--out", out, *c.oversub)
    if not c.check(p.returncode == 0, "compare: exit status", p):
        return
    rows = read_csv(os.path.join(out, "runs.csv"))
    c.check([r["variant"] for r in rows] == variants.split(","), f"compare: rows {rows}")
    c.check(len({r["field_digest"] for r in rows}) == 1, "compare: the slow rank changed results")
    c.check(any("--slow_rank 1:4" in r["command"] for r in rows), "compare: no --slow_rank run")
    summary = read_csv(os.path.join(out, "summary.csv"))
    c.check(all(s["ratio_to_static"] for s in summary if s["variant"] != "static"),
            f"compare: ratios to static missing: {summary}")
    # One repetition: the run against the static run of its repetition is the ratio of the two.
    for s in summary:
        if s["variant"] == "static":
            c.check(not s["paired_ratio_to_static"], f"compare: static paired with itself: {s}")
            continue
        ratio = float(s["ratio_to_static"])
        c.check(s["static_pairs"] == "1" and
                abs(float(s["paired_ratio_to_static"]) - ratio) <= 1e-3 * ratio and
                s["paired_static_min"] == s["paired_ratio_to_static"] == s["paired_static_max"],
                f"compare: paired ratio to static: {s}")
        static = next(r for r in rows if r["variant"] == "static")
        mine = next(r for r in rows if r["variant"] == s["variant"])
        loop = float(mine["total_time_ave"]) / float(static["total_time_ave"])
        c.check(abs(float(s["loop_ratio_to_static"]) - loop) <= 1e-3 * loop and
                s["loop_static_min"] == s["loop_ratio_to_static"] == s["loop_static_max"],
                f"compare: time-loop ratio to static {s['loop_ratio_to_static']}, want {loop}")
        steps = ((float(mine["total_time_ave"]) - float(mine["T_ref"])) /
                 (float(static["total_time_ave"]) - float(static["T_ref"])))
        c.check(abs(float(s["steps_ratio_to_static"]) - steps) <= 1e-3 * steps and
                s["steps_static_min"] == s["steps_ratio_to_static"] == s["steps_static_max"],
                f"compare: ratio to static less refinement {s['steps_ratio_to_static']}, "
                f"want {steps}")
    c.check("against the static run of the same repetition" in p.stdout and
            "less refinement" in p.stdout,
            "compare: the terminal table shows no paired ratios to static", p)
    why = png_problem(os.path.join(out, "compare.png"))
    c.check(why is None, f"compare: compare.png: {why}")
    c.check("time loop by phase" in p.stdout and " refine  balance" in p.stdout,
            "compare: the terminal table shows no phases", p)
    check_balance_bound(c, out, rows, summary, p)
    check_table(c, out, rows)


def check_balance_bound(c, out, rows, summary, p):
    """Each static run's balance_bound is the harmonic mean of its ranks' compute seconds over
    their largest, from its own results.yaml; other runtimes' is empty; summary.csv and the
    terminal table give their median. Each run's system_s_max is its system_time_max."""
    for r in rows:
        with open(os.path.join(out, r["run_dir"], "results.yaml")) as f:
            doc = yaml.safe_load(f)
        times = doc["per_rank"]["compute_s"]
        c.check(r["system_s_max"] != "" and
                abs(float(r["system_s_max"]) - doc["system_time_max"]) <= 1e-9,
                f"compare: {r['variant']}: system_s_max {r['system_s_max']!r}, results.yaml "
                f"says {doc['system_time_max']}")
        if r["runtime"] != "static":
            c.check(r["balance_bound"] == "", f"compare: a {r['runtime']} run has a balance "
                    f"bound: {r['balance_bound']}")
            continue
        want = statistics.harmonic_mean(times) / max(times)
        c.check(r["balance_bound"] != "" and abs(float(r["balance_bound"]) - want) <= 1e-6,
                f"compare: {r['variant']}: balance_bound {r['balance_bound']!r}, want {want} "
                f"from compute_s {times}")
        s = next(s for s in summary if s["variant"] == r["variant"])
        c.check(abs(float(s["balance_bound_median"]) - want) <= 1e-4 * want,
                f"compare: {r['variant']}: balance_bound_median {s['balance_bound_median']}, "
                f"want {want} (one repetition)")
    c.check("the static runs' compute balanced perfectly" in p.stdout,
            "compare: the terminal table shows no balance bound", p)
    c.check("  system coll/step" in p.stdout, "compare: the phases show no system time", p)


def check_table(c, out, rows):
    """`table DIR`: the figures as Markdown that names machine, date, commit and command, and
    --into FILE replacing FILE's figures block (a file without one is refused)."""
    p = c.run("table", out, miniamr=False)
    if not c.check(p.returncode == 0, "table: exit status", p):
        return
    text = p.stdout
    with open(os.path.join(out, "study.json")) as f:
        machine = json.load(f).get("machine") or {}
    with open(os.path.join(out, "runs.csv")) as f:
        revision = next(csv.DictReader(f))["git_revision"]
    for what, want in (("the markers", "<!-- figures:begin -->"), ("the CPU", machine.get("cpu")),
                       ("the cores", f"{machine.get('cores')} cores"),
                       ("the date", rows[0]["started"][:10]), ("the commit", revision),
                       ("the command", "tools/miniamr-study compare "),
                       ("the phases", "| compute s | comm s | refine s | balance s |"),
                       ("the collectives", "| collectives per step |"),
                       ("the balance bound", "The static runs' compute balanced perfectly")):
        c.check(bool(want) and want in text, f"table: does not show {what} ({want!r})", p)
    c.check(len([l for l in text.splitlines() if l.startswith("| static")]) == 2,
            "table: not one row per variant", p)
    page = c.out("page.md")
    with open(page, "w") as f:
        f.write("# Page\n\nbefore\n<!-- figures:begin -->\nold\n<!-- figures:end -->\nafter\n")
    p = c.run("table", out, "--into", page, miniamr=False)
    with open(page) as f:
        new = f.read()
    c.check(p.returncode == 0 and "old" not in new and new.startswith("# Page\n\nbefore\n") and
            new.endswith("after\n") and "| static |" in new, f"table --into: {new!r}", p)
    with open(page, "w") as f:
        f.write("no block\n")
    p = c.run("table", out, "--into", page, miniamr=False)
    c.check(p.returncode == 2 and "figures:begin" in p.stderr, "table --into a file without "
            "a figures block: want exit 2 and a message", p)


def check_slurm(c):
    # Content: two thread counts, no core check (Slurm decides).
    emitted = c.out("slurm-content")
    p = c.run("strong", c.deck, "--ranks", "1,2", "--threads", "1,2", "--variants",
              "static,dynamic", "--reps", "2", "--extra", TINY, "--emit-slurm", emitted,
              "--slurm-option=--partition=test")
    if c.check(p.returncode == 0, "slurm: emit exit status", p):
        deck_copy = os.path.join(emitted, "deck", os.path.basename(c.deck))
        c.check(os.path.exists(deck_copy), "slurm: the deck was not copied")
        for ranks in (1, 2):
            for threads in (1, 2):
                path = os.path.join(emitted, f"p{ranks}t{threads}.sbatch")
                if not c.check(os.path.exists(path), f"slurm: {path} missing"):
                    continue
                text = open(path).read()
                for want in (f"#SBATCH --ntasks={ranks}\n", f"#SBATCH --cpus-per-task={threads}\n",
                             f"export OMP_NUM_THREADS={threads}\n", "#SBATCH --partition=test\n",
                             f"#SBATCH --output={emitted}/logs/"):
                    c.check(want in text, f"slurm: {path} lacks {want!r}")
                runs = [l for l in text.splitlines() if l.startswith("run ")]
                c.check(len(runs) == 4, f"slurm: {path} has {len(runs)} runs, want 4")
                for rep in (1, 2):
                    for v in ("static", "dynamic"):
                        folder = f"runs/p{ranks}t{threads}/{v}/rep{rep}"
                        want = (f"run {folder} srun -n {ranks} -c {threads} --cpu-bind=cores "
                                f"{c.miniamr} "
                                f"{deck_copy} --runtime {v} --threads {threads}")
                        c.check(any(l.startswith(want) for l in runs),
                                f"slurm: {path} lacks {want!r}")
                        c.check(os.path.exists(os.path.join(emitted, folder, "run.json")),
                                f"slurm: {folder}/run.json missing")
                c.check(runs[0].split()[1].endswith("static/rep1") and
                        runs[1].split()[1].endswith("dynamic/rep1"),
                        f"slurm: variants do not alternate: {runs[:2]}")
        submit = open(os.path.join(emitted, "submit.sh")).read()
        c.check(submit.count("sbatch p") == 4, "slurm: submit.sh does not submit the 4 points")
        p = c.run("collect", emitted, "--out", c.out("slurm-content-collected"))
        c.check(p.returncode == 1 and "did not finish" in p.stderr,
                "slurm: collecting runs that never ran is not a failure", p)

    # Run: the scripts through fake sbatch and srun (mpirun), then collect.
    emitted = c.out("slurm-run")
    p = c.run("strong", c.deck, "--ranks", "1,2", "--variants", "static,dynamic", "--reps", "1",
              "--extra", TINY, "--emit-slurm", emitted)
    if not c.check(p.returncode == 0, "slurm: emit exit status", p):
        return
    fake = c.out("fakebin")
    os.makedirs(fake, exist_ok=True)
    with open(os.path.join(fake, "srun"), "w") as f:
        f.write('#!/bin/bash\n# srun -n P -c T CMD... as mpirun\nn=1\nwhile [ $# -gt 0 ]; do\n'
                '  case "$1" in\n    -n) n=$2; shift 2 ;;\n    -c) shift 2 ;;\n'
                '    --*) shift ;;\n    *) break ;;\n  esac\n'
                'done\n'
                'exec mpirun -np "$n" --oversubscribe "$@"\n')
    with open(os.path.join(fake, "sbatch"), "w") as f:
        f.write('#!/bin/bash\necho "Submitted batch job $$"\nbash "$1"\n')
    for name in ("srun", "sbatch"):
        os.chmod(os.path.join(fake, name), 0o755)
    env = dict(c.env, PATH=fake + os.pathsep + c.env.get("PATH", ""))
    s = subprocess.run(["bash", os.path.join(emitted, "submit.sh")], env=env,
                       capture_output=True, text=True, timeout=300)
    c.check(s.returncode == 0 and s.stdout.count("Submitted batch job") == 2,
            "slurm: submit.sh through the fake sbatch", s)
    timing = os.path.join(emitted, "runs", "p2t1", "dynamic", "rep1", "timing.txt")
    c.check(os.path.exists(timing) and "exit_status 0" in open(timing).read(),
            f"slurm: {timing} missing or not a success")
    collected = c.out("slurm-collected")
    p = c.run("collect", emitted, "--out", collected)
    if not c.check(p.returncode == 0, "slurm: collect exit status", p):
        return
    rows = read_csv(os.path.join(collected, "runs.csv"))
    c.check(len(rows) == 4 and all(r["status"] == "ok" for r in rows) and
            len({r["field_digest"] for r in rows}) == 1, f"slurm: collected rows {rows}")
    c.check(len(read_csv(os.path.join(collected, "summary.csv"))) == 4, "slurm: summary rows")
    for name in ("time.png", "efficiency.png"):
        why = png_problem(os.path.join(collected, name))
        c.check(why is None, f"slurm: {name}: {why}")


def check_resume(c):
    out = c.out("resume")
    args = ["strong", c.deck, "--ranks", "1,2", "--variants", "static", "--reps", "2",
            "--extra", TINY, "--out", out] + c.oversub
    p = c.run(*args)
    if not c.check(p.returncode == 0, "resume: first study", p):
        return
    path = os.path.join(out, "runs.csv")
    rows = read_csv(path)
    # As if interrupted: two runs finished, the third failed, the fourth never started.
    rows[2]["status"] = "failed"
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, list(rows[0]))
        w.writeheader()
        w.writerows(rows[:3])
    p = c.run(*args)
    c.check(p.returncode == 2 and "--resume" in p.stderr,
            "resume: an existing runs.csv without --resume is not refused", p)
    p = c.run(*args, "--resume", "--dry-run")
    planned = [l for l in p.stdout.splitlines() if "miniamr" in l and l.startswith("(cd")]
    c.check(p.returncode == 0 and len(planned) == 2 and "rep2" in planned[0] and
            "rep2" in planned[1], f"resume: dry run plans {planned}, want the two rep2 runs", p)
    p = c.run(*args, "--resume")
    c.check(p.returncode == 0 and "2 to run" in p.stdout and "[2/2]" in p.stdout and
            "[3/" not in p.stdout, "resume: did not run exactly the two unfinished runs", p)
    after = read_csv(path)
    c.check(len(after) == 4 and all(r["status"] == "ok" for r in after if not c.oversub),
            f"resume: rows after {[(r['point'], r['rep'], r['status']) for r in after]}")
    c.check(after[:2] == rows[:2], "resume: the finished rows changed")


def check_failures(c):
    out = c.out("failing")
    p = c.run("compare", c.deck, "--ranks", "1", "--variants", "static,static@--nx 7",
              "--reps", "1", "--extra", TINY, "--out", out)
    c.check(p.returncode == 1 and "did not finish" in p.stderr and
            p.stderr.startswith("miniamr-study: error:"), "failing run: not exit 1", p)
    if os.path.exists(os.path.join(out, "runs.csv")):
        rows = read_csv(os.path.join(out, "runs.csv"))
        c.check([r["status"] for r in rows] == ["ok", "failed"], f"failing run: rows {rows}")
        c.check(os.path.exists(os.path.join(out, "summary.csv")), "failing run: no summary.csv")

    # A miniamr whose dynamic runs report another digest.
    shim = c.out("miniamr-shim")
    with open(shim, "w") as f:
        f.write(f"#!/bin/sh\n{shlex.quote(c.miniamr)} \"$@\" || exit $?\n"
                "case \" $* \" in *\" --runtime dynamic \"*)\n"
                "  sed -i 's/^field_digest: .*/field_digest: 0123456789abcdef/' results.yaml ;;\n"
                "esac\n")
    os.chmod(shim, 0o755)
    out = c.out("mismatch")
    p = c.run("compare", c.deck, "--ranks", "1", "--variants", "static,dynamic", "--reps", "1",
              "--extra", TINY, "--out", out, "--miniamr", shim)
    c.check(p.returncode == 1 and "field_digest differs" in p.stderr and
            "0123456789abcdef" in p.stderr, "digest mismatch: not reported with exit 1", p)
    c.check(os.path.exists(os.path.join(out, "summary.csv")) and
            len(read_csv(os.path.join(out, "runs.csv"))) == 2,
            "digest mismatch: what was measured was not written")

    # More threads than cores: refused, or run and marked with --oversubscribe.
    too_many = str(c.cores + 1)
    out = c.out("oversubscribed")
    p = c.run("compare", c.deck, "--ranks", "1", "--threads", too_many, "--variants", "dynamic",
              "--reps", "1", "--extra", TINY, "--out", out, "--oversubscribe")
    c.check(p.returncode == 0 and "not meaningful" in p.stderr, "oversubscribed: no warning", p)
    if os.path.exists(os.path.join(out, "runs.csv")):
        rows = read_csv(os.path.join(out, "runs.csv"))
        c.check([r["status"] for r in rows] == ["oversubscribed"],
                f"oversubscribed: rows {[r['status'] for r in rows]}")


def check_bad_inputs(c):
    out = c.out("never")
    deck = c.deck
    bad_deck = c.out("bad.deck")
    with open(bad_deck, "w") as f:
        f.write("nx = 8\nthis line has no value\n")
    junk = c.out("junk.tar.gz")
    with open(junk, "w") as f:
        f.write("not a tarball\n")
    cases = [
        (["strong", c.out("missing.deck"), "--ranks", "1"], "not found"),
        (["strong", bad_deck, "--ranks", "1"], "expected 'key = value'"),
        (["strong", deck, "--ranks", ""], "--ranks is empty"),
        (["strong", deck, "--ranks", "0"], "not a positive integer"),
        (["strong", deck, "--ranks", "a"], "not a positive integer"),
        (["strong", deck, "--ranks", "1,,2"], "not a positive integer"),
        (["weak", deck, "--ranks", "1", "--threads", str(c.cores + 1)], "add --oversubscribe"),
        (["strong", deck, "--ranks", str(c.cores + 1)], "add --oversubscribe"),
        (["compare", deck, "--ranks", "1", "--reference", "--reference-tarball", "/nonexistent"],
         "the reference does not build"),
        (["compare", deck, "--ranks", "1", "--reference", "--reference-tarball", junk,
          "--reference-dir", c.out("junk-reference")], "the reference does not build"),
        (["compare", deck, "--ranks", "1", "--variants", "static,turbo"], "unknown variant"),
        (["compare", deck, "--ranks", "1", "--variants", "static,"], "empty variant"),
        (["compare", deck, "--ranks", "1", "--reps", "0"], "--reps"),
        (["compare", deck, "--ranks", "1", "--miniamr", c.out("no-miniamr")],
         "no executable miniamr"),
    ]
    for args, text in cases:
        p = c.run(*args, "--out", out, miniamr="--miniamr" not in args)
        lines = p.stderr.strip().splitlines()
        c.check(p.returncode == 2 and len(lines) == 1 and
                lines[0].startswith("miniamr-study: error:") and text in lines[0],
                f"bad input {shlex.join(args)}: want exit 2 and one line with {text!r}", p)
    c.check(not os.path.exists(out), "bad input: the results folder was created")
    # Reference runs need a root grid their rank grid divides (2x1x1 on 4 ranks cannot).
    p = c.run("compare", deck, "--ranks", "4", "--reference", "--oversubscribe", "--dry-run")
    c.check(p.returncode == 2 and "cannot run the root grid" in p.stderr,
            "reference on an indivisible root grid: not refused", p)
    p = c.run("strong", deck, "--ranks", "1,2", "--reps", "2", "--dry-run", "--extra", TINY)
    lines = [l for l in p.stdout.splitlines() if l.startswith("(cd")]
    c.check(p.returncode == 0 and len(lines) == 8 and "mpirun -np 2" in p.stdout,
            "dry run: not the 8 commands", p)


def check_reference(c, tarball):
    ref_dir = c.out("reference-build")
    out = c.out("reference")
    args = ["compare", c.deck, "--ranks", "1,2", "--variants", "static", "--reference", "--reps",
            "1", "--extra", TINY, "--reference-dir", ref_dir] + c.oversub
    if tarball:
        args += ["--reference-tarball", tarball]
    p = c.run(*args, "--out", out)
    if not c.check(p.returncode == 0 and "building the reference" in p.stdout,
                   "reference: study with a first build", p):
        return
    rows = read_csv(os.path.join(out, "runs.csv"))
    ref = [r for r in rows if r["variant"] == "reference"]
    c.check(len(ref) == 2 and all(r["status"] in ("ok", "oversubscribed") for r in ref),
            f"reference: rows {ref}")
    for r in ref:
        ours = next(o for o in rows if o["point"] == r["point"] and o["variant"] == "static")
        c.check(float(r["blocks_ts_ave"]) == float(ours["blocks_ts_ave"]),
                f"reference: {r['blocks_ts_ave']} blocks per stage against miniamr's "
                f"{ours['blocks_ts_ave']} at {r['point']}")
        c.check(f"--npx {r['ranks']}" in r["command"] and "--report_perf 4" in r["command"] and
                "--runtime" not in r["command"], f"reference: command {r['command']}")
    summary = read_csv(os.path.join(out, "summary.csv"))
    c.check(all(s["ratio_to_reference"] for s in summary if s["variant"] == "static"),
            f"reference: no ratio_to_reference: {summary}")
    # One repetition: each point's paired ratios are those of its one pair of runs.
    for s in (s for s in summary if s["variant"] == "static"):
        ours = next(r for r in rows if r["point"] == s["point"] and r["variant"] == "static")
        theirs = next(r for r in ref if r["point"] == s["point"])
        wall = float(ours["wall_s"]) / float(theirs["wall_s"])
        c.check(s["pairs"] == "1" and
                abs(float(s["paired_ratio_to_reference"]) - wall) <= 1e-3 * wall and
                s["paired_ratio_min"] == s["paired_ratio_to_reference"] == s["paired_ratio_max"],
                f"reference: paired wall ratio {s} against {wall}")
        if float(theirs["T_ref"] or 0) > 0:  # a tiny run may refine in no measurable time
            refine = (float(ours["T_ref"]) + float(ours["T_lb"] or 0)) / float(theirs["T_ref"])
            c.check(abs(float(s["refine_ratio_to_reference"]) - refine) <= 1e-3 * refine,
                    f"reference: paired refinement ratio {s} against {refine}")
    c.check("against the reference run of the same repetition" in p.stdout,
            "reference: no paired ratios printed", p)
    p = c.run(*args, "--out", c.out("reference2"))
    c.check(p.returncode == 0 and "building the reference" not in p.stdout,
            "reference: the build was not reused", p)
    emitted = c.out("reference-slurm")
    p = c.run("compare", c.deck, "--ranks", "2", "--variants", "static", "--reference",
              "--extra", TINY, "--emit-slurm", emitted,
              *(["--reference-tarball", tarball] if tarball else []))
    if c.check(p.returncode == 0, "reference: emit", p):
        text = open(os.path.join(emitted, "p2t1.sbatch")).read()
        exe = os.path.join(emitted, "reference", "miniAMR-1.7", "ref", "miniAMR.x")
        c.check(f"srun -n 2 -c 1 --cpu-bind=cores {exe} " in text,
                "reference: the script does not run it")
        submit = open(os.path.join(emitted, "submit.sh")).read()
        c.check("make -C miniAMR-1.7/ref CC=mpicc LD=mpicc" in submit,
                "reference: submit.sh does not build it")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--miniamr", required=True)
    ap.add_argument("--study", required=True, help="tools/miniamr-study")
    ap.add_argument("--deck", default=os.path.join(HERE, "..", "..", "inputs",
                                                   "expanding_sphere-ci.deck"))
    ap.add_argument("--reference", action="store_true", help="check only the reference variant")
    ap.add_argument("--tarball", help="the reference's tarball (default: the tool's)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="check-study-") as work:
        c = Checker(os.path.abspath(a.study), os.path.abspath(a.miniamr),
                    os.path.abspath(a.deck), work)
        if a.reference:
            check_reference(c, a.tarball)
        else:
            for check in (check_bad_inputs, check_strong, check_weak, check_compare, check_slurm,
                          check_resume, check_failures):
                check(c)
    for problem in c.problems:
        print("FAIL:", problem)
    print("ok" if not c.problems else f"{len(c.problems)} problem(s)")
    return 1 if c.problems else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""--trace: the Chrome trace of a 2-rank run is valid JSON with task and message events, and the
dynamic runtime has send and recv events and no stage barrier (a rank starts some task of
stage s+1 before its last task of stage s has ended). The static runtime's trace is valid too,
its padded sweeps cover --sweep_vars variables each (compact ones a whole group), with --chunk_vars 2 the first two variables run
ahead of the last two (a stage s+1 sweep of them starts before a stage s sweep of the others)
and with --chunk_vars 4 they do not; with --chunk_vars 2 they run ahead into the next timestep
of their batch too, and with --batch_tsteps 1 only within a timestep; the dynamic runtime's
tasks cover all 4 variables with --chunk_vars 4 and one each with --chunk_vars 1 (a task graph
per variable); and all runs give the same field.

  check_trace.py --miniamr BIN --deck DECK
"""
import json
import os
import subprocess
import sys
import tempfile

import yaml

from mpi_env import mpi_env, script_arguments


def run_traced(miniamr, deck, runtime, work, env, attempt=1, extra=()):
    """Runs 2 ranks with --trace in a fresh directory under work; returns (events, results, problems)."""
    wdir = os.path.join(work, f"{runtime}{attempt}")
    os.mkdir(wdir)
    cmd = ["mpirun", "-np", "2", "--oversubscribe", "--bind-to", "none", os.path.abspath(miniamr),
           os.path.abspath(deck), "--runtime", runtime, "--threads", "2", "--num_tsteps", "6",
           "--num_vars", "4", "--trace", "t.json", "--report_perf", "1"]
    cmd += list(extra)
    run = subprocess.run(cmd, cwd=wdir, env=env, capture_output=True, text=True, timeout=300)
    if run.returncode != 0:
        return None, None, [f"{' '.join(cmd)}: exit status {run.returncode}\n{run.stdout[-2000:]}"
                            f"\n{run.stderr[-2000:]}"]
    problems = []
    try:
        with open(os.path.join(wdir, "t.json")) as f:
            data = json.load(f)
    except (OSError, ValueError) as e:
        return None, None, [f"{runtime}: t.json is not valid JSON: {e}"]
    events = data["traceEvents"] if isinstance(data, dict) else data
    if not isinstance(events, list):
        return None, None, [f"{runtime}: no traceEvents list"]
    with open(os.path.join(wdir, "results.yaml")) as f:
        results = yaml.safe_load(f)
    if results.get("runtime") != runtime:
        problems.append(f"{runtime}: results.yaml says runtime {results.get('runtime')}")
    for e in events:
        if e.get("ph") == "X" and not all(k in e for k in ("name", "ts", "dur", "pid", "tid")):
            problems.append(f"{runtime}: complete event without name/ts/dur/pid/tid: {e}")
            break
    return events, results, problems


def check_tasks(events, results, runtime):
    problems = []
    tasks = [e for e in events if e.get("cat") == "task" and e.get("ph") == "X"]
    if not tasks:
        return [f"{runtime}: no task events"]
    names = {e["name"] for e in tasks}
    if "sweep" not in names:
        problems.append(f"{runtime}: no sweep task events (names {sorted(names)})")
    bad = [e for e in tasks if not isinstance(e.get("args"), dict)
           or not isinstance(e["args"].get("block"), str) or not e["args"]["block"]
           or not isinstance(e["args"].get("stage"), int)]
    if bad:
        problems.append(f"{runtime}: {len(bad)} task events without args block and stage, "
                        f"e.g. {bad[0]}")
    pids = {e["pid"] for e in events if e.get("ph") == "X"}
    if not {0, 1} <= pids:
        problems.append(f"{runtime}: pids {sorted(pids)}, want 0 and 1")
    if runtime == "static":
        # --sweep_vars 3 over 4 variables: padded sweeps make passes of 3 variables, then 1;
        # compact interiors (AVX-512 machines) sweep the whole group of 4 at once.
        widths = sorted({e["args"].get("vars") for e in tasks if e["name"] == "sweep"
                         and isinstance(e.get("args"), dict)}, key=str)
        compact = (results.get("kernel_calls") or {}).get("compact", 0) > 0
        want = [4] if compact else [1, 3]
        if widths != want:
            problems.append(f"static: sweeps of {widths} variables, want {want} (--sweep_vars 3, "
                            f"{'compact' if compact else 'padded'} interiors)")
    # (the static runtime traces its sweeps only; messages are the dynamic runtime's tasks)
    for name in ("send", "recv") if runtime == "dynamic" else ():
        if not any(e.get("cat") == "message" and e["name"] == name for e in events):
            problems.append(f"{runtime}: no {name} events")
    return problems


def task_vars(events):
    """The first variables of the sweep tasks of a trace."""
    return sorted({e["args"].get("var") for e in events if e.get("name") == "sweep"
                   and e.get("ph") == "X" and isinstance(e.get("args"), dict)}, key=str)


def chunk_runs_ahead(events, per_ts=1):
    """Whether on some rank a sweep of variables 0-1 in stage s+1 starts before a sweep of
    variables 2-3 in stage s ends (a stage-by-stage order never does that); with per_ts, only
    for s+1 the first stage of a timestep of per_ts stages."""
    sweeps = [e for e in events if e.get("name") == "sweep" and e.get("ph") == "X"
              and isinstance(e.get("args"), dict)]
    late = {}  # (pid, stage) -> last end of a sweep of variables 2-3
    for e in sweeps:
        if e["args"].get("var", 0) >= 2:
            key = (e["pid"], e["args"]["stage"])
            late[key] = max(late.get(key, float("-inf")), float(e["ts"]) + float(e["dur"]))
    return any(e["args"].get("var", 0) < 2 and e["args"]["stage"] % per_ts == 0
               and (e["pid"], e["args"]["stage"] - 1) in late
               and float(e["ts"]) < late[(e["pid"], e["args"]["stage"] - 1)] for e in sweeps)


def overlaps(events):
    """(pid, stage) pairs where a task of stage+1 starts before that rank's stage's last end."""
    end = {}
    tasks = [e for e in events if e.get("cat") == "task" and e.get("ph") == "X"
             and isinstance(e.get("args"), dict) and isinstance(e["args"].get("stage"), int)]
    for e in tasks:
        key = (e["pid"], e["args"]["stage"])
        end[key] = max(end.get(key, float("-inf")), float(e["ts"]) + float(e["dur"]))
    found = set()
    for e in tasks:
        prev = (e["pid"], e["args"]["stage"] - 1)
        if prev in end and float(e["ts"]) < end[prev]:
            found.add(prev)
    return sorted(found)


def main():
    a = script_arguments().parse_args()
    env = mpi_env()
    problems = []
    digests = {}
    with tempfile.TemporaryDirectory() as work:
        for runtime in ("dynamic", "static"):
            extra = ["--chunk_vars", "4"] + (["--sweep_vars", "3"] if runtime == "static" else [])
            events, results, p = run_traced(a.miniamr, a.deck, runtime, work, env, extra=extra)
            problems += p
            if events is None:
                continue
            problems += check_tasks(events, results, runtime)
            digests[runtime] = results.get("field_digest")
            if runtime == "dynamic":
                # Only the last timesteps have several blocks a rank, so a loaded machine could
                # run them in stage order by chance: try again; a stage barrier never overlaps.
                found = overlaps(events)
                for attempt in range(2, 4):
                    if found:
                        break
                    again, _, p = run_traced(a.miniamr, a.deck, runtime, work, env, attempt)
                    problems += p
                    found = overlaps(again) if again else []
                if not found:
                    problems.append("dynamic: on every rank each stage's tasks all end before "
                                    "any task of the next stage starts (a stage barrier)")
                if task_vars(events) != [0]:
                    problems.append(f"dynamic --chunk_vars 4: sweeps start at variables "
                                    f"{task_vars(events)}, want [0] (one graph for all 4)")
                per_var, results, p = run_traced(a.miniamr, a.deck, runtime, work, env,
                                                 attempt=9, extra=["--chunk_vars", "1"])
                problems += p
                if per_var is not None:
                    if task_vars(per_var) != [0, 1, 2, 3]:
                        problems.append(f"dynamic --chunk_vars 1: sweeps start at variables "
                                        f"{task_vars(per_var)}, want [0, 1, 2, 3]")
                    if results.get("field_digest") != digests["dynamic"]:
                        problems.append(f"field_digest dynamic --chunk_vars 1 "
                                        f"{results.get('field_digest')} != {digests['dynamic']}")
                else:
                    print(f"dynamic: stage overlap on (rank, stage) {found[:6]}"
                          f"{' ...' if len(found) > 6 else ''}")
            else:
                if chunk_runs_ahead(events):
                    problems.append("static --chunk_vars 4: variables 0-1 ran a stage ahead of "
                                    "variables 2-3")
                # Timesteps 1-5 one batch, refinement after the fifth.
                batches = ["--refine_freq", "5", "--batch_tsteps", "5"]
                chunked, results, p = run_traced(a.miniamr, a.deck, runtime, work, env, attempt=2,
                                                 extra=["--chunk_vars", "2"] + batches)
                problems += p
                if chunked is not None:
                    per_ts = results["stages_per_timestep"]
                    if not chunk_runs_ahead(chunked):
                        problems.append("static --chunk_vars 2: variables 0-1 never ran a stage "
                                        "ahead of variables 2-3")
                    if not chunk_runs_ahead(chunked, per_ts):
                        problems.append("static --chunk_vars 2: variables 0-1 never ran into the "
                                        "next timestep ahead of variables 2-3")
                    if results.get("field_digest") != digests["static"]:
                        problems.append(f"field_digest static --chunk_vars 2 "
                                        f"{results.get('field_digest')} != {digests['static']}")
                single, results, p = run_traced(a.miniamr, a.deck, runtime, work, attempt=3,
                                                env=env,
                                                extra=["--chunk_vars", "2"] + batches[:2] +
                                                ["--batch_tsteps", "1"])
                problems += p
                if single is not None:
                    if not chunk_runs_ahead(single):
                        problems.append("static --chunk_vars 2 --batch_tsteps 1: variables 0-1 "
                                        "never ran a stage ahead of variables 2-3")
                    if chunk_runs_ahead(single, results["stages_per_timestep"]):
                        problems.append("static --batch_tsteps 1: variables 0-1 ran into the "
                                        "next timestep ahead of variables 2-3")
                    if results.get("field_digest") != digests["static"]:
                        problems.append(f"field_digest static --batch_tsteps 1 "
                                        f"{results.get('field_digest')} != {digests['static']}")
    if len(digests) == 2 and (digests["dynamic"] is None or digests["dynamic"] != digests["static"]):
        problems.append(f"field_digest dynamic {digests['dynamic']} != static {digests['static']}")
    print("\n".join(problems) if problems else "ok: traces valid, no stage barrier, same digest")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The spawn start-up (--launch spawn): one main process spawns its workers and the run is the
one `mpirun -np N+1` gives, bitwise, with either runtime; the workers go where a plan file or a
plan server says, and a plan server that is down, silent or talks garbage costs at most the
timeout (or, with --plan_strict, stops the run with a clear message).

  check_spawn.py --miniamr BIN --inputs DIR --plan-server tools/miniamr-plan-server
"""
import concurrent.futures
import os
import re
import socket
import subprocess
import sys
import tempfile

import yaml

from fake_plan_servers import closing_server, garbage_server, plan_server, silent_server
from mpi_env import mpi_env, result_differences, script_arguments, verdict

WORKERS = 2
TIMEOUT = 300


def run(miniamr, args, cwd, np=1, launcher=True):
    """Runs miniamr; `launcher` false runs it without mpirun (a singleton)."""
    cmd = ["mpirun", "-q", "-np", str(np), "--oversubscribe"] if launcher else []
    return subprocess.run(cmd + [miniamr] + args, cwd=cwd, env=mpi_env(), capture_output=True,
                          text=True, timeout=TIMEOUT)


def results(path):
    with open(path) as f:
        return yaml.safe_load(f)


def spawn_args(deck, out, *extra):
    return [deck, "--launch", "spawn", "--workers", str(WORKERS), "--quiet", "--results", out,
            *extra]


def placement_problems(res, planned, what):
    """Why the results do not show a spawned run of 1+WORKERS ranks whose workers were planned
    on `planned` (None: no plan applied) and run where they were planned."""
    problems = []
    if res.get("ranks") != WORKERS + 1:
        problems.append(f"{what}: {res.get('ranks')} ranks, want {WORKERS + 1}")
    if res.get("launch", {}).get("mode") != "spawn":
        problems.append(f"{what}: launch mode {res.get('launch')}")
    rows = res.get("placement", [])
    if [r["rank"] for r in rows] != list(range(WORKERS + 1)):
        problems.append(f"{what}: placement {rows} does not list every rank")
    for r in rows[1:]:
        want = planned[r["rank"] - 1] if planned else ""
        if r["planned"] != want:
            problems.append(f"{what}: rank {r['rank']} planned on {r['planned']!r}, want {want!r}")
        if planned and r["host"] != r["planned"]:
            problems.append(f"{what}: rank {r['rank']} ran on {r['host']}, planned {r['planned']}")
    return problems


def check_same_as_mpirun(a, work):
    """Spawned 1+2 ranks against mpirun -np 3: bitwise the same results, both runtimes."""
    problems = []
    deck = os.path.join(a.inputs, "two_spheres-ci.deck")
    for runtime in ("static", "dynamic"):
        spawned, direct = (os.path.join(work, f"{runtime}.{k}.yaml") for k in ("spawn", "np3"))
        r1 = run(a.miniamr, spawn_args(deck, spawned, "--runtime", runtime), work)
        r2 = run(a.miniamr, [deck, "--runtime", runtime, "--quiet", "--results", direct], work,
                 np=WORKERS + 1)
        if r1.returncode or r2.returncode:
            problems.append(f"{runtime}: exit {r1.returncode}/{r2.returncode}: "
                            f"{r1.stderr[-400:]}{r2.stderr[-400:]}")
            continue
        got, want = results(spawned), results(direct)
        problems += result_differences(got, want, f"mpirun -np 3 --runtime {runtime}")
        problems += placement_problems(got, None, f"spawn {runtime}")
        if got["final_blocks_per_level"] != want["final_blocks_per_level"]:
            problems.append(f"{runtime}: a different mesh from mpirun -np 3")
    return problems


def check_plans(a, work, host):
    """A plan file, the plan server (which must log the request), and a singleton start."""
    problems = []
    deck = os.path.join(a.inputs, "expanding_sphere-ci.deck")
    planned = [host] * WORKERS
    plan = os.path.join(work, "plan.txt")
    with open(plan, "w") as f:
        f.write(f"# this machine for both workers\ninit.0: {','.join(planned)}\n"
                f"init.1: nowhere\n")
    out = os.path.join(work, "file.yaml")
    r = run(a.miniamr, spawn_args(deck, out, "--plan", plan), work)
    if r.returncode:
        problems.append(f"plan file: exit {r.returncode}: {r.stderr[-400:]}")
    else:
        problems += placement_problems(results(out), planned, "plan file")
    out = os.path.join(work, "singleton.yaml")
    r = run(a.miniamr, spawn_args(deck, out, "--plan", plan), work, launcher=False)
    if r.returncode:
        problems.append(f"singleton: exit {r.returncode}: {r.stderr[-400:]}")
    else:
        problems += placement_problems(results(out), planned, "singleton with a plan file")

    log = os.path.join(work, "server.log")
    with plan_server(a.plan_server, plan, "--log", log) as server:
        out = os.path.join(work, "server.yaml")
        r = run(a.miniamr, spawn_args(deck, out, "--plan", f"127.0.0.1:{server.port}"), work)
    if r.returncode:
        problems.append(f"plan server: exit {r.returncode}: {r.stderr[-400:]}")
    else:
        res = results(out)
        problems += placement_problems(res, planned, "plan server")
        if res["launch"]["plan_source"] != "server" or res["launch"]["plan_fallback"]:
            problems.append(f"plan server: launch {res['launch']}")
    with open(log) as f:
        logged = f.read()
    # Under mpirun the job id is Open MPI's; the child's is not known before the spawn.
    if not re.search(r"request '\d+;0;\?'.*init\.0.*" + re.escape(",".join(planned)), logged):
        problems.append(f"plan server log lacks the request and its answer: {logged!r}")
    return problems


def check_failing_servers(a, work):
    """Down, silent, garbage and ERROR answers: the run goes on where the launcher maps the
    workers, within the timeout; --plan_strict stops it instead."""
    problems = []
    deck = os.path.join(a.inputs, "expanding_sphere-ci.deck")
    timeout = 1.0
    with closing_server() as down, silent_server() as silent, garbage_server() as garbage:
        cases = [("closed", down.port, "plan server"), ("silent", silent.port, "no answer within 1 s"),
                 ("garbage", garbage.port, "is not a comma-separated list of host names")]
        for name, port, why in cases:
            out = os.path.join(work, f"{name}.yaml")
            args = spawn_args(deck, out, "--plan", f"127.0.0.1:{port}", "--plan_timeout",
                              str(timeout))
            r = run(a.miniamr, args, work)
            if r.returncode:
                problems.append(f"{name} server: exit {r.returncode}: {r.stderr[-400:]}")
                continue
            res = results(out)
            problems += placement_problems(res, None, f"{name} server")
            if why not in res["launch"]["plan_fallback"]:
                problems.append(f"{name} server: fallback {res['launch']['plan_fallback']!r} "
                                f"does not say {why!r}")
            strict = run(a.miniamr, args + ["--plan_strict"], work)
            if strict.returncode != 2 or "--plan_strict: plan server 127.0.0.1" not in strict.stderr:
                problems.append(f"{name} server, --plan_strict: exit {strict.returncode}, "
                                f"stderr {strict.stderr[-400:]!r}")
            if os.path.exists(os.path.join(work, "results.yaml")):
                problems.append(f"{name} server, --plan_strict: results.yaml written")
        if silent.requests and not re.fullmatch(r"\d+;0;\?", silent.requests[0]):
            problems.append(f"request line {silent.requests[0]!r}")
    return problems


def check_bad_plans(a, work, host):
    """Plans that cannot be used: one clear message, exit 2, before anything is spawned."""
    problems = []
    deck = os.path.join(a.inputs, "expanding_sphere-ci.deck")
    files = {"short.txt": f"init.0: {host}\n", "malformed.txt": f"init.0: {host},{host}\nfoo\n",
             "twice.txt": f"init.0: {host},{host}\ninit.0: {host},{host}\n",
             "other.txt": f"init.3: {host},{host}\n"}
    for name, text in files.items():
        with open(os.path.join(work, name), "w") as f:
            f.write(text)
    no_plan = os.path.join(a.inputs, "plan.txt")  # names no file
    cases = [("short.txt", f"the plan names 1 node for {WORKERS} workers"),
             ("malformed.txt", "malformed.txt:2: expected 'KEY: node,node,...', got 'foo'"),
             ("twice.txt", "twice.txt:2: the key init.0 appears twice"),
             ("other.txt", "no line for init.0, the key of this process"),
             (no_plan, "no such file, and not HOST:PORT")]
    for plan, text in cases:
        r = run(a.miniamr, spawn_args(deck, "out.yaml", "--plan", os.path.join(work, plan)), work)
        if r.returncode != 2 or r.stderr.count(text) != 1:
            problems.append(f"--plan {plan}: exit {r.returncode}, stderr {r.stderr[-400:]!r} "
                            f"should hold {text!r}")
    with open(os.path.join(work, "away.txt"), "w") as f:
        f.write(f"init.0: {host},host-not-in-this-allocation\n")
    r = run(a.miniamr, spawn_args(deck, "out.yaml", "--plan", "away.txt"), work)
    text = "--launch spawn: starting 2 workers on "
    if r.returncode == 0 or text not in r.stderr or "host-not-in-this-allocation" not in r.stderr:
        problems.append(f"a host outside the allocation: exit {r.returncode}, "
                        f"stderr {r.stderr[-600:]!r}")
    if os.path.exists(os.path.join(work, "out.yaml")):
        problems.append("a bad plan left a results file")
    return problems


def main():
    ap = script_arguments(deck=False)
    ap.add_argument("--inputs", required=True)
    ap.add_argument("--plan-server", required=True)
    a = ap.parse_args()
    a.miniamr = os.path.abspath(a.miniamr)
    a.inputs = os.path.abspath(a.inputs)
    a.plan_server = os.path.abspath(a.plan_server)
    # MPI_Get_processor_name is the host name here, and the plan must name a host of the
    # allocation: this one.
    host = socket.gethostname()
    failures = []
    with tempfile.TemporaryDirectory() as work:
        # The groups write distinct files; two at a time keep both cores busy (most of a spawned
        # run is starting and stopping processes).
        checks = (lambda: check_same_as_mpirun(a, work), lambda: check_plans(a, work, host),
                  lambda: check_failing_servers(a, work), lambda: check_bad_plans(a, work, host))
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            for problems in pool.map(lambda check: check(), checks):
                failures += problems
    return verdict(failures, "spawned runs equal mpirun's and go where the plan says")


if __name__ == "__main__":
    sys.exit(main())

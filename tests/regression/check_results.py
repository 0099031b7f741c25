#!/usr/bin/env python3
"""--results PATH and --results_format: the file is written where asked (even without
--report_perf 1), in YAML or JSON with the same keys, and carries the schema version, the
provenance of the run (the eager limit Open MPI's shared-memory transport was given: miniamr's
default, or the one the environment gives) and per-rank figures. Its keys are those of results_keys.txt, in order
(the list the Python reader takes its names from), for both runtimes; and the end report says
what ran: the static runtime's curve cut, the dynamic balancer's strategy, decisions and blocks
migrated, as results.yaml counts them; partition_bytes_per_rank says whether the partition
travelled in 8 bytes a rank or 16; and refine_traffic's blocks moved add up to the run's.

  check_results.py --miniamr BIN --deck DECK
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import yaml

from mpi_env import mpi_env, result_differences, script_arguments, verdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import miniamr_results  # noqa: E402


def revision_problems(revision):
    """Why a run's provenance.git_revision is not the source tree's commit (when the tree is a
    git checkout): a build reads the revision at every build, not once at configure time."""
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    try:
        head = subprocess.run(["git", "-C", source, "rev-parse", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return []  # not a git checkout (a release tarball): "unknown" is right
    commit = revision.removesuffix("-dirty").rsplit("-g", 1)[-1]
    if len(commit) < 4 or not head.startswith(commit):
        return [f"provenance.git_revision {revision!r} is not the source tree's commit "
                f"{head[:12]} (a stale build, or a revision read only at configure time)"]
    return []


def key_problems(doc, name):
    """Why the top-level keys of a results document are not results_keys.txt's, in order."""
    want = miniamr_results.expected_keys(doc.get("runtime"), doc.get("num_objects", 0))
    got = list(doc.keys())
    if got == want:
        return []
    missing = [k for k in want if k not in got]
    extra = [k for k in got if k not in want]
    return [f"{name}: keys differ from results_keys.txt: missing {missing[:5]}, not listed "
            f"{extra[:5]}" + ("" if missing or extra else " (order)")]


def report_problems(stdout, doc, runtime):
    """Why the end report does not describe the balancing that ran, as the results count it."""
    problems = []
    if "RCB" in stdout:
        problems.append(f"{runtime}: the report claims RCB, which miniamr does not run")
    lines = [l for l in stdout.splitlines() if l.startswith("Load balance:")]
    if len(lines) != 2:
        return problems + [f"{runtime}: want 2 'Load balance:' lines (plan, outcome), got {lines}"]
    plan, outcome = lines
    if runtime == "static":
        if "Morton curve cut into equal shares" not in plan:
            problems.append(f"static: the plan line does not name the curve cut: {plan!r}")
        m = re.search(r"curve cuts moved (\d+) blocks \(re-cuts after a refinement step: (\d+)\)",
                      outcome)
        if not m or (int(m.group(1)), int(m.group(2))) != (doc["blocks_moved_lb"],
                                                          doc["load_balances"]):
            problems.append(f"static: {outcome!r} does not state blocks_moved_lb "
                            f"{doc['blocks_moved_lb']} and load_balances {doc['load_balances']}")
    else:
        if f"strategy {doc['lb_strategy']}" not in plan:
            problems.append(f"dynamic: the plan line does not name strategy "
                            f"{doc['lb_strategy']}: {plan!r}")
        m = re.search(r"decisions taken (\d+) and skipped (\d+), blocks migrated (\d+)", outcome)
        want = (doc["lb_decisions_taken"], doc["lb_decisions_skipped"], doc["blocks_migrated"])
        if not m or tuple(int(g) for g in m.groups()) != want:
            problems.append(f"dynamic: {outcome!r} does not state decisions taken/skipped and "
                            f"blocks migrated {want}")
        if doc["blocks_migrated"] == 0:
            problems.append("dynamic: no block migrated under a slow rank: nothing was checked")
    m = re.search(r"balancing time ave ([0-9.]+) s, max ([0-9.]+) s", outcome)
    if not m or abs(float(m.group(1)) - doc["time_total_load_bal_ave"]) > 1e-6:
        problems.append(f"{runtime}: {outcome!r} does not state the balancing time "
                        f"{doc['time_total_load_bal_ave']}")
    return problems


def partition_problems(miniamr, deck, env, work):
    """Why partition_bytes_per_rank does not say which partition the runs exchanged: 8 bytes a
    rank while 3 (root grid bits + num_refine) < 64 (the deck: 2 root bits, num_refine 3 or so),
    16 beyond (4 roots a side need 2 bits, and 3 (2 + 20) = 66)."""
    problems = []
    for want, args in ((8, [os.path.abspath(deck)]),
                       (16, ["--num_refine", "20", "--init_x", "4", "--init_y", "1",
                             "--init_z", "1"])):
        out = os.path.join(work, f"partition_{want}.yaml")
        p = subprocess.run(["mpirun", "-q", "-np", "2", os.path.abspath(miniamr)] + args +
                           ["--num_tsteps", "2", "--results", out], cwd=work, env=env,
                           capture_output=True, text=True, timeout=300)
        if p.returncode != 0:
            problems.append(f"partition {want}: exit {p.returncode}\n{p.stderr[-800:]}")
            continue
        with open(out) as f:
            got = yaml.safe_load(f).get("partition_bytes_per_rank")
        if got != want:
            problems.append(f"{' '.join(args)}: partition_bytes_per_rank {got}, want {want}")
    return problems


def main():
    a = script_arguments().parse_args()
    env = mpi_env()
    env["SLURM_JOB_ID"] = "4242"  # as inside a batch job
    failures = []
    with tempfile.TemporaryDirectory() as work:
        os.mkdir(os.path.join(work, "out"))
        docs = {}
        stdout = {}
        for name, extra in (("yaml", ["--results", "out/r.yaml", "--report_perf", "4"]),
                            ("json", ["--results", "out/r.json", "--report_perf", "0"]),
                            ("json_forced", ["--results", "out/r.txt", "--results_format", "json",
                                             "--report_perf", "0"]),
                            ("dynamic", ["--results", "out/d.yaml", "--report_perf", "4",
                                         "--runtime", "dynamic", "--slow_rank", "1:4"])):
            # The JSON run says which eager limit to use; the others run with miniamr's.
            run_env = dict(env, OMPI_MCA_btl_vader_eager_limit="8192") if name == "json" else env
            p = subprocess.run(["mpirun", "-q", "-np", "3", os.path.abspath(a.miniamr),
                                os.path.abspath(a.deck), "--num_tsteps", "30"] + extra,
                               cwd=work, env=run_env, capture_output=True, text=True, timeout=300)
            stdout[name] = p.stdout
            path = os.path.join(work, extra[1])
            if p.returncode != 0 or not os.path.exists(path):
                failures.append(f"{name}: exit {p.returncode}, file written: "
                                f"{os.path.exists(path)}\n{p.stderr[-800:]}")
                continue
            with open(path) as f:
                docs[name] = json.load(f) if name.startswith("json") else yaml.safe_load(f)
            failures += key_problems(docs[name], name)
            if name in ("yaml", "dynamic"):
                failures += report_problems(stdout[name], docs[name],
                                            "static" if name == "yaml" else "dynamic")
        failures += partition_problems(a.miniamr, a.deck, env, work)
        if os.path.exists(os.path.join(work, "results.yaml")):
            failures.append("results.yaml written although --results named another file")
        for name, d in docs.items():
            prov = d.get("provenance", {})
            problems = []
            if d.get("schema_version") != 1:
                problems.append(f"schema_version {d.get('schema_version')}")
            for key in ("command_line", "git_revision", "compiler", "mpi_library", "host",
                        "date_utc"):
                if not prov.get(key):
                    problems.append(f"provenance.{key} empty")
            problems += revision_problems(prov.get("git_revision", ""))
            if prov.get("batch_job") != "SLURM_JOB_ID=4242":
                problems.append(f"provenance.batch_job {prov.get('batch_job')!r}")
            if "Open MPI" in prov.get("mpi_library", ""):
                want = "8192" if name == "json" else env.get("OMPI_MCA_btl_vader_eager_limit",
                                                             "32768")
                if str(prov.get("mpi_eager_limit")) != want:
                    problems.append(f"provenance.mpi_eager_limit {prov.get('mpi_eager_limit')}, "
                                    f"want {want} (the shared-memory transport's, as given)")
            if "--results" not in prov.get("command_line", ""):
                problems.append("the command line is not the run's")
            per_rank = d.get("per_rank", {})
            for key in ("blocks", "compute_s", "comm_s", "idle_s", "peak_rss_bytes", "system_s"):
                if len(per_rank.get(key, [])) != 3:
                    problems.append(f"per_rank.{key} has not 3 entries")
            system = per_rank.get("system_s") or [-1]
            if min(system) < 0 or d.get("system_time_max") != max(system):
                problems.append(f"system_time_max {d.get('system_time_max')} is not the largest "
                                f"of per_rank.system_s {system}, each >= 0")
            if sum(per_rank.get("blocks", [])) != d.get("final_blocks"):
                problems.append("per_rank.blocks does not add up to final_blocks")
            # The blocks each refinement step migrated add up to the run's (the dynamic
            # balancer's decisions between steps move more).
            stepped = [t.get("blocks_moved", -1) for t in d.get("refine_traffic", [])]
            moved = d.get("blocks_moved_lb", 0) + d.get("blocks_moved_coarsen", 0)
            if min(stepped, default=-1) < 0 or sum(stepped) > moved or \
                    (name != "dynamic" and sum(stepped) != moved) or moved == 0:
                problems.append(f"refine_traffic's blocks_moved {stepped} against "
                                f"blocks_moved_lb + blocks_moved_coarsen {moved} (> 0)")
            if problems:
                failures.append(f"{name}: {'; '.join(problems)}")
        if "yaml" in docs and "json" in docs:
            y, j = docs["yaml"], docs["json"]
            if list(y.keys()) != list(j.keys()):
                failures.append("YAML and JSON keys differ (or their order)")
            failures += result_differences(j, y, "the YAML file")
    return verdict(failures, "--results in YAML and JSON, provenance and per-rank figures")


if __name__ == "__main__":
    sys.exit(main())

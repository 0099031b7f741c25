#!/usr/bin/env python3
"""--results PATH and --results_format: the file is written where asked (even without
--report_perf 1), in YAML or JSON with the same keys, and carries the schema version, the
provenance of the run and per-rank figures.

  check_results.py --miniamr BIN --deck DECK
"""
import json
import os
import subprocess
import sys
import tempfile

import yaml

from mpi_env import mpi_env, result_differences, script_arguments, verdict


def main():
    a = script_arguments().parse_args()
    env = mpi_env()
    env["SLURM_JOB_ID"] = "4242"  # as inside a batch job
    failures = []
    with tempfile.TemporaryDirectory() as work:
        os.mkdir(os.path.join(work, "out"))
        docs = {}
        for name, extra in (("yaml", ["--results", "out/r.yaml"]),
                            ("json", ["--results", "out/r.json"]),
                            ("json_forced", ["--results", "out/r.txt", "--results_format", "json"])):
            p = subprocess.run(["mpirun", "-q", "-np", "3", os.path.abspath(a.miniamr),
                                os.path.abspath(a.deck), "--num_tsteps", "30", "--report_perf",
                                "0"] + extra, cwd=work, env=env, capture_output=True, text=True,
                               timeout=300)
            path = os.path.join(work, extra[1])
            if p.returncode != 0 or not os.path.exists(path):
                failures.append(f"{name}: exit {p.returncode}, file written: "
                                f"{os.path.exists(path)}\n{p.stderr[-800:]}")
                continue
            with open(path) as f:
                docs[name] = yaml.safe_load(f) if name == "yaml" else json.load(f)
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
            if prov.get("batch_job") != "SLURM_JOB_ID=4242":
                problems.append(f"provenance.batch_job {prov.get('batch_job')!r}")
            if "--results" not in prov.get("command_line", ""):
                problems.append("the command line is not the run's")
            per_rank = d.get("per_rank", {})
            for key in ("blocks", "compute_s", "comm_s", "idle_s", "peak_rss_bytes"):
                if len(per_rank.get(key, [])) != 3:
                    problems.append(f"per_rank.{key} has not 3 entries")
            if sum(per_rank.get("blocks", [])) != d.get("final_blocks"):
                problems.append("per_rank.blocks does not add up to final_blocks")
            if problems:
                failures.append(f"{name}: {'; '.join(problems)}")
        if len(docs) == 3:
            y, j = docs["yaml"], docs["json"]
            if list(y.keys()) != list(j.keys()):
                failures.append("YAML and JSON keys differ (or their order)")
            failures += result_differences(j, y, "the YAML file")
    return verdict(failures, "--results in YAML and JSON, provenance and per-rank figures")


if __name__ == "__main__":
    sys.exit(main())

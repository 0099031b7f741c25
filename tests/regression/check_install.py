#!/usr/bin/env python3
"""`cmake --install` gives a working prefix: the installed miniamr runs an installed deck and
says its version, the tools start, and the man page and documents are there.

  check_install.py --build BUILD_DIR
"""
import argparse
import os
import subprocess
import sys
import tempfile

import yaml

from mpi_env import mpi_env, verdict


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    a = ap.parse_args()
    env = mpi_env()
    failures = []
    with tempfile.TemporaryDirectory() as prefix:
        p = subprocess.run(["cmake", "--install", a.build, "--prefix", prefix],
                           capture_output=True, text=True)
        if p.returncode != 0:
            print(f"FAIL cmake --install: {p.stdout[-1000:]}{p.stderr[-1000:]}")
            return 1
        miniamr = os.path.join(prefix, "bin", "miniamr")
        deck = os.path.join(prefix, "share", "miniamr", "inputs", "expanding_sphere-ci.deck")
        for path in (miniamr, deck, os.path.join(prefix, "bin", "miniamr-study"),
                     os.path.join(prefix, "bin", "miniamr-plot"),
                     os.path.join(prefix, "bin", "miniamr-plan-server"),
                     os.path.join(prefix, "share", "doc", "miniamr", "LICENSE"),
                     os.path.join(prefix, "share", "doc", "miniamr", "docs", "outputs.md"),
                     os.path.join(prefix, "share", "man", "man1", "miniamr.1")):
            if not os.path.exists(path):
                failures.append(f"not installed: {os.path.relpath(path, prefix)}")
        with tempfile.TemporaryDirectory() as work:
            run = subprocess.run(["mpirun", "-q", "-np", "2", miniamr, deck, "--num_tsteps", "3",
                                  "--report_perf", "1", "--quiet"], cwd=work, env=env,
                                 capture_output=True, text=True, timeout=300)
            if run.returncode != 0 or not os.path.exists(os.path.join(work, "results.yaml")):
                failures.append(f"the installed miniamr failed: {run.stderr[-800:]}")
            else:
                with open(os.path.join(work, "results.yaml")) as f:
                    if yaml.safe_load(f).get("num_tsteps") != 3:
                        failures.append("the installed miniamr ran something else")
                plot = subprocess.run([os.path.join(prefix, "bin", "miniamr-plot"),
                                       "results.yaml", "-o", "p.png"], cwd=work,
                                      capture_output=True, text=True)
                if plot.returncode != 0 or not os.path.exists(os.path.join(work, "p.png")):
                    failures.append(f"the installed miniamr-plot: {plot.stderr[-300:]}")
        version = subprocess.run([miniamr, "--version"], env=env, capture_output=True, text=True)
        if version.returncode != 0 or not version.stdout.startswith("miniamr "):
            failures.append(f"--version: {version.stdout[:200]}{version.stderr[-300:]}")
        study = subprocess.run([os.path.join(prefix, "bin", "miniamr-study"), "--help"],
                               capture_output=True, text=True)
        if study.returncode != 0 or "strong" not in study.stdout:
            failures.append(f"the installed miniamr-study: {study.stderr[-300:]}")
        # Python packages go where Python packages go, not into bin/.
        packages = os.path.join(prefix, "lib", "python3", "dist-packages")
        for package in ("miniamr_study", "miniamr_results"):
            if not os.path.isfile(os.path.join(packages, package, "__init__.py")):
                failures.append(f"{package} is not installed in lib/python3/dist-packages")
            if os.path.exists(os.path.join(prefix, "bin", package)):
                failures.append(f"{package} is installed into bin/")
        if not os.path.isfile(os.path.join(packages, "miniamr_results", "results_keys.txt")):
            failures.append("miniamr_results is installed without results_keys.txt")

        plan_server = subprocess.run([os.path.join(prefix, "bin", "miniamr-plan-server"),
                                      "--help"], capture_output=True, text=True)
        if plan_server.returncode != 0 or "--plan" not in plan_server.stdout:
            failures.append(f"the installed miniamr-plan-server: {plan_server.stderr[-300:]}")
        man = os.path.join(prefix, "share", "man", "man1", "miniamr.1")
        if os.path.exists(man):
            with open(man) as f:
                text = f.read()
            if "\\-\\-object" not in text or "\\-\\-version" not in text:
                failures.append("the man page lacks the options")
            for section in ("SYNOPSIS", "DESCRIPTION", "EXIT STATUS", "FILES", "EXAMPLES"):
                if f".SH {section}" not in text and f'.SH "{section}"' not in text:
                    failures.append(f"the man page has no {section} section")
            if ".SS \"compatibility options:\"" not in text and \
                    ".SS compatibility options:" not in text:
                failures.append("the man page does not group the options by topic")
    return verdict(failures,
                   "installed prefix: miniamr runs an installed deck; tools, docs and man page")


if __name__ == "__main__":
    sys.exit(main())

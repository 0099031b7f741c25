#!/usr/bin/env python3
"""The Python tools choose their interpreter one way (miniamr_results.system_python): started by
a python3 that lacks Debian's packages (here `python3 -S`, without site-packages, as a virtual
environment first on PATH would be), plot_results.py and miniamr-study run themselves again
under /usr/bin/python3; where none has them, each says which packages to install, exit 2.

  check_tool_python.py --repo DIR --results RESULTS_YAML
"""
import argparse
import os
import subprocess
import sys
import tempfile

from mpi_env import verdict


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", required=True)
    ap.add_argument("--results", required=True)
    a = ap.parse_args()
    tools = os.path.join(a.repo, "tools")
    env = {k: v for k, v in os.environ.items() if k != "MINIAMR_SYSTEM_PYTHON"}
    failures = []
    with tempfile.TemporaryDirectory() as work:
        png = os.path.join(work, "run.png")
        p = subprocess.run([sys.executable, "-S", os.path.join(tools, "plot_results.py"),
                            a.results, "-o", png], env=env, capture_output=True, text=True)
        if p.returncode != 0 or not os.path.exists(png):
            failures.append(f"plot_results.py under python3 -S: exit {p.returncode}: "
                            f"{p.stderr[-400:]}")
        p = subprocess.run([sys.executable, "-S", os.path.join(tools, "miniamr-study"), "--help"],
                           env=env, capture_output=True, text=True)
        if p.returncode != 0 or "strong" not in p.stdout:
            failures.append(f"miniamr-study under python3 -S: exit {p.returncode}: "
                            f"{p.stderr[-400:]}")
        # No interpreter with the packages (the system one already tried): one message, exit 2.
        for tool, args in (("plot_results.py", [a.results, "-o", png]),
                           ("miniamr-study", ["--help"])):
            p = subprocess.run([sys.executable, "-S", os.path.join(tools, tool)] + args,
                               env=dict(env, MINIAMR_SYSTEM_PYTHON="1"), capture_output=True,
                               text=True)
            if p.returncode != 2 or "apt-get install python3-yaml" not in p.stderr or \
                    "Traceback" in p.stderr:
                failures.append(f"{tool} without its packages: exit {p.returncode}: "
                                f"{p.stderr[-400:]}")
        p = subprocess.run([sys.executable, os.path.join(tools, "plot_results.py"), "--help"],
                           capture_output=True, text=True)
        if "Needs Debian's python3-yaml and python3-matplotlib" not in p.stdout:
            failures.append(f"plot_results.py --help is cut short: {p.stdout[-300:]}")
    return verdict(failures, "the Python tools find Debian's python3 with their packages")


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Every instruction-set level of the native kernels this machine runs (--isa) gives bitwise the
baseline's results, on 2 ranks, for the 7- and 27-point stencils and the variable-work kernels,
on both runtimes; each run reports the level it ran, and a level the CPU lacks is refused.

  check_isa.py --miniamr BIN --deck DECK
"""
import os
import subprocess
import tempfile

import yaml

from mpi_env import mpi_env, result_differences, script_arguments, verdict

LEVELS = {"x86-64": None, "x86-64-v3": "avx2", "x86-64-v4": "avx512f"}


def cpu_runs(level):
    flag = LEVELS[level]
    if flag is None:
        return True
    with open("/proc/cpuinfo") as f:
        return any(flag in line.split() for line in f if line.startswith("flags"))


def main():
    a = script_arguments().parse_args()
    env = mpi_env()
    failures = []
    levels = [level for level in LEVELS if cpu_runs(level)]
    with tempfile.TemporaryDirectory() as work:
        def run(level, extra):
            out = os.path.join(work, "results.yaml")
            if os.path.exists(out):
                os.remove(out)
            cmd = ["mpirun", "-q", "-np", "2", "--oversubscribe", os.path.abspath(a.miniamr),
                   os.path.abspath(a.deck), "--isa", level, "--quiet", "--results", out,
                   "--num_tsteps", "8", "--num_vars", "8", "--error_tol", "0"] + extra
            p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
            if p.returncode != 0 or not os.path.exists(out):
                failures.append(f"{' '.join(cmd)}: exit {p.returncode} {p.stderr[-400:]}")
                return None
            with open(out) as f:
                return yaml.safe_load(f)

        for extra in (["--stencil", "7"], ["--stencil", "27"], ["--stencil", "0"],
                      ["--stencil", "27", "--runtime", "dynamic", "--threads", "2"]):
            base = run("x86-64", extra)
            for level in levels:
                got = base if level == "x86-64" else run(level, extra)
                if got is None or base is None:
                    continue
                if got.get("kernel_isa") != level:
                    failures.append(f"--isa {level} {' '.join(extra)} reports kernel_isa "
                                    f"{got.get('kernel_isa')}")
                failures += result_differences(got, base, f"--isa {level} {' '.join(extra)}")
        missing = [level for level in LEVELS if not cpu_runs(level)]
        for level in missing:
            p = subprocess.run([a.miniamr, a.deck, "--isa", level], env=env, capture_output=True,
                               text=True, timeout=60)
            if p.returncode != 2 or "not supported" not in p.stderr:
                failures.append(f"--isa {level} on a CPU without it: exit {p.returncode} "
                                f"{p.stderr[-300:]}")
    return verdict(failures, f"levels {', '.join(levels)} give the baseline's results bitwise")


if __name__ == "__main__":
    raise SystemExit(main())

#!/usr/bin/env python3
"""A stage's memory traffic against the machine's copy bandwidth, measured in one invocation.

Alternates, --reps times: the STREAM-like copy (bench/stream_copy, --copy-threads threads) and
miniamr on a deck (--np ranks x 1 thread), whose results give effective_bandwidth_gbs (16 bytes
per cell-variable update over the time in stages). Prints each run, then the medians, spreads
and the ratio stage / copy.

  bench/stage_bandwidth.py --build build --deck inputs/two_spheres.deck --np 2 \\
      --reps 3 -- --num_tsteps 20 --num_vars 40
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "tools"))  # miniamr_results
import miniamr_results  # noqa: E402
from miniamr_results import system_python  # noqa: E402


def spread(xs):
    return f"{min(xs):.2f}..{max(xs):.2f}"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default="build", help="the build folder (miniamr, bench/stream_copy)")
    p.add_argument("--deck", required=True)
    p.add_argument("--np", type=int, default=2, help="miniamr ranks (1 thread each)")
    p.add_argument("--copy-threads", type=int, default=2)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("miniamr_args", nargs="*", help="more miniamr options, after --")
    a = p.parse_args()
    system_python.ensure("stage_bandwidth.py", ["yaml"])
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    copy, stage = [], []
    with tempfile.TemporaryDirectory() as work:
        results = os.path.join(work, "results.yaml")
        for rep in range(a.reps):
            out = subprocess.run([os.path.join(a.build, "bench", "stream_copy")], check=True,
                                 capture_output=True, text=True,
                                 env=dict(env, OMP_NUM_THREADS=str(a.copy_threads))).stdout
            copy.append(float(out.split()[1]))
            cmd = ["mpirun", "-np", str(a.np), "--bind-to", "core",
                   os.path.join(a.build, "miniamr"), a.deck, "--threads", "1", "--quiet",
                   "--results", results] + a.miniamr_args
            run = subprocess.run(cmd, capture_output=True, text=True, env=env)
            if run.returncode != 0:
                # The run's own words, not only the status: a failure on a busy host may not
                # come back.
                tail = (run.stdout + run.stderr).strip().splitlines()[-40:]
                print(f"stage_bandwidth: repetition {rep + 1}: {' '.join(cmd)} exited with "
                      f"status {run.returncode}:\n" + "\n".join(tail), file=sys.stderr)
                return 1
            r = miniamr_results.load(results)
            stage.append(float(r["effective_bandwidth_gbs"]))
            print(f"rep {rep + 1}: copy {copy[-1]:.2f} GB/s ({a.copy_threads} threads), stage "
                  f"{stage[-1]:.2f} GB/s ({a.np} ranks, kernels {r.get('kernel_isa')})", flush=True)
    c, s = statistics.median(copy), statistics.median(stage)
    print(f"copy  median {c:.2f} GB/s ({spread(copy)})")
    print(f"stage median {s:.2f} GB/s ({spread(stage)})")
    print(f"stage / copy {s / c:.3f} (per rep: "
          f"{', '.join(f'{x / y:.3f}' for x, y in zip(stage, copy))})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

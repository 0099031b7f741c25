#!/usr/bin/env python3
"""Runs miniamr on a deck and checks what it printed and wrote.

  check_run.py --miniamr BIN --deck DECK [--np N] [--table FILE] [--expect-blocks L0,L1,..]
               [--compare-yaml OTHER.yaml] [--save-yaml PATH] [--expect-backend NAME]
               [--expect-moves]
               [-- extra miniamr options]

Checks, each optional: the block lines equal a reference table; results.yaml is valid YAML
holding final_checksums; every checksum was conserved (the run exits 0 only then); the final
per-level counts; final_checksums bitwise equal to another run's results.yaml; the stencil
back end results.yaml names (and, for kokkos, that Kokkos kernels ran).
"""
import argparse
import os
import subprocess
import sys
import tempfile

import yaml

from mpi_env import mpi_env, result_differences


def block_lines(text):
    return [l for l in text.splitlines()
            if l.startswith("Number of blocks at level") or l.startswith("Total number of blocks")]


def migrated(work):
    """Whether the run in `work` wrote a results.yaml with blocks migrated."""
    try:
        with open(os.path.join(work, "results.yaml")) as f:
            return (yaml.safe_load(f) or {}).get("blocks_migrated", 0) > 0
    except OSError:
        return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--miniamr", required=True)
    ap.add_argument("--deck")
    ap.add_argument("--np", type=int, default=1)
    ap.add_argument("--table")
    ap.add_argument("--expect-blocks")
    ap.add_argument("--compare-yaml")
    ap.add_argument("--save-yaml")
    ap.add_argument("--expect-backend", help="results.yaml's stencil_backend must be this "
                    "(native, kokkos, kokkos+native); kokkos needs kernel_calls.kokkos > 0")
    ap.add_argument("--expect-moves", action="store_true",
                    help="the balancer must have migrated blocks (blocks_migrated > 0)")
    ap.add_argument("extra", nargs=argparse.REMAINDER)
    a = ap.parse_args()

    env = mpi_env()
    # No binding: with OMP_NUM_THREADS > 1 a rank's threads need more than one core.
    cmd = ["mpirun", "-np", str(a.np), "--oversubscribe", "--bind-to", "none",
           os.path.abspath(a.miniamr)]
    if a.deck:
        cmd.append(os.path.abspath(a.deck))
    cmd += [x for x in a.extra if x != "--"]
    if a.table or a.expect_blocks:
        cmd.append("--verbose")  # the reference's table after every refinement step
    with tempfile.TemporaryDirectory() as work:
        # Whether the balancer moves blocks depends on measured times, and a loaded machine can
        # hide the slow rank for a whole short run: a run that moved nothing is tried again,
        # twice; one that never moves anything fails.
        for attempt in range(3 if a.expect_moves else 1):
            run = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True,
                                 timeout=600)
            if not a.expect_moves or run.returncode != 0 or migrated(work):
                break
            print(f"attempt {attempt + 1}: no block migrated, running again")
        failures = []
        if run.returncode != 0:
            failures.append(f"exit status {run.returncode}\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}")
        got = block_lines(run.stdout)
        if a.table:
            with open(a.table) as f:
                want = block_lines(f.read())
            if got != want:
                first = next((i for i, (g, w) in enumerate(zip(got, want)) if g != w),
                             min(len(got), len(want)))
                failures.append(f"block lines differ from {a.table} at line {first + 1}: "
                                f"got {got[first:first + 6]} want {want[first:first + 6]} "
                                f"({len(got)} vs {len(want)} lines)")
        path = os.path.join(work, "results.yaml")
        results = None
        if os.path.exists(path):
            with open(path) as f:
                results = yaml.safe_load(f)
            if not isinstance(results.get("final_checksums"), list):
                failures.append("results.yaml has no final_checksums list")
            if a.save_yaml:
                with open(path) as src, open(a.save_yaml, "w") as dst:
                    dst.write(src.read())
        elif a.save_yaml or a.compare_yaml or a.expect_blocks or a.expect_backend:
            failures.append("no results.yaml written")
        if results and a.table:
            # results.yaml's mesh_history holds the same numbers as the printed tables.
            rows = [l.rsplit(" ", 1)[1] for l in want if l.startswith("Number")]
            history = [n for m in results.get("mesh_history", []) for n in m["blocks_per_level"]]
            if [int(x) for x in rows] != history:
                failures.append("mesh_history in results.yaml differs from the table")
        if results and results.get("mesh_history"):
            # blocks/ts: timestep t's stages run on the mesh of the last refinement before t.
            history = results["mesh_history"]
            steps = results["num_tsteps"]
            total = 0
            for t in range(1, steps + 1):
                mesh = [m for m in history if m["timestep"] < t][-1]
                total += sum(mesh["blocks_per_level"])
            if abs(total / steps - results["total_blocks_ts_ave"]) > 1e-9 * max(1.0, total):
                failures.append(f"total_blocks_ts_ave {results['total_blocks_ts_ave']} != "
                                f"{total / steps} from mesh_history")
        if results and a.expect_blocks:
            want = [int(x) for x in a.expect_blocks.split(",")]
            if results["final_blocks_per_level"] != want:
                failures.append(f"final blocks per level {results['final_blocks_per_level']} != {want}")
        if results and a.expect_backend:
            backend = results.get("stencil_backend")
            calls = results.get("kernel_calls")
            if backend != a.expect_backend:
                failures.append(f"stencil_backend {backend!r}, want {a.expect_backend!r}")
            if not isinstance(calls, dict):
                failures.append(f"results.yaml has no kernel_calls map (got {calls!r})")
            elif "kokkos" in a.expect_backend.split("+") and not calls.get("kokkos", 0) > 0:
                failures.append(f"stencil_backend {backend!r} but kernel_calls {calls}: "
                                f"no Kokkos kernel ran")
            elif a.expect_backend == "native" and calls.get("kokkos", 0) != 0:
                failures.append(f"stencil_backend {backend!r} but kernel_calls {calls}: "
                                f"Kokkos kernels ran")
        if results:
            # The runtime and thread count asked for are the ones that ran.
            for opt, key, default in (("--runtime", "runtime", "static"), ("--threads", "threads", None)):
                want = default
                if opt in a.extra[:-1]:
                    want = a.extra[len(a.extra) - 1 - a.extra[::-1].index(opt) + 1]
                if want is not None and str(results.get(key)) != want:
                    failures.append(f"results.yaml says {key}: {results.get(key)}, want {want}")
        if results is not None and a.expect_moves and not results.get("blocks_migrated", 0) > 0:
            failures.append(f"no block migrated (blocks_migrated {results.get('blocks_migrated')}, "
                            f"decisions taken {results.get('lb_decisions_taken')})")
        if results and a.compare_yaml:
            with open(a.compare_yaml) as f:
                other = yaml.safe_load(f)
            failures += result_differences(results, other, a.compare_yaml)
    if failures:
        print(" ".join(cmd))
        print("\n".join(failures))
        return 1
    print(f"ok: {' '.join(cmd)} ({len(got)} block lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

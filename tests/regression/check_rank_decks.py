#!/usr/bin/env python3
"""Every rank runs rank 0's deck: a deck that is missing or different on another rank (node-local
files) changes nothing, and one missing on rank 0 is one clear error on every rank, never a hang.

  check_rank_decks.py --miniamr BIN --deck DECK

Each rank is started through a wrapper that picks its deck path from OMPI_COMM_WORLD_RANK.
"""
import os
import stat
import subprocess
import sys
import tempfile

import yaml

from mpi_env import mpi_env, script_arguments, verdict


def main():
    a = script_arguments().parse_args()
    env = mpi_env()
    failures = []
    with tempfile.TemporaryDirectory() as work:
        other = os.path.join(work, "other.deck")
        with open(a.deck) as f, open(other, "w") as g:
            g.write(f.read() + "\nnum_tsteps = 3\n")  # a different run, were it read
        wrapper = os.path.join(work, "by_rank.sh")

        def run(deck0, deck_rest, name):
            with open(wrapper, "w") as w:
                w.write("#!/bin/sh\n"
                        f'if [ "$OMPI_COMM_WORLD_RANK" = 0 ]; then d="{deck0}"; else d="{deck_rest}"; fi\n'
                        f'exec "{os.path.abspath(a.miniamr)}" "$d" --num_tsteps 4 --report_perf 1\n')
            os.chmod(wrapper, stat.S_IRWXU)
            out = os.path.join(work, name)
            os.mkdir(out)
            p = subprocess.run(["mpirun", "-q", "-np", "3", "--oversubscribe", wrapper], cwd=out,
                               env=env, capture_output=True, text=True, timeout=120)
            results = None
            if os.path.exists(os.path.join(out, "results.yaml")):
                with open(os.path.join(out, "results.yaml")) as f:
                    results = yaml.safe_load(f)
            return p, results

        same, want = run(os.path.abspath(a.deck), os.path.abspath(a.deck), "same")
        if same.returncode != 0 or want is None:
            failures.append(f"the plain run failed: {same.returncode} {same.stderr[-500:]}")
        for rest, name in [("/nonexistent/deck.deck", "missing"), (other, "different")]:
            p, got = run(os.path.abspath(a.deck), rest, name)
            if p.returncode != 0 or got is None or want is None:
                failures.append(f"{name} deck on ranks 1-2: exit {p.returncode} {p.stderr[-500:]}")
            elif got["field_digest"] != want["field_digest"] or got["num_tsteps"] != 4:
                failures.append(f"{name} deck on ranks 1-2 changed the run")
        p, got = run("/nonexistent/deck.deck", os.path.abspath(a.deck), "missing0")
        lines = [l for l in p.stderr.splitlines() if "cannot read deck file" in l]
        if p.returncode != 2 or len(lines) != 1 or got is not None:
            failures.append(f"missing deck on rank 0: exit {p.returncode}, {len(lines)} messages, "
                            f"stderr {p.stderr[-500:]!r}")
    return verdict(failures, "ranks 1-2 run rank 0's deck; rank 0's missing deck is one error")


if __name__ == "__main__":
    sys.exit(main())

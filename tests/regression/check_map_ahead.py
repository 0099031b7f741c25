#!/usr/bin/env python3
"""--map_ahead: block storage for the next refinement step is mapped while a rank waits for
messages, and the refinement then takes it instead of mapping its own.

Two ranks of a growing mesh, rank 1 four times slower so that rank 0 waits at every exchange.
The deck's sphere enters the domain at timestep 20 and the mesh grows to 2193 blocks by
timestep 30, so the refinement steps at timesteps 25 and 30 can take what was mapped after the
step before (fewer timesteps, or a deck whose mesh stops growing, would leave nothing to check):

- static runtime, --map_ahead 1: blocks are mapped ahead, and refinement maps fewer blocks
  itself than with --map_ahead 0 (the default), which maps none ahead;
- dynamic runtime without its balancer (which would take the waiting away): blocks are mapped
  ahead too;
- every run holds bitwise the same results.

  check_map_ahead.py --miniamr BIN --deck DECK
"""
import os
import sys
import tempfile

from mpi_env import result_differences, run_results, script_arguments, verdict


def main():
    a = script_arguments().parse_args()
    failures = []
    with tempfile.TemporaryDirectory() as work:
        def run(*opts):
            return run_results(["mpirun", "-np", "2", "--oversubscribe", "--bind-to", "none",
                                os.path.abspath(a.miniamr), os.path.abspath(a.deck),
                                "--report_perf", "1", "--num_tsteps", "30", "--slow_rank", "1:4",
                                *opts], work)

        def mapping(*opts):
            # How much a rank maps depends on how long it waits for the slow one, which the
            # machine decides: about one run in fifteen waits too little to map a block, so a
            # run that mapped none gets one more try (with mapping off, both map none).
            result = run(*opts)
            return result if result["blocks_mapped_ahead"] > 0 else run(*opts)

        off = run("--map_ahead", "0")
        on = mapping("--map_ahead", "1")
        dynamic = mapping("--runtime", "dynamic", "--lb", "none", "--map_ahead", "1")
        if off["blocks_mapped_ahead"] != 0:
            failures.append(f"--map_ahead 0 mapped {off['blocks_mapped_ahead']} blocks ahead")
        if on["blocks_mapped_ahead"] <= 0:
            failures.append("--map_ahead 1 (static) mapped no block ahead")
        if on["blocks_mapped_on_take"] >= off["blocks_mapped_on_take"]:
            failures.append(f"refinement mapped {on['blocks_mapped_on_take']} blocks itself with "
                            f"--map_ahead 1, {off['blocks_mapped_on_take']} with 0")
        if dynamic["blocks_mapped_ahead"] <= 0:
            failures.append("the dynamic runtime mapped no block ahead")
        failures += result_differences(on, off, "--map_ahead 0")
        failures += result_differences(dynamic, off, "the static runtime")
    return verdict(failures, "--map_ahead maps storage while waiting, and refinement uses it")


if __name__ == "__main__":
    sys.exit(main())

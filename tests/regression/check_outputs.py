#!/usr/bin/env python3
"""Output files: plot.NNN at timestep 0 and every --plot_freq steps (reference format, block
counts agreeing with the progress table) and results.txt (the report without the Summary line).

  check_outputs.py --miniamr BIN --deck DECK
"""
import os
import re
import subprocess
import sys
import tempfile

from mpi_env import mpi_env, script_arguments


def main():
    a = script_arguments().parse_args()
    env = mpi_env()
    problems = []
    with tempfile.TemporaryDirectory() as work:
        run = subprocess.run(["mpirun", "-np", "2", "--oversubscribe", os.path.abspath(a.miniamr),
                              os.path.abspath(a.deck), "--report_perf", "14", "--plot_freq", "25",
                              "--verbose"],
                             cwd=work, env=env, capture_output=True, text=True, timeout=300)
        if run.returncode != 0:
            print(run.stdout[-2000:], run.stderr[-2000:])
            return 1
        totals = {int(m.group(1)): int(m.group(2)) for m in
                  re.finditer(r"Total number of blocks at timestep (\d+) is (\d+)", run.stdout)}
        names = sorted(f for f in os.listdir(work) if f.startswith("plot."))
        if names != ["plot.000", "plot.025", "plot.050", "plot.075", "plot.100"]:
            problems.append(f"plot files {names}")
        for name in names:
            ts = int(name.split(".")[1])
            with open(os.path.join(work, name)) as f:
                lines = f.read().split("\n")
            head = lines[0].split()
            if int(head[0]) != totals[ts]:
                problems.append(f"{name}: {head[0]} blocks, the table says {totals[ts]}")
            # Then per rank: a count and that many "level cx cy cz" lines.
            pos, blocks = 1, 0
            for _ in range(2):
                n = int(lines[pos])
                for line in lines[pos + 1:pos + 1 + n]:
                    if len(line.split()) != 4:
                        problems.append(f"{name}: bad block line {line!r}")
                blocks += n
                pos += 1 + n
            if blocks != totals[ts]:
                problems.append(f"{name}: per-rank counts add to {blocks}")
        txt = os.path.join(work, "results.txt")
        if not os.path.exists(txt):
            problems.append("no results.txt")
        else:
            with open(txt) as f:
                text = f.read()
            if "End report" not in text or "Summary:" in text:
                problems.append("results.txt is not the report without the Summary line")
        if "Summary:" not in run.stdout:
            problems.append("no Summary line on stdout")
    print("\n".join(problems) if problems else "ok: plot files and results.txt")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

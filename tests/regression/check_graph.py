#!/usr/bin/env python3
"""--dump_graph: a 2-rank run (static and dynamic runtime) writes the first timestep's task graph
as Graphviz DOT: one digraph stage_graph, a cluster per rank, edges between declared nodes, and,
where Graphviz is installed, 'dot -Tsvg' accepts it.

  check_graph.py --miniamr BIN --deck DECK
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

from mpi_env import mpi_env, script_arguments

NODE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*\[.*\];\s*$")
EDGE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*->\s*([A-Za-z_][A-Za-z0-9_]*)\s*(\[.*\])?;\s*$")


def check_dot(text, runtime):
    problems = []
    if not text.startswith("digraph stage_graph {"):
        problems.append(f"{runtime}: does not start with 'digraph stage_graph {{': {text[:40]!r}")
    if not text.rstrip().endswith("}"):
        problems.append(f"{runtime}: does not end with '}}': {text.rstrip()[-40:]!r}")
    if text.count("{") != text.count("}"):
        problems.append(f"{runtime}: {text.count('{')} '{{' but {text.count('}')} '}}'")
    for rank in (0, 1):
        if f"cluster_rank{rank}" not in text:
            problems.append(f"{runtime}: no cluster_rank{rank}")
    nodes, edges = set(), []
    for line in text.splitlines():
        m = EDGE.match(line)
        if m:
            edges.append((m.group(1), m.group(2)))
            continue
        m = NODE.match(line)
        if m and m.group(1) not in ("node", "edge", "graph"):
            nodes.add(m.group(1))
    if not edges or "->" not in text:
        problems.append(f"{runtime}: no '->' edges")
    undeclared = sorted({n for e in edges for n in e} - nodes)
    if undeclared:
        problems.append(f"{runtime}: edges name undeclared nodes {undeclared[:5]}")
    return problems, len(nodes), len(edges)


def main():
    a = script_arguments().parse_args()
    env = mpi_env()
    dot = shutil.which("dot")
    problems = []
    with tempfile.TemporaryDirectory() as work:
        for runtime in ("static", "dynamic"):
            wdir = os.path.join(work, runtime)
            os.mkdir(wdir)
            cmd = ["mpirun", "-np", "2", "--oversubscribe", "--bind-to", "none",
                   os.path.abspath(a.miniamr), os.path.abspath(a.deck), "--runtime", runtime,
                   "--dump_graph", "g.dot", "--num_tsteps", "2", "--report_perf", "0"]
            run = subprocess.run(cmd, cwd=wdir, env=env, capture_output=True, text=True,
                                 timeout=300)
            if run.returncode != 0:
                problems.append(f"{' '.join(cmd)}: exit status {run.returncode}\n"
                                f"{run.stdout[-2000:]}\n{run.stderr[-2000:]}")
                continue
            path = os.path.join(wdir, "g.dot")
            if not os.path.exists(path):
                problems.append(f"{runtime}: no g.dot written")
                continue
            with open(path) as f:
                text = f.read()
            p, nodes, edges = check_dot(text, runtime)
            problems += p
            print(f"{runtime}: {nodes} nodes, {edges} edges")
            if dot:
                r = subprocess.run([dot, "-Tsvg", path, "-o", os.path.join(wdir, "g.svg")],
                                   capture_output=True, text=True, timeout=120)
                if r.returncode != 0:
                    problems.append(f"{runtime}: dot -Tsvg failed ({r.returncode}): {r.stderr[-1000:]}")
        if not dot:
            print("(graphviz 'dot' not installed: dot -Tsvg not tried)")
    print("\n".join(problems) if problems else "ok: task graphs")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

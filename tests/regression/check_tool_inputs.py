#!/usr/bin/env python3
"""The Python tools end every bad input with one message and exit status 2, never a traceback,
and write nothing: a file where a folder is meant (--out FILE, --emit-slurm FILE), binary and
device files as decks or results, bounds on counts, an image or YAML name that would overwrite
a file of another kind, --ranks -1,2, and --reference without its tarball (saying where to get
Mantevo miniAMR 1.7 and how to pass it). Nothing here runs miniamr.

  check_tool_inputs.py --miniamr BIN --deck DECK --tools DIR
"""
import os
import shlex
import signal
import subprocess
import sys
import tempfile

from mpi_env import mpi_env, script_arguments, verdict

PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def bounded(cmd, cwd):
    """Runs `cmd`; None when it has not ended within 60 s (a tool that took bad input for a study
    to run), after ending it and everything it started."""
    p = subprocess.Popen(cmd, cwd=cwd, env=mpi_env(), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        return None
    return subprocess.CompletedProcess(cmd, p.returncode, out, err)


def main():
    ap = script_arguments()
    ap.add_argument("--tools", required=True)
    a = ap.parse_args()
    tools, deck, miniamr = (os.path.abspath(p) for p in (a.tools, a.deck, a.miniamr))
    failures = []
    with tempfile.TemporaryDirectory() as work:
        def path(name):
            return os.path.join(work, name)

        with open(path("a_file"), "w") as f:
            f.write("not a folder\n")
        with open(path("binary"), "wb") as f:
            f.write(bytes(range(256)) * 4)
        with open(path("other.yaml"), "w") as f:
            f.write("mesh_history: 3\n")
        with open(path("wrong.csv"), "w") as f:
            f.write("test,bytes\npingpong,x\n")
        os.mkdir(path("full"))
        with open(path("full/notes.txt"), "w") as f:
            f.write("someone's notes\n")
        study = [PYTHON, os.path.join(tools, "miniamr-study")]
        strong = study + ["strong", deck, "--ranks", "1", "--miniamr", miniamr]
        # (command, text the one line on stderr must hold)
        cases = [
            (strong + ["--out", path("a_file")], "--out " + path("a_file") +
             ": exists and is not a folder"),
            (strong + ["--emit-slurm", path("a_file")], "exists and is not a folder"),
            (strong + ["--out", path("full")], "a folder with other files in it and no study"),
            (study + ["strong", path("binary"), "--ranks", "1", "--out", path("o")],
             "is not text: byte 128 is not UTF-8"),
            (study + ["strong", "/dev/zero", "--ranks", "1", "--out", path("o")],
             "it is not a regular file"),
            (study + ["strong", work, "--ranks", "1", "--out", path("o")], "it is a folder"),
            (study + ["strong", deck, "--ranks", "-1,2", "--out", path("o")],
             "--ranks '-1,2': '-1' is not a positive integer"),
            (strong + ["--reps", "99999999999999999999", "--out", path("o")], "needs 1 to 1000"),
            (strong + ["--timeout", "nan", "--out", path("o")], "--timeout nan: needs a positive"),
            (study + ["strong", deck, "--ranks", "99999999", "--dry-run"], "is more than 1000000"),
            (study + ["compare", deck, "--ranks", "1", "--reference", "--reference-tarball",
                      path("no.tar.gz"), "--out", path("o")],
             "https://github.com/Mantevo/miniAMR"),
            (study + ["compare", deck, "--ranks", "1", "--reference", "--reference-tarball",
                      path("no.tar.gz"), "--out", path("o")], "--reference-tarball FILE"),
            (study + ["collect", path("a_file")], "is not a study written by --emit-slurm"),
            ([PYTHON, os.path.join(tools, "plot_results.py"), path("binary"), "-o",
              path("p.png")], "is not text"),
            ([PYTHON, os.path.join(tools, "plot_results.py"), "/dev/zero", "-o", path("p.png")],
             "not a regular file"),
            ([PYTHON, os.path.join(tools, "plot_results.py"), path("other.yaml"), "-o",
              path("p.png")], "not a miniamr results file"),
            ([PYTHON, os.path.join(tools, "plot_results.py"), path("other.yaml"), "-o",
              path("a_file")], "the name must end in .png or .svg or .pdf"),
            ([PYTHON, os.path.join(tools, "netbench_plot.py"), path("binary")], "is not text"),
            ([PYTHON, os.path.join(tools, "netbench_plot.py"), path("wrong.csv")],
             "is not a miniamr-netbench results.csv"),
            ([PYTHON, os.path.join(tools, "netbench_plot.py"), path("wrong.csv"), "--out",
              path("a_file")], "exists and is not a folder"),
            ([PYTHON, os.path.join(tools, "calibrate_compute.py"), "--miniamr", miniamr, "--out",
              path("a_file")], "the name must end in .yaml or .yml"),
            ([PYTHON, os.path.join(tools, "calibrate_compute.py"), "--miniamr", miniamr, "--reps",
              "0", "--out", path("c.yaml")], "--reps 0: expects 1 to 100"),
            ([PYTHON, os.path.join(tools, "validate_simulation.py"), "--miniamr", path("none")],
             "not an executable miniamr"),
            ([PYTHON, os.path.join(tools, "validate_simulation.py"), "--ranks", "", "--out",
              path("a_file")], "the name must end in .md"),
        ]
        before = sorted(os.listdir(work))
        for cmd, text in cases:
            p = bounded(cmd, work)
            if p is None:
                failures.append(f"{shlex.join(cmd[1:])[:200]}: still running after 60 s")
                continue
            lines = p.stderr.strip().splitlines()
            if p.returncode != 2 or len(lines) != 1 or text not in lines[0] or \
                    "Traceback" in p.stderr:
                failures.append(f"{shlex.join(cmd[1:])[:200]}: exit {p.returncode} (want 2), "
                                f"stderr {p.stderr[-600:]!r} should be one line with {text!r}")
        with open(path("a_file")) as f:
            if f.read() != "not a folder\n":
                failures.append("a tool wrote into a_file")
        after = sorted(os.listdir(work))
        if after != before:
            failures.append(f"bad input wrote {sorted(set(after) - set(before))}")
    return verdict(failures, f"{len(cases)} bad inputs to the Python tools: one message, exit 2")


if __name__ == "__main__":
    sys.exit(main())

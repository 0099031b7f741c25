"""What the regression scripts share: their arguments, the environment mpirun needs here, the
comparison of two runs' results, the check of a run that must fail, and the verdict."""
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import miniamr_results  # noqa: E402  (the one reader of results.yaml)


def mpi_env():
    """This process's environment, plus MPI as root (containers, CI) and oversubscribed runs
    that yield instead of busy polling; values already set win."""
    env = dict(os.environ)
    for key, value in (("OMPI_ALLOW_RUN_AS_ROOT", "1"), ("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"),
                       ("OMPI_MCA_mpi_yield_when_idle", "1"),
                       ("OMPI_MCA_rmaps_base_oversubscribe", "1")):
        env.setdefault(key, value)
    return env


def run_bounded(cmd, cwd, timeout, env=None):
    """Runs `cmd` (an mpirun line) in `cwd` with its output as text; None when it has not ended
    within `timeout` seconds. A run that hangs gets SIGTERM first (mpirun then ends its ranks),
    then SIGKILL, so that no rank is left behind."""
    p = subprocess.Popen([str(c) for c in cmd], cwd=cwd, env=env or mpi_env(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         errors="replace")
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.terminate()
        try:
            p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
        return None
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)


def run_results(cmd, work):
    """Runs `cmd` (an mpirun line whose miniamr writes results.yaml) in folder `work` and
    returns its results as a dict; a failed run ends the script with its stderr."""
    p = subprocess.run([str(c) for c in cmd], cwd=work, env=mpi_env(), capture_output=True,
                       text=True, timeout=300)
    if p.returncode != 0:
        sys.exit(f"{' '.join(str(c) for c in cmd)}: exit {p.returncode}\n{p.stderr[-1500:]}")
    return miniamr_results.load(os.path.join(work, "results.yaml")).doc


def result_differences(got, want, what):
    """Why two results.yaml (as dicts) do not hold bitwise the same results; empty when they do."""
    problems = []
    if [float.hex(x) for x in got["final_checksums"]] != \
       [float.hex(x) for x in want["final_checksums"]]:
        problems.append(f"final_checksums differ from {what}")
    if got.get("field_digest") != want.get("field_digest"):
        problems.append(f"field_digest {got.get('field_digest')} differs from "
                        f"{want.get('field_digest')} in {what}")
    return problems


def failure_problems(run, status, text):
    """Why a run that must fail did not fail as it should: exit `status`, `text` once on stderr,
    no abort or signal banner, no raw control bytes, no flood. Empty when it did."""
    problems = []
    if run.returncode != status:
        problems.append(f"exit status {run.returncode}, want {status}")
    if run.stderr.count(text) != 1:
        problems.append(f"stderr should hold {text!r} exactly once")
    if any(b in run.stderr for b in ("MPI_ABORT", "Segmentation", "signal", "core dumped")):
        problems.append("abort or signal banner")
    if "\x1b" in run.stderr or len(run.stderr) > 2000:
        problems.append(f"raw control bytes or {len(run.stderr)} bytes on stderr")
    return problems


def script_arguments(deck=True):
    """The arguments every regression script takes: the miniamr executable and, unless `deck` is
    false, a deck. A script adds its own to the parser returned."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--miniamr", required=True)
    if deck:
        ap.add_argument("--deck", required=True)
    return ap


def verdict(failures, ok):
    """Prints each failure, or `ok` when there is none; returns the script's exit status."""
    for f in failures:
        print(f"FAIL {f}")
    if not failures:
        print(f"ok   {ok}")
    return 1 if failures else 0

"""Launchers and the local study loop: each run in its own temporary folder, timed by the wall
clock around the launcher, its files kept under <out>/runs/<point>/<variant>/rep<k>/."""
import datetime
import os
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time

from . import REPO, results

LAUNCHERS = ("mpirun", "srun", "simulate")
# The simulation launcher: miniamr's simulation build on a SimGrid platform (SMPI's smpirun).
SIMULATE = os.path.join(REPO, "tools", "miniamr-simulate")


def usable_cores():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def launch_prefix(launcher, ranks, threads, oversubscribe=False, simulation=None):
    if launcher == "simulate":
        return [SIMULATE, "--np", str(ranks), "--platform", simulation["platform"],
                "--calibration", simulation["calibration"]]
    if launcher == "srun":
        return ["srun", "-n", str(ranks), "-c", str(threads), "--cpu-bind=cores"]
    cmd = ["mpirun", "-np", str(ranks)]
    if oversubscribe:
        cmd.append("--oversubscribe")
    if oversubscribe:
        cmd += ["--bind-to", "none"]  # binding would stack ranks on the same cores
    elif threads > 1:
        cmd += ["--map-by", f"slot:PE={threads}", "--bind-to", "core"]  # a core per thread
    else:
        cmd += ["--bind-to", "core"]
    return cmd


def run_env(launcher, threads, oversubscribed):
    """Additions to the environment of one run."""
    env = {"OMP_NUM_THREADS": str(threads)}
    if launcher == "mpirun":
        if os.geteuid() == 0:
            # Open MPI refuses root without these (containers, CI machines).
            env["OMPI_ALLOW_RUN_AS_ROOT"] = os.environ.get("OMPI_ALLOW_RUN_AS_ROOT", "1")
            env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = \
                os.environ.get("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        # miniamr sends shared-memory messages up to 32 KB eagerly unless told otherwise; the
        # reference runs with the same transport, so that a ratio compares the programs.
        env["OMPI_MCA_btl_vader_eager_limit"] = os.environ.get("OMPI_MCA_btl_vader_eager_limit",
                                                               "32768")
        if oversubscribed:
            # Ranks sharing a core must yield instead of busy polling.
            env["OMPI_MCA_mpi_yield_when_idle"] = "1"
    return env


def command(run, launcher, oversubscribe, simulation=None):
    prefix = launch_prefix(launcher, run.ranks, run.threads, oversubscribe, simulation)
    if launcher == "simulate":
        return prefix + ["--miniamr", run.argv[0], "--"] + run.argv[1:]
    return prefix + run.argv


def dry_run_line(run, launcher, oversubscribe, simulation=None):
    env = run_env(launcher, run.threads, run.oversubscribed)
    words = [f"{k}={v}" for k, v in env.items()] + command(run, launcher, oversubscribe,
                                                           simulation)
    return f"(cd \"$(mktemp -d)\" && {shlex.join(words)})  # {run.rel_dir}"


def execute(run, out, launcher, oversubscribe, timeout=None, simulation=None):
    """Runs one measurement and returns its runs.csv row. A simulated run's wall_s is the
    simulated time of its slowest rank; the seconds it took here are host_wall_s."""
    run_dir = os.path.join(out, run.rel_dir)
    if os.path.exists(run_dir):
        shutil.rmtree(run_dir)  # a failed or interrupted earlier try
    os.makedirs(run_dir)
    cmd = command(run, launcher, oversubscribe, simulation)
    env = dict(os.environ)
    env.update(run_env(launcher, run.threads, run.oversubscribed))
    with open(os.path.join(run_dir, "command.txt"), "w") as f:
        f.write(shlex.join(cmd) + "\n")
    started = datetime.datetime.now().isoformat(timespec="seconds")
    with tempfile.TemporaryDirectory(prefix="miniamr-study-") as work, \
            open(os.path.join(run_dir, "stdout.txt"), "w") as out_f, \
            open(os.path.join(run_dir, "stderr.txt"), "w") as err_f:
        t0 = time.perf_counter()
        try:
            status = subprocess.run(cmd, cwd=work, env=env, stdout=out_f, stderr=err_f,
                                    timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            status = "timeout"
        wall = time.perf_counter() - t0
        # Whatever the run wrote into its folder: results.yaml, traces, logs.
        for name in os.listdir(work):
            src = os.path.join(work, name)
            if os.path.isdir(src):
                shutil.copytree(src, os.path.join(run_dir, name))
            else:
                shutil.copy2(src, os.path.join(run_dir, name))
    return results.row_for(run.describe(), run_dir, os.path.relpath(run_dir, out), wall, status,
                           socket.gethostname(), started, shlex.join(cmd),
                           simulation["name"] if simulation else "")


def run_study(plan, out, launcher, oversubscribe, resume_rows=(), timeout=None, log=print,
              simulation=None):
    """Measures every run of the plan not already finished; returns the runs.csv rows of this
    invocation. Rows are appended to runs.csv as they come."""
    done = {results.row_key(r) for r in resume_rows if results.finished(r)}
    todo = [r for r in plan.runs if tuple(map(str, r.key)) not in done]
    if done:
        log(f"resuming: {len(plan.runs) - len(todo)} of {len(plan.runs)} runs already finished, "
            f"{len(todo)} to run")
    rows = []
    with results.CsvLog(os.path.join(out, "runs.csv")) as csv_log:
        for i, run in enumerate(todo, 1):
            row = execute(run, out, launcher, oversubscribe, timeout, simulation)
            csv_log.write(row)
            rows.append(row)
            extra = f" ({row['error']})" if row["error"] else ""
            took = (f" (simulated, {float(row['host_wall_s']):.1f} s here)"
                    if row["simulated"] else "")
            log(f"[{i}/{len(todo)}] {run.point} {run.variant.label} rep {run.rep}: "
                f"wall {float(row['wall_s'] or 0):.3f} s{took} {row['status']}{extra}")
            sys.stdout.flush()
    return rows

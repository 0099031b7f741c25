#!/usr/bin/env python3
"""A spawn that cannot run away: more --workers than the slots is refused before anything is
spawned; a main process killed in the middle of the spawn leaves no worker behind (under mpirun
and without it); a worker whose main process is gone ends itself, from before MPI_Init on.
Every process started here is ended by the script, whatever happens.

  check_spawn_guard.py --miniamr BIN --deck DECK
"""
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

from fake_plan_servers import garbage_server
from mpi_env import mpi_env, script_arguments, verdict

SETTLE_S = 20  # how long the processes of a killed run may take to end


def processes(marker):
    """(start time, pid) of the live miniamr processes whose command line holds `marker`."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                words = f.read().split(b"\0")
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if marker.encode() in words and os.path.basename(words[0]) == b"miniamr" and \
                fields[0] != "Z":
            found.append((int(fields[19]), int(pid)))
    return sorted(found)


def end_all(marker, launcher):
    """Kills whatever is left of a run: its miniamr processes and its launcher's group."""
    for _, pid in processes(marker):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    try:
        os.killpg(launcher.pid, signal.SIGKILL)
    except OSError:
        pass
    try:
        launcher.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        pass


def kill_mid_spawn(miniamr, deck, work, mpirun, attempt=1):
    """Starts a spawning run, kills its main process as soon as a worker exists, and returns the
    problems: workers still there after SETTLE_S seconds."""
    name = "mpirun" if mpirun else "singleton"
    marker = os.path.join(work, f"killed-{name}-{attempt}.deck")  # in every process's argv
    with open(deck) as f, open(marker, "w") as g:
        g.write(f.read())
    cmd = (["mpirun", "-q", "-np", "1", "--oversubscribe"] if mpirun else []) + \
        [miniamr, marker, "--launch", "spawn", "--workers", "3", "--quiet", "--num_tsteps", "100000"]
    launcher = subprocess.Popen(cmd, cwd=work, env=mpi_env(), start_new_session=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        started = time.monotonic()
        while len(processes(marker)) < 2 and time.monotonic() - started < 30:
            if launcher.poll() is not None:
                return [f"{name}: the spawning run ended (exit {launcher.returncode}) before "
                        f"a worker started"]
            time.sleep(0.005)
        seen = processes(marker)
        if len(seen) < 2:
            # Open MPI 4's start-up hangs now and then before any worker exists (the main
            # process's own watchdog ends it after 120 s): nothing to test there, so once more.
            if attempt == 1:
                end_all(marker, launcher)
                return kill_mid_spawn(miniamr, deck, work, mpirun, attempt=2)
            return [f"{name}: no worker started within 30 s, twice"]
        main = launcher.pid if not mpirun else seen[0][1]  # the oldest is the main process
        os.kill(main, signal.SIGKILL)
        killed = time.monotonic()
        while processes(marker) and time.monotonic() - killed < SETTLE_S:
            time.sleep(0.1)
        left = processes(marker)
        if left:
            return [f"{name}: {len(left)} worker(s) still running {SETTLE_S} s after the main "
                    f"process was killed mid-spawn"]
        return []
    finally:
        end_all(marker, launcher)


def main():
    a = script_arguments().parse_args()
    miniamr, deck = os.path.abspath(a.miniamr), os.path.abspath(a.deck)
    failures = []
    with tempfile.TemporaryDirectory() as work:
        # Beyond the slots (4 per slot even oversubscribed): refused before any spawn.
        for mpirun, workers in ((True, 1000), (False, 100)):
            marker = os.path.join(work, f"slots-{workers}.deck")
            with open(deck) as f, open(marker, "w") as g:
                g.write(f.read())
            cmd = (["mpirun", "-q", "-np", "1", "--oversubscribe"] if mpirun else []) + \
                [miniamr, marker, "--launch", "spawn", "--workers", str(workers)]
            launcher = subprocess.Popen(cmd, cwd=work, env=mpi_env(), start_new_session=True,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            try:
                _, err = launcher.communicate(timeout=60)
                text = f"--workers {workers}: the run would have {workers + 1} processes"
                if launcher.returncode != 2 or err.count(text) != 1:
                    failures.append(f"--workers {workers}: exit {launcher.returncode}, stderr "
                                    f"{err[-500:]!r} should say {text!r}")
            except subprocess.TimeoutExpired:
                failures.append(f"--workers {workers}: no end within 60 s")
            finally:
                end_all(marker, launcher)

        # A plan server's garbage answer is echoed cut to 60 bytes (and nothing is spawned).
        with garbage_server(b"#" * 150 + b"\n") as fake:
            r = subprocess.run(["mpirun", "-q", "-np", "1", "--oversubscribe", miniamr, deck,
                                "--launch", "spawn", "--workers", "1", "--plan",
                                f"127.0.0.1:{fake.port}", "--plan_strict"], cwd=work,
                               env=mpi_env(), capture_output=True, text=True, timeout=120)
        text = f"its answer '{'#' * 60}'... (150 bytes) is not a comma-separated list"
        if r.returncode != 2 or text not in r.stderr or "#" * 61 in r.stderr:
            failures.append(f"a plan server's long garbage: exit {r.returncode}, stderr "
                            f"{r.stderr[-600:]!r} should say {text!r}")

        for mpirun in (True, False):
            failures += kill_mid_spawn(miniamr, deck, work, mpirun)

        # A worker whose main process is gone (a process id that has just ended, on this host)
        # ends itself, even before it reaches MPI.
        gone = subprocess.Popen(["true"])
        gone.wait()
        marker = os.path.join(work, "orphan.deck")
        with open(deck) as f, open(marker, "w") as g:
            g.write(f.read())
        env = dict(mpi_env(), MINIAMR_SPAWNED_BY=f"{socket.gethostname()} {gone.pid} 150")
        orphan = subprocess.Popen([miniamr, marker, "--num_tsteps", "100000", "--quiet"], cwd=work,
                                  env=env, start_new_session=True, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        try:
            _, err = orphan.communicate(timeout=SETTLE_S)
            text = f"its main process {gone.pid} on {socket.gethostname()} is gone; ending"
            if orphan.returncode != 1 or text not in err:
                failures.append(f"an orphaned worker: exit {orphan.returncode}, stderr "
                                f"{err[-500:]!r} should say {text!r}")
        except subprocess.TimeoutExpired:
            failures.append(f"an orphaned worker still ran after {SETTLE_S} s")
        finally:
            end_all(marker, orphan)
    return verdict(failures, "spawns beyond the slots are refused; killed spawns leave no worker")


if __name__ == "__main__":
    sys.exit(main())

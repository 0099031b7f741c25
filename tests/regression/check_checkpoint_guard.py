#!/usr/bin/env python3
"""Checkpoints that never lose or mix data, and restarts that say what they resume: links planted
in the folder are never written through; a folder in use by another run is refused; three runs
sharing a folder never publish over each other; pruning removes only the run's own files; a
damaged attribute (the numerics record, the command line) is damage, never a crash; --restart DIR
falls back to the newest usable checkpoint and says so; a restart at the final step, a FIFO and a
tiny file-size limit are clear errors. Small meshes, so that the sanitizer build runs it too.

  check_checkpoint_guard.py --miniamr BIN
"""
import concurrent.futures
import fcntl
import os
import re
import shutil
import subprocess
import sys
import tempfile

from mpi_env import mpi_env, run_bounded, script_arguments, verdict

# A deck, so that a case may override any of it on the command line.
DECK = """nx = 4
ny = 4
nz = 4
num_refine = 3
num_vars = 2
stages_per_ts = 2
num_objects = 1
object = 2 0 0.3 0.4 0.5 0.02 0.01 0.03 0.25 0.2 0.3 0 0 0
"""
SIGNS_OF_A_CRASH = ("Signal", "signal", "malloc", "Aborted", "core dumped", "MPI_ABORT")


def main():
    a = script_arguments(deck=False).parse_args()
    miniamr = os.path.abspath(a.miniamr)
    failures = []
    with tempfile.TemporaryDirectory() as work:
        def path(*parts):
            return os.path.join(work, *parts)

        deck = path("small.deck")
        with open(deck, "w") as f:
            f.write(DECK)

        def run(*opts, limit_kib=None):
            cmd = ["mpirun", "-q", "-np", "2", "--oversubscribe", miniamr, deck,
                   *[str(o) for o in opts]]
            env = mpi_env()
            if limit_kib:
                cmd = ["bash", "-c", f'ulimit -f {limit_kib}; exec "$@"', "bash"] + cmd
                # Open MPI's shared-memory start-up writes files larger than that: keep to
                # sockets and an in-memory PMIx store.
                env.update(PMIX_MCA_gds="hash", OMPI_MCA_btl="self,tcp")
            r = run_bounded(cmd, work, timeout=120, env=env)
            return r or subprocess.CompletedProcess(cmd, "hang", "", "(no end within 120 s)")

        def checkpoints(folder):
            return sorted(n for n in os.listdir(path(folder)) if n.startswith("checkpoint."))

        def expect(what, r, status, text, stream="stderr"):
            out = getattr(r, stream)
            if r.returncode != status or text not in out or \
                    any(s in r.stderr for s in SIGNS_OF_A_CRASH):
                failures.append(f"{what}: exit {r.returncode} (want {status}), {stream} should "
                                f"say {text!r}:\n{r.stdout[-400:]}\n{r.stderr[-800:]}")

        r = run("--num_tsteps", 6, "--checkpoint_freq", 3, "--checkpoint_dir", "cp")
        if r.returncode != 0 or checkpoints("cp") != ["checkpoint.000003.h5",
                                                      "checkpoint.000006.h5"]:
            sys.exit(f"the first run failed: exit {r.returncode}, {r.stderr[-800:]}")
        newest = path("cp", "checkpoint.000006.h5")

        # Links planted at the old fixed temporary name (and its hidden form) are left alone.
        os.mkdir(path("links"))
        with open(path("victim.txt"), "w") as f:
            f.write("victim\n")
        planted = ["checkpoint.000003.h5.tmp", ".checkpoint.000003.h5.tmp"]
        for name in planted:
            os.symlink(path("victim.txt"), path("links", name))
        r = run("--num_tsteps", 3, "--checkpoint_freq", 3, "--checkpoint_dir", "links")
        with open(path("victim.txt"), "rb") as f:
            victim = f.read()
        if r.returncode != 0 or victim != b"victim\n" or \
                not all(os.path.islink(path("links", n)) for n in planted):
            failures.append(f"planted links: exit {r.returncode}, the link's target now holds "
                            f"{victim[:40]!r}")

        # A folder another process holds: refused before any work, nothing written.
        os.mkdir(path("held"))
        fd = os.open(path("held", ".miniamr.lock"), os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            r = run("--num_tsteps", 3, "--checkpoint_freq", 3, "--checkpoint_dir", "held")
        finally:
            os.close(fd)
        expect("a held folder", r, 2, "--checkpoint_dir 'held': another run is using it")
        if checkpoints("held"):
            failures.append(f"a held folder: {checkpoints('held')} written")

        # Three runs in one folder at once: each finishes or is refused, and every checkpoint
        # left there is whole, with the numerics of a run that finished.
        def shared(num_vars):
            return num_vars, run("--num_tsteps", 6, "--checkpoint_freq", 3, "--checkpoint_dir",
                                 "shared", "--num_vars", num_vars)
        with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
            runs = list(pool.map(shared, (1, 2, 3)))
        finished = [v for v, r in runs if r.returncode == 0]
        for v, r in runs:
            if r.returncode != 0 and (r.returncode != 2 or "another run is using it" not in r.stderr):
                failures.append(f"shared folder, --num_vars {v}: exit {r.returncode}: "
                                f"{r.stderr[-600:]}")
        for name in checkpoints("shared"):
            ok = [v for v in finished if run("--num_tsteps", 7, "--num_vars", v, "--restart",
                                             path("shared", name)).returncode == 0]
            if not ok:
                failures.append(f"shared folder: {name} restarts with none of the finished runs' "
                                f"--num_vars {finished}")

        # Pruning: another run's checkpoints stay; --restart DIR skips them with a note.
        r1 = run("--num_tsteps", 4, "--checkpoint_freq", 2, "--checkpoint_dir", "mixed",
                 "--num_vars", 1)
        r2 = run("--num_tsteps", 6, "--checkpoint_freq", 3, "--checkpoint_dir", "mixed",
                 "--checkpoint_keep", 1)
        want = ["checkpoint.000002.h5", "checkpoint.000004.h5", "checkpoint.000006.h5"]
        if r1.returncode or r2.returncode or checkpoints("mixed") != want:
            failures.append(f"--checkpoint_keep 1 in a folder with another run's checkpoints: "
                            f"exit {r1.returncode}/{r2.returncode}, left {checkpoints('mixed')}, "
                            f"want {want}")
        r = run("--num_tsteps", 5, "--num_vars", 1, "--restart", "mixed")
        expect("--restart DIR with a newer foreign checkpoint", r, 0,
               "checkpoint.000006.h5': these options change the numerics")
        expect("--restart DIR with a newer foreign checkpoint", r, 0,
               "Restarting from mixed/checkpoint.000004.h5 (timestep 4)", "stdout")

        # Attributes are covered by the digest: an edited numerics record (which restarted with
        # the options it claims crashed the run) and one damaged byte of the command line.
        data = open(newest, "rb").read()
        edits = {"numerics.h5": (b"num_refine=3\nblock_change=3", b"num_refine=2\nblock_change=2"),
                 "command.h5": (b"--checkpoint_dir cp", b"--checkpoint_dir cq")}
        for name, (old, new) in edits.items():
            if data.count(old) != 1:
                failures.append(f"{name}: {old!r} is not in the checkpoint once")
                continue
            with open(path(name), "wb") as f:
                f.write(data.replace(old, new))
        r = run("--num_tsteps", 8, "--restart", "numerics.h5", "--num_refine", 2,
                "--block_change", 2)
        expect("an edited numerics record", r, 2,
               "--restart 'numerics.h5': its attributes do not match their checksum")
        r = run("--num_tsteps", 8, "--restart", "command.h5")
        expect("a damaged command line", r, 2, "(a damaged file)")

        # A damaged newest checkpoint: the older one continues, and the run says so.
        shutil.copytree(path("cp"), path("fallback"))
        damaged = path("fallback", "checkpoint.000006.h5")
        middle = len(data) // 2
        with open(damaged, "wb") as f:
            f.write(data[:middle] + bytes(b ^ 0xFF for b in data[middle:middle + 64]) +
                    data[middle + 64:])
        r = run("--num_tsteps", 7, "--restart", "fallback")
        expect("a damaged newest checkpoint", r, 0,
               "checkpoint.000006.h5': its contents do not match their checksum (a damaged "
               "file); trying the older 'fallback/checkpoint.000003.h5'")
        expect("a damaged newest checkpoint", r, 0,
               "Restarting from fallback/checkpoint.000003.h5 (timestep 3), the newest usable",
               "stdout")

        # The final step, a FIFO, and a file-size limit below any checkpoint.
        r = run("--num_tsteps", 6, "--restart", "cp")
        expect("a restart at the final step", r, 2,
               "the checkpoint is at timestep 6, the last of --num_tsteps 6: the run is complete")
        os.mkfifo(path("fifo"))
        r = run("--num_tsteps", 8, "--restart", "fifo")
        expect("--restart FIFO", r, 2, "--restart 'fifo': not a regular file or folder")
        r = run("--num_tsteps", 3, "--checkpoint_freq", 3, "--checkpoint_dir", "small",
                limit_kib=1)
        expect("ulimit -f 1", r, 1, "more than this process's file size limit of 1.0 KiB")
        stray = [n for n in os.listdir(work) if re.match(r"results|\.checkpoint", n)]
        if stray:
            failures.append(f"files left in the working folder: {stray}")
    return verdict(failures, "checkpoints are never written through links, mixed, pruned "
                             "across runs or trusted when damaged; restarts say what they resume")


if __name__ == "__main__":
    sys.exit(main())

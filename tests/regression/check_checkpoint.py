#!/usr/bin/env python3
"""Checkpoint and restart: a run continued from a checkpoint, on another rank count and with
either runtime, ends bitwise where the uninterrupted run ends; a run killed while writing a
checkpoint leaves the previous one usable; only the newest --checkpoint_keep stay; damaged,
truncated, foreign or incompatible files and a checkpoint that cannot fit are clear errors.

  check_checkpoint.py --miniamr BIN --deck DECK
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

from mpi_env import mpi_env, result_differences, script_arguments, verdict

STEPS = 20
HALF = STEPS // 2


def main():
    a = script_arguments().parse_args()
    miniamr, deck = os.path.abspath(a.miniamr), os.path.abspath(a.deck)
    failures = []
    with tempfile.TemporaryDirectory() as work:
        def run(np, *opts, env=None, limit_kib=None):
            cmd = ["mpirun", "-q", "-np", str(np), "--oversubscribe", miniamr, deck, "--quiet",
                   *[str(o) for o in opts]]
            if limit_kib:  # a file-size limit, as a full disk would be
                cmd = ["bash", "-c", f'ulimit -f {limit_kib}; exec "$@"', "bash"] + cmd
            return subprocess.run(cmd, cwd=work, env={**mpi_env(), **(env or {})},
                                  capture_output=True, text=True, timeout=300)

        def results(name):
            with open(os.path.join(work, name)) as f:
                return yaml.safe_load(f)

        def listing(folder):  # (without the folder's lock file)
            return sorted(n for n in os.listdir(os.path.join(work, folder)) if n != ".miniamr.lock")

        def same_as_whole(what, r, name):
            if r.returncode != 0:
                failures.append(f"{what}: exit {r.returncode}: {r.stderr[-600:]}")
                return
            got = results(name)
            failures.extend(result_differences(got, whole, f"the uninterrupted run ({what})"))
            if got["num_tsteps"] != STEPS:
                failures.append(f"{what}: ended at timestep {got['num_tsteps']}, want {STEPS}")

        def refused(what, r, text, status=2):
            if r.returncode != status or text not in r.stderr:
                failures.append(f"{what}: exit {r.returncode} (want {status}), stderr "
                                f"{r.stderr[-600:]!r} should say {text!r}")

        r = run(2, "--num_tsteps", STEPS, "--results", "whole.yaml")
        if r.returncode != 0:
            sys.exit(f"the uninterrupted run failed: {r.stderr[-1000:]}")
        whole = results("whole.yaml")

        # Half the run with a checkpoint at its end, then the rest from it: another rank count,
        # and the other runtime.
        plots = ["--plot_freq", 5, "--plot_format", "xdmf", "--plot_dir", "plots"]
        r = run(2, "--num_tsteps", HALF, "--checkpoint_freq", HALF, "--checkpoint_dir", "cp", *plots)
        if r.returncode != 0 or listing("cp") != [f"checkpoint.{HALF:06d}.h5"]:
            failures.append(f"half run: exit {r.returncode}, cp holds {listing('cp')}")
        for np, runtime in ((3, "static"), (1, "dynamic"), (4, "dynamic")):
            name = f"restart{np}{runtime}.yaml"
            r = run(np, "--num_tsteps", STEPS, "--restart", "cp", "--runtime", runtime,
                    "--results", name, *(plots if np == 3 else []))
            same_as_whole(f"restart on {np} ranks, {runtime}", r, name)
        # The plot index of the restarted run lists the first part's steps too: 0, 5, ..., 20.
        with open(os.path.join(work, "plots", "plot.xmf")) as f:  # (the blocks' time series)
            times = f.read().split('<Grid Name="cells"')[0].count("<Time Value=")
        if times != STEPS // 5 + 1:
            failures.append(f"the XDMF index after a restart lists {times} steps, want "
                            f"{STEPS // 5 + 1}")
        # The file itself, not its folder.
        r = run(2, "--num_tsteps", STEPS, "--restart", f"cp/checkpoint.{HALF:06d}.h5",
                "--results", "file.yaml")
        same_as_whole("restart from the file", r, "file.yaml")

        # Killed while writing the checkpoint at 15: the one at 10 is complete and continues.
        r = run(2, "--num_tsteps", STEPS, "--checkpoint_freq", 5, "--checkpoint_dir", "killed",
                env={"MINIAMR_TEST_KILL_IN_CHECKPOINT": "15"})
        files = listing("killed")
        if r.returncode == 0 or len(files) != 3 or files[1:] != ["checkpoint.000005.h5",
                                                                 "checkpoint.000010.h5"] or \
                not re.fullmatch(r"\.checkpoint\.000015\.h5\.\d+\.[0-9a-f]{16}\.tmp", files[0]):
            failures.append(f"killed run: exit {r.returncode}, left {files}")
        r = run(3, "--num_tsteps", STEPS, "--restart", "killed", "--results", "killed.yaml")
        same_as_whole("restart after a kill during a checkpoint", r, "killed.yaml")

        # --checkpoint_keep 2: the two newest stay.
        r = run(2, "--num_tsteps", STEPS, "--checkpoint_freq", 5, "--checkpoint_dir", "keep",
                "--checkpoint_keep", 2)
        if r.returncode != 0 or listing("keep") != ["checkpoint.000015.h5", "checkpoint.000020.h5"]:
            failures.append(f"--checkpoint_keep 2: exit {r.returncode}, left {listing('keep')}")

        # A checkpoint that does not fit (a file-size limit below its size): every rank stops
        # with one message, and the checkpoint before it still continues the run.
        size_kib = os.path.getsize(os.path.join(work, "cp", f"checkpoint.{HALF:06d}.h5")) // 1024
        r = run(2, "--num_tsteps", STEPS, "--checkpoint_freq", 5, "--checkpoint_dir", "full",
                limit_kib=size_kib * 3 // 4)
        refused("file-size limit", r, "more than this process's file size limit", status=1)
        if listing("full") != ["checkpoint.000005.h5"]:
            failures.append(f"file-size limit: left {listing('full')}")
        r = run(2, "--num_tsteps", STEPS, "--restart", "full", "--results", "full.yaml")
        same_as_whole("restart after a failed checkpoint", r, "full.yaml")

        # Files that are not good checkpoints.
        good = os.path.join(work, "cp", f"checkpoint.{HALF:06d}.h5")
        data = open(good, "rb").read()
        bad = {"damaged.h5": data[:len(data) // 2] + bytes(b ^ 0xFF for b in data[len(data) // 2:
                                                                                  len(data) // 2 + 64])
               + data[len(data) // 2 + 64:],
               "truncated.h5": data[:len(data) // 2],
               "text.h5": b"not a checkpoint\n"}
        for name, content in bad.items():
            with open(os.path.join(work, name), "wb") as f:
                f.write(content)
        refused("damaged", run(2, "--num_tsteps", STEPS, "--restart", "damaged.h5"),
                "--restart 'damaged.h5': ")
        refused("truncated", run(2, "--num_tsteps", STEPS, "--restart", "truncated.h5"),
                "--restart 'truncated.h5': ")
        refused("text", run(2, "--num_tsteps", STEPS, "--restart", "text.h5"),
                "not a readable HDF5 file")
        try:
            import h5py
            with h5py.File(os.path.join(work, "foreign.h5"), "w") as f:
                f["data"] = [1.0, 2.0]
            refused("foreign", run(2, "--num_tsteps", STEPS, "--restart", "foreign.h5"),
                    "not a miniamr checkpoint")
        except ImportError:
            print("note: no python3-h5py, the foreign-HDF5 case is skipped")
        refused("numerics", run(2, "--num_tsteps", STEPS, "--restart", "cp", "--num_vars", 2),
                "these options change the numerics and differ from the checkpointed run's: "
                "num_vars")
        refused("too few steps", run(2, "--num_tsteps", 5, "--restart", "cp"),
                f"the checkpoint is at timestep {HALF}, past the end of --num_tsteps 5")
        refused("nothing there", run(2, "--restart", "nowhere"), "no such file or folder")
        os.mkdir(os.path.join(work, "empty"))
        refused("empty folder", run(2, "--restart", "empty"), "no complete checkpoint")
        for name in ("results.yaml", "damaged.yaml"):
            if os.path.exists(os.path.join(work, name)):
                failures.append(f"a refused restart wrote {name}")
    return verdict(failures, "restarts equal the uninterrupted run; bad checkpoints are refused")


if __name__ == "__main__":
    sys.exit(main())

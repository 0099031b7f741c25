"""The reference Mantevo miniAMR 1.7: built from its tarball into a folder on first use, reused
while the tarball is the same."""
import hashlib
import os
import shutil
import subprocess
import tempfile

from . import REPO, UsageError

# Beside the repository, as the project's shared folder keeps it.
DEFAULT_TARBALL = os.environ.get(
    "MINIAMR_REFERENCE_TARBALL",
    os.path.join(os.path.dirname(REPO), "shared", "peers", "miniAMR-1.7-ref.tar.gz"))
DEFAULT_DIR = os.path.join(REPO, "build", "reference")
SOURCE = "miniAMR-1.7"


def missing_tarball(tarball):
    """The message when the reference's tarball is not there: where to get it, how to pass it."""
    return (f"the reference does not build: no tarball {tarball}. Mantevo miniAMR 1.7 is at "
            f"https://github.com/Mantevo/miniAMR (commit 635fef2f8355, 2024-06-28): pack its "
            f"ref/, README.md and LICENSE under a folder {SOURCE}/ into a .tar.gz (tar czf "
            f"miniAMR-1.7-ref.tar.gz {SOURCE}), and pass it with --reference-tarball FILE (or "
            f"MINIAMR_REFERENCE_TARBALL=FILE)")


def executable(ref_dir):
    return os.path.join(os.path.abspath(ref_dir), SOURCE, "ref", "miniAMR.x")


def build_commands(tarball, jobs=None):
    """As /work/shared/peers/README.md says, in parallel."""
    return [["tar", "xzf", tarball],
            ["make", "-C", f"{SOURCE}/ref", "CC=mpicc", "LD=mpicc",
             f"-j{jobs or os.cpu_count() or 1}"]]


def _sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def ensure(tarball, ref_dir, log=print):
    """The reference's executable, built first when missing or from another tarball."""
    if not os.path.isfile(tarball):
        raise UsageError(missing_tarball(tarball))
    ref_dir = os.path.abspath(ref_dir)
    exe, stamp = executable(ref_dir), os.path.join(ref_dir, "tarball.sha256")
    digest = _sha256(tarball)
    if os.path.exists(exe) and os.path.exists(stamp):
        with open(stamp) as f:
            if f.read().strip() == digest:
                return exe
    if shutil.which("mpicc") is None:
        raise UsageError("the reference does not build: mpicc is not on PATH")
    os.makedirs(ref_dir, exist_ok=True)
    log_path = os.path.join(ref_dir, "build.log")
    log(f"building the reference from {tarball} in {ref_dir} (log: {log_path})")
    # Build beside the final place and move it there at the end: no half-built tree is reused.
    work = tempfile.mkdtemp(prefix=".build-", dir=ref_dir)
    try:
        with open(log_path, "w") as f:
            for cmd in build_commands(os.path.abspath(tarball)):
                f.write("$ " + " ".join(cmd) + "\n")
                f.flush()
                status = subprocess.run(cmd, cwd=work, stdout=f,
                                        stderr=subprocess.STDOUT).returncode
                if status != 0:
                    break
        built = os.path.join(work, SOURCE, "ref", "miniAMR.x")
        if status != 0 or not os.path.exists(built):
            with open(log_path, errors="replace") as f:
                tail = [l.rstrip() for l in f if l.strip()][-3:]
            raise UsageError(f"the reference does not build ({' | '.join(tail)}); "
                             f"see {log_path}")
        shutil.rmtree(os.path.join(ref_dir, SOURCE), ignore_errors=True)
        os.replace(os.path.join(work, SOURCE), os.path.join(ref_dir, SOURCE))
        with open(stamp, "w") as f:
            f.write(digest + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return exe

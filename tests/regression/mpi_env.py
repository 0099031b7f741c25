"""What the regression scripts share: the environment mpirun needs here, and the comparison of
two runs' results."""
import os


def mpi_env():
    """This process's environment, plus MPI as root (containers, CI) and oversubscribed runs
    that yield instead of busy polling; values already set win."""
    env = dict(os.environ)
    for key, value in (("OMPI_ALLOW_RUN_AS_ROOT", "1"), ("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"),
                       ("OMPI_MCA_mpi_yield_when_idle", "1"),
                       ("OMPI_MCA_rmaps_base_oversubscribe", "1")):
        env.setdefault(key, value)
    return env


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

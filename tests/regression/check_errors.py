#!/usr/bin/env python3
"""Bad input must end with one clear message on rank 0, exit status 2 (usage) or 1 (run-time
failure), no crash, no hang and no results file. Runs every case on 2 ranks.

  check_errors.py --miniamr BIN --inputs DIR
"""
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile

from mpi_env import failure_problems, mpi_env, script_arguments

SPHERE = ["--object", "2", "0", "0.5", "0.5", "0.5", "0", "0", "0", "0.3", "0.3", "0.3", "0", "0", "0"]

# (arguments, expected status, text the message must contain)
CASES = [
    (["--nz_", "4"], 2, "unknown option '--nz_' (did you mean '--nz'?)"),
    (["--nx"], 2, "missing value for --nx"),
    (["--nx", "abc"], 2, "--nx expects an integer, got 'abc'"),
    (["--nx", "3.9"], 2, "--nx expects an integer, got '3.9'"),
    (["--nx", "7"], 2, "--nx must be a positive even number"),
    (["--nx", "-4"], 2, "--nx must be a positive even number"),
    (["--object", "2", "0", "1"], 2, "expects 14 values"),
    (["--stencil", "5"], 2, "--stencil must be 0, 7 or 27"),
    (["--num_refine", "25"], 2, "--num_refine must be between 0 and 20"),
    (["--time", "0"], 2, "--time must be positive"),
    (["--comm_vars", "-1"], 2, "--comm_vars"),
    (["--num_objects", "2"] + SPHERE, 2, "fewer --object than --num_objects"),
    (["/nonexistent/deck.deck"], 2, "cannot read deck file"),
    (["DECK_WITH_TYPO"], 2, "unknown key 'nxx' (did you mean 'nx'?)"),
    (["--num_vars", "1", "--num_refine", "2", "--uniform_refine", "1", "--max_blocks", "4",
      "--nx", "4", "--ny", "4", "--nz", "4"], 1, "more than --max_blocks 4"),
    (["--num_vars", "1", "--num_refine", "2", "--error_tol", "40", "--nx", "4", "--ny", "4",
      "--nz", "4", "--num_tsteps", "1", "--checksum_freq", "1", "--num_objects", "1"] + SPHERE,
     1, "difference too large"),
    # Only rank 0 refines (one root block, kept there): its failure reaches rank 1 through the
    # vote on the neighbourhood's exchange, which rank 1 enters after adapting its empty share.
    *[(["--runtime", r, "--num_vars", "1", "--num_refine", "2", "--nx", "4", "--ny", "4", "--nz",
        "4", "--num_tsteps", "2", "--lb_opt", "0", "--max_blocks", "10", "--num_objects", "1",
        "--object", "2", "0", "0.2", "0.2", "0.2", "0", "0", "0", "0.15", "0.15", "0.15", "0",
        "0", "0"], 1, "needs 16 blocks on one rank, more than --max_blocks 10")
      for r in ("static", "dynamic")],
    (["--runtime", "foo"], 2, "--runtime must be static or dynamic, got 'foo'"),
    (["--isa", "avx512"], 2,
     "--isa must be auto, x86-64, x86-64-v3 or x86-64-v4, got 'avx512'"),
    (["--threads", "0"], 2, "--threads must be at least 1, got 0"),
    (["--threads", "-1"], 2, "--threads must be at least 1, got -1"),
    (["--task_order_seed", "-2"], 2, "--task_order_seed must be at least 0, got -2"),
    (["--trace", "/nonexistent-dir/t.json"], 2, "--trace '/nonexistent-dir/t.json': cannot write"),
    (["--dump_graph", "/nonexistent-dir/g.dot"], 2,
     "--dump_graph '/nonexistent-dir/g.dot': cannot write"),
    (["--trace", "A_DIRECTORY"], 2, "--trace 'a_directory': cannot write"),
    (["--runtime", "dynamic", "--slow_rank", "5:2"], 2, "--slow_rank 5:2: there are only ranks 0 to 1"),
    (["--slow_rank", "1:0.5"], 2, "--slow_rank factor must be at least 1"),
    (["--slow_rank", "x"], 2, "--slow_rank expects RANK:FACTOR"),
    (["--slow_rank", "1:abc"], 2, "--slow_rank factor expects a number, got 'abc'"),
    (["--slow_rank", "3-1:2"], 2, "--slow_rank '3-1:2': the range's last rank is below its first"),
    (["--runtime", "dynamic", "--lb", "foo"], 2, "--lb must be one of none, diffusion, sfc"),
    (["--lb", "sfc"], 2, "--lb chooses the dynamic runtime's balancer"),
    (["--runtime", "dynamic", "--lb_threshold", "0.5"], 2, "--lb_threshold must be at least 1"),
    (["--runtime", "dynamic", "--lb_max_move", "0"], 2, "--lb_max_move must be above 0"),
    (["--runtime", "dynamic", "--lb_max_move", "2"], 2, "--lb_max_move must be above 0"),
    (["--lb_log", "log.jsonl"], 2, "--lb_log logs the dynamic runtime's balancer"),
    (["--runtime", "dynamic", "--lb_replay", "/nonexistent/log.jsonl"], 2,
     "cannot read --lb_replay file '/nonexistent/log.jsonl': No such file or directory"),
    (["--runtime", "dynamic", "--lb_replay", "DECK_WITH_TYPO"], 2, "line 1:"),
    (["--runtime", "dynamic", "--lb_replay", "REPLAY3"], 2, "was logged on 3 ranks, this run has 2"),
    # Options that multiply the work or the time are bounded; a rank is slowed once.
    (["--threads", "10000"], 2, "--threads must be at most 4096, got 10000"),
    (["--threads", str(4 * (os.cpu_count() or 1) + 1)], 2, "more than 4 threads per core"),
    (["--slow_rank", "0:2", "--slow_rank", "0:3"], 2,
     "--slow_rank: rank 0 is given twice (again in '0:3')"),
    (["--slow_rank", "0-1:2", "--slow_rank", "1:3"], 2, "rank 1 is given twice"),
    (["--slow_rank", "0:1e300"], 2, "--slow_rank factor must be at most 1000, got 1e+300"),
    (["--slow_rank", "0-2000000000:2"], 2, "a range of more ranks than any run has"),
    (["--runtime", "dynamic", "--noise", "1e300"], 2, "--noise must be between 0 and 10"),
    (["--error_tol", "400"], 2, "--error_tol must be between 0 and 308 (the tolerance is 10^-E"),
    (["--max_memory", "99999999999999999999G"], 2,
     "--max_memory must be at most 1048576T (1 EiB), got '99999999999999999999G'"),
    # mpirun ends a program's words at a lone ':', so "--plan :" arrives as "--plan".
    (["--launch", "spawn", "--workers", "1", "--plan"], 2,
     "missing value for --plan: expects a plan file or HOST:PORT (under mpirun a lone ':'"),
    # Object speeds that make the --time step zero (an endless loop) or infinite.
    (["--time", "1", "--num_objects", "1", "--object", "2", "0", "0.5", "0.5", "0.5", "1e308", "0",
      "0", "0.1", "0.1", "0.1", "0", "0", "0"], 2, "--time: the objects' speeds give a time step"),
    (["--time", "1", "--num_objects", "1", "--object", "2", "0", "0.5", "0.5", "0.5", "1e-321",
      "0", "0", "0.1", "0.1", "0.1", "0", "0", "0"], 2, "--time: the objects' speeds give a time step"),
    # The spawn start-up: one launching process, a worker count, a plan that can be read.
    (["--launch", "fork"], 2, "--launch must be mpirun or spawn, got 'fork'"),
    (["--launch", "spawn"], 2, "--launch spawn needs --workers N"),
    (["--launch", "spawn", "--workers", "0"], 2, "--workers must be at least 1, got 0"),
    (["--workers", "2"], 2, "--workers counts spawned processes: add --launch spawn"),
    (["--launch", "spawn", "--workers", "1"], 2,
     "--launch spawn starts from one process, which spawns the workers; this run has 2"),
    (["--plan", "plan.txt"], 2, "--plan places spawned workers: add --launch spawn"),
    (["--launch", "spawn", "--workers", "1", "--plan", "localhost:99999"], 2,
     "--plan 'localhost:99999': the port must be 1 to 65535"),
    (["--launch", "spawn", "--workers", "1", "--plan", "bad host!:80"], 2,
     "'bad host!' is not a host name or address"),
    (["--launch", "spawn", "--workers", "1", "--plan", ""], 2, "--plan expects a value, got ''"),
    (["--launch", "spawn", "--workers", "1", "--plan_strict"], 2, "--plan_strict needs a --plan"),
    (["--plan_timeout", "0"], 2, "--plan_timeout must be above 0 and at most 3600 seconds, got 0"),
    (["--lb_link_model", "model.yaml"], 2,
     "--lb_link_model prices the dynamic runtime's migrations: add --runtime dynamic"),
    (["--runtime", "dynamic", "--lb_link_model", "/nonexistent/model.yaml"], 2,
     "cannot read link model file '/nonexistent/model.yaml'"),
    (["--runtime", "dynamic", "--lb_link_model", "DECK_WITH_TYPO"], 2, "typo.deck"),
    # Checkpoints: a folder to write them in, written every N timesteps.
    (["--checkpoint_freq", "5"], 2, "--checkpoint_freq needs a --checkpoint_dir to write into"),
    (["--checkpoint_dir", "cp"], 2, "--checkpoint_dir needs a --checkpoint_freq"),
    (["--checkpoint_freq", "5", "--checkpoint_dir", "cp", "--checkpoint_keep", "0"], 2,
     "--checkpoint_keep must be at least 1, got 0"),
    (["--checkpoint_freq", "-1"], 2, "--checkpoint_freq must be at least 0, got -1"),
    (["--checkpoint_freq", "5", "--checkpoint_dir", "/proc/miniamr-checkpoints"], 2,
     "--checkpoint_dir '/proc/miniamr-checkpoints': cannot create it"),
    (["--restart", "/nonexistent/cp"], 2, "--restart '/nonexistent/cp': no such file or folder"),
    # Plots: a known format, variables that exist, a folder that can be made.
    (["--plot_format", "vtk"], 2, "--plot_format must be text, xdmf or vtkhdf, got 'vtk'"),
    (["--plot_format", "xdmf", "--num_vars", "2", "--plot_vars", "0,5"], 2,
     "--plot_vars '0,5': variable 5 does not exist (--num_vars 2: 0 to 1)"),
    (["--plot_format", "xdmf", "--plot_vars", "0,x"], 2,
     "--plot_vars entry expects an integer, got 'x'"),
    (["--plot_vars", "1"], 2, "--plot_vars chooses the variables of xdmf and vtkhdf plots: add --plot_format xdmf or vtkhdf"),
    (["--progress_interval", "-1"], 2, "--progress_interval must be 0 to 86400 seconds, got -1"),
    (["--plot_freq", "1", "--plot_format", "xdmf", "--plot_dir", "/dev/null/plots"], 2,
     "--plot_dir '/dev/null/plots': cannot create the folder '/dev/null/plots': Not a directory"),
    (["--plot_freq", "1", "--plot_dir", "DECK_WITH_TYPO"], 2, "exists and is not a folder"),
    # Decks: files only, small, text, each key once.
    (["/dev/zero"], 2, "cannot read deck file '/dev/zero': it is not a regular file"),
    (["FIFO"], 2, "it is not a regular file (a pipe, device or socket)"),
    (["BIG_DECK"], 2, "it is larger than 1024 KiB, the limit for a deck"),
    (["NUL_DECK"], 2, "nul.deck:2: a NUL byte: a deck is a text file"),
    (["TWICE_DECK"], 2, "twice.deck:3: 'nx' is given twice in the deck (first on line 1)"),
    (["TWICE_DECK", "--nx", "8"], 2, "'nx' is given twice in the deck"),
    (["--nx", "4", "--num_vars", "2", "--nx", "6"], 2, "--nx is given twice on the command line"),
    # Echoed text: control bytes escaped, long text cut.
    (["--runtime", "\x1b[31mred"], 2, "--runtime must be static or dynamic, got '\\x1b[31mred'"),
    (["--runtime", "x" * 100000], 2, "'... (100000 bytes)"),
    # Sizes: index arithmetic in range, and a mesh that fits in memory, before any work.
    (["--nx", "2147483646"], 2, "--nx must be at most 65536 cells, got 2147483646"),
    (["--nx", "2000", "--ny", "2000", "--nz", "2000"], 2,
     "a block of 2000x2000x2000 cells x 40 variables holds 320960960320 values"),
    (["--num_vars", "2147483646"], 2, "holds 3710851740288 values"),
    (["--init_x", "4096", "--init_y", "4096", "--init_z", "4096"], 2,
     "the initial mesh needs 16.9 PiB on one rank"),
    (["--num_refine", "9", "--uniform_refine", "1"], 2, "the uniformly refined mesh needs"),
    (["--max_memory", "1X"], 2, "--max_memory expects a positive size such as 512M or 8G, got '1X'"),
    (["--max_memory", "50M", "--num_refine", "4", "--num_tsteps", "2", "--num_objects", "1"] + SPHERE,
     1, "refinement at timestep 0 needs 76.5 MiB on one rank (145 blocks of 10x10x10 cells x 40 "
        "variables, 540 KiB each), more than the 50 MiB a rank may use (--max_memory 50 MiB)"),
]


def listing(top):
    """Every file and directory under top, relative to it."""
    return {os.path.relpath(os.path.join(d, n), top) for d, dirs, files in os.walk(top)
            for n in dirs + files}


def main():
    a = script_arguments(deck=False).parse_args()
    env = mpi_env()
    failures = 0
    with tempfile.TemporaryDirectory() as work:
        typo = os.path.join(work, "typo.deck")
        with open(typo, "w") as f:
            f.write("# a deck with a misspelt key\nnum_refine = 1\nnxx = 8\n")
        os.mkdir(os.path.join(work, "a_directory"))
        replay3 = os.path.join(work, "replay3.jsonl")
        with open(replay3, "w") as f:
            f.write('{"miniamr_lb_log": 1, "ranks": 3}\n')
        files = {"DECK_WITH_TYPO": typo, "A_DIRECTORY": "a_directory", "REPLAY3": replay3,
                 "FIFO": os.path.join(work, "fifo"), "BIG_DECK": os.path.join(work, "big.deck"),
                 "NUL_DECK": os.path.join(work, "nul.deck"),
                 "TWICE_DECK": os.path.join(work, "twice.deck")}
        os.mkfifo(files["FIFO"])  # no writer: opening it for reading would wait forever
        with open(files["BIG_DECK"], "w") as f:
            f.write(("# " + "x" * 1000 + "\n") * 1100)
        with open(files["NUL_DECK"], "wb") as f:
            f.write(b"nx = 4\nny = 4\0\n")
        with open(files["TWICE_DECK"], "w") as f:
            f.write("nx = 4\nnum_vars = 2\nnx = 6\n")
        def check(number, args, status, text):
            """One case in a folder of its own (cases run concurrently): its report, or ""."""
            case = os.path.join(work, f"case{number}")
            os.mkdir(case)
            os.mkdir(os.path.join(case, "a_directory"))
            before = listing(case)
            args = [files.get(x, x) for x in args]
            cmd = ["mpirun", "-q", "-np", "2", "--oversubscribe", os.path.abspath(a.miniamr)] + args
            try:
                run = subprocess.run(cmd, cwd=case, env=env, capture_output=True, text=True,
                                     timeout=120)
            except subprocess.TimeoutExpired:
                return f"FAIL (hang) {' '.join(args)}"
            problems = failure_problems(run, status, text)
            if os.path.exists(os.path.join(case, "results.yaml")):
                problems.append("results.yaml written")
            after = listing(case)
            if after != before:
                problems.append(f"files written: {sorted(after - before)}")
            if problems:
                return (f"FAIL {' '.join(args)[:200]}: {'; '.join(problems)}\n--- stdout\n"
                        f"{run.stdout[-2000:]}\n--- stderr\n{run.stderr[-2000:]}")
            return ""

        # Most of a case is mpirun starting and stopping: a few at once keep the cores busy.
        with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
            reports = list(pool.map(lambda c: check(*c), ((i, *case) for i, case in enumerate(CASES))))
        for (args, status, _), report in zip(CASES, reports):
            if report:
                failures += 1
                print(report)
            else:
                print(f"ok   {' '.join(files.get(x, x) for x in args)[:200]!r} -> {status}")
        # Ranks started with different options (MPMD): one message, never a hang.
        mpmd = ["mpirun", "-q", "-np", "1", "--oversubscribe", os.path.abspath(a.miniamr),
                "--num_tsteps", "6", ":", "-np", "1", os.path.abspath(a.miniamr), "--num_tsteps",
                "7"]
        try:
            run = subprocess.run(mpmd, cwd=work, env=env, capture_output=True, text=True,
                                 timeout=120)
            problems = failure_problems(run, 2, "the ranks were started with different options")
        except subprocess.TimeoutExpired:
            problems = ["a hang"]
        if problems:
            failures += 1
            print(f"FAIL ranks with different options: {'; '.join(problems)}")
        else:
            print("ok   ranks with different options -> 2")
        # --help: miniamr's own help on stdout, exit 0.
        run = subprocess.run(["mpirun", "-q", "-np", "2", "--oversubscribe",
                              os.path.abspath(a.miniamr), "--help"], cwd=work, env=env,
                             capture_output=True, text=True, timeout=120)
        if (run.returncode != 0 or not run.stdout.startswith("usage: miniamr")
                or run.stdout.count("usage: miniamr") != 1 or "--object" not in run.stdout):
            failures += 1
            print(f"FAIL --help: exit {run.returncode}\n{run.stdout[:500]}")
        else:
            print("ok   --help -> 0")
        # --version: one version, the git revision and the libraries, on rank 0 only.
        run = subprocess.run(["mpirun", "-q", "-np", "2", "--oversubscribe",
                              os.path.abspath(a.miniamr), "--version"], cwd=work, env=env,
                             capture_output=True, text=True, timeout=120)
        if (run.returncode != 0 or not re.match(r"miniamr \d+\.\d+\.\d+ \(git \S+\)\n", run.stdout)
                or run.stdout.count("miniamr ") != 1 or "MPI: " not in run.stdout):
            failures += 1
            print(f"FAIL --version: exit {run.returncode}\n{run.stdout[:500]}")
        else:
            print("ok   --version -> 0")
    print(f"{len(CASES) + 3 - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

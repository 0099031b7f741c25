"""Command line: strong, weak, compare, collect, table and balancer."""
import argparse
import json
import math
import os
import shlex
import shutil
import socket
import subprocess
import sys

from . import REPO, StudyFailure, UsageError, balancer_log, machine, plan as planning, reference, \
    results, runner, slurm, table
from .deck import parse_options, read_deck
from .inputs import check_output_folder
from .variants import parse_variants

DESCRIPTION = """Scaling studies and runtime comparisons of miniamr, optionally beside the reference
Mantevo miniAMR, on this machine (mpirun or srun) or as Slurm batch scripts.

  miniamr-study strong DECK --ranks 1,2 [--threads 1] [--variants static,dynamic] --out S
  miniamr-study weak DECK --ranks 1,2,4,8 --out S
  miniamr-study compare DECK --ranks 2 --variants 'static,dynamic@--lb sfc' --reference --out S
  miniamr-study collect DIR --out S        (the runs of an --emit-slurm study, once finished)
  miniamr-study balancer LOG --plot P.png  (what a dynamic run's --lb_log says)

Every sweep runs, for each repetition, every point (ranks x threads) and within it every
variant, so a machine that drifts affects all alike. Wall time is measured around the launcher
(mpirun or srun), the same way for miniamr and the reference. Outputs in --out: runs.csv (one row
per run, written as it finishes), summary.csv (median and min..max per point and variant,
speed-up, efficiency, ratios to the reference and to static), PNG plots, and every run's files
under runs/<point>/<variant>/rep<k>/. Exit status: 0 done, 1 a run failed or field digests that
must agree differ (after everything is written), 2 bad input.
"""

COMMON_EPILOG = """variants: RUNTIME[@miniamr options], runtime static, dynamic or reference, e.g.
  'dynamic@--lb sfc', 'static@--slow_rank 1:4'. Runs that differ only in options that never change
  results (--runtime, --threads, --lb*, --slow_rank, --noise, balancing and ownership options)
  and, for strong scaling and compare, in the rank count, must give the same field_digest.

--reference: the reference miniAMR 1.7 as one more variant, built on first use from
  --reference-tarball into --reference-dir (reused afterwards). It reads no deck: the deck, --extra
  and the variant's options become its command-line options (options only miniamr knows are left
  out, and said so). It needs npx*npy*npz = ranks: the tool keeps miniamr's root grid
  (npx*init_x x npy*init_y x npz*init_z) and picks a rank grid that divides it (the deck's own
  when it fits, else the smallest box surface per rank), init_* = root grid / rank grid; a rank
  count that cannot divide the root grid is refused. Its fixed block pool --max_blocks: the
  deck's max_blocks is per rank for the deck's npx*npy*npz ranks, so P ranks get
  ceil(max_blocks*npx*npy*npz*growth/P) (growth: the weak-scaling root-grid factor, else 1); a
  deck without max_blocks gets ceil(10000*growth/P); --reference-max-blocks overrides. miniamr
  gets the same scaled max_blocks when its deck sets one (it is a per-rank cap there too). The
  reference runs one thread per rank, whatever --threads says.

--emit-slurm DIR: writes DIR/<point>.sbatch (one script per point: #SBATCH --ntasks=ranks
  --cpus-per-task=threads --exclusive, OMP_NUM_THREADS, its variants alternating within each
  repetition through `srun -n P -c T --cpu-bind=cores`), each run's folder
  DIR/runs/<point>/<variant>/rep<k>/ with run.json, DIR/submit.sh (builds the reference from a
  copy of the tarball, then sbatch) and DIR/README.md. `miniamr-study collect DIR --out S` then
  writes the same outputs as a local study.
"""

WEAK_EPILOG = """weak scaling: the deck's root grid (npx*init_x x npy*init_y x npz*init_z,
whatever the rank count) is the problem of ONE rank. P ranks run it multiplied by (fx, fy, fz),
fx*fy*fz = P: each prime factor of P, largest first, multiplies the direction whose root grid is
then the smallest (x before y before z on ties), through --init_x/--init_y/--init_z (npx, npy,
npz stay the deck's).
A 2x1x1 deck: 1 rank 2x1x1, 2 ranks 2x2x1, 4 ranks 2x2x2, 8 ranks 4x2x2, 3 ranks 2x3x1.
The domain stays the unit cube and the objects keep their unit-cube coordinates, so a larger root
grid is the same domain in smaller blocks: the uniformly coarse part grows P-fold, the blocks
refined around an object's surface grow about as P^(2/3) (its area in blocks). Blocks per stage
for 1, 2, 4, 8 ranks: expanding_sphere-ci 56, 77, 103, 149; moving_sphere-ci (30 timesteps) 183,
286, 418, 689; two_spheres-ci (30 timesteps) 1978, 3483, 4973, 8835. So the work per rank falls
with P: summary.csv's blocks_per_rank shows it, and work_efficiency (block-stages per
second per rank against the smallest rank count) is the efficiency per unit of work. Efficiency
is T(base)/T(P).

""" + COMMON_EPILOG


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


# Bounds of what a study may ask for: more would never finish (or exceeds what miniamr takes).
MAX_RANKS = 1_000_000
MAX_THREADS = 4096
MAX_REPS = 1000


def positive_list(text, what, most):
    """'1,2,4' -> [1, 2, 4], each at most `most`; anything else is a usage error."""
    items = [t.strip() for t in text.split(",")]
    if not text.strip():
        raise UsageError(f"--{what} is empty: give a comma-separated list such as 1,2")
    values = []
    for t in items:
        if not t.isdigit() or int(t) < 1:
            raise UsageError(f"--{what} {text[:60]!r}: {t[:20]!r} is not a positive integer")
        if int(t) > most:
            raise UsageError(f"--{what} {text[:60]!r}: {t[:20]} is more than {most}")
        values.append(int(t))
    if len(set(values)) != len(values):
        raise UsageError(f"--{what} {text!r} lists a value twice")
    return values


def add_sweep(sub, name, help_text, epilog):
    p = sub.add_parser(name, help=help_text, description=help_text, epilog=epilog,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("deck", help="miniamr deck (key = value lines)")
    p.add_argument("--ranks", required=True, help="comma-separated MPI rank counts, e.g. 1,2,4")
    p.add_argument("--threads", default="1",
                   help="comma-separated threads per rank (default 1); points are ranks x threads")
    p.add_argument("--variants", default="static,dynamic",
                   help="comma-separated RUNTIME[@options] (default static,dynamic)")
    p.add_argument("--reps", type=int, default=3, help="repetitions (default 3)")
    p.add_argument("--extra", default="",
                   help="miniamr options added to every run, one string (a lone option needs "
                        "the = form: --extra=--kokkos)")
    p.add_argument("--out", help="results folder (created); required unless --dry-run or "
                                 "--emit-slurm")
    p.add_argument("--miniamr", help="miniamr executable (default: build/miniamr of this "
                                     "repository, else miniamr on PATH)")
    p.add_argument("--launcher", choices=runner.LAUNCHERS, default="mpirun",
                   help="mpirun -np P (threaded ranks: --map-by slot:PE=T), srun -n P -c T "
                        "--cpu-bind=cores inside an allocation, or simulate: P simulated ranks "
                        "of the simulation build on --platform (tools/miniamr-simulate) "
                        "(default mpirun)")
    p.add_argument("--platform", help="with --launcher simulate: the SimGrid platform "
                                      "(platforms/*.xml)")
    p.add_argument("--calibration", default=os.path.join(REPO, "platforms", "calibration.yaml"),
                   help="with --launcher simulate: the compute calibration (default "
                        "platforms/calibration.yaml)")
    p.add_argument("--oversubscribe", action="store_true",
                   help="allow more ranks x threads than cores (timings not meaningful; rows "
                        "marked 'oversubscribed')")
    p.add_argument("--reference", action="store_true",
                   help="add the reference miniAMR as variant 'reference'")
    p.add_argument("--reference-dir", default=reference.DEFAULT_DIR,
                   help="where the reference is built (default <repo>/build/reference)")
    p.add_argument("--reference-tarball", default=reference.DEFAULT_TARBALL,
                   help=f"reference source tarball (default {reference.DEFAULT_TARBALL})")
    p.add_argument("--reference-max-blocks", type=int,
                   help="the reference's --max_blocks per rank at every point (default: scaled, "
                        "see below)")
    p.add_argument("--resume", action="store_true",
                   help="continue the study in --out: runs with status ok in runs.csv are kept "
                        "and skipped")
    p.add_argument("--timeout", type=float, help="seconds one run may take (default: no limit)")
    p.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")
    p.add_argument("--emit-slurm", metavar="DIR",
                   help="write the study as Slurm batch scripts into DIR instead of running it")
    p.add_argument("--slurm-time", default="01:00:00",
                   help="#SBATCH --time of each point's job (default 01:00:00)")
    p.add_argument("--slurm-option", action="append", default=[], metavar="OPT",
                   help="one more #SBATCH line, e.g. --slurm-option=--partition=batch "
                        "(repeatable)")
    return p


def make_parser():
    parser = Parser(prog="miniamr-study", description=DESCRIPTION,
                    formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command",
                                metavar="{strong,weak,compare,collect,table,balancer}")
    sub.required = True
    add_sweep(sub, "strong", "strong scaling: the same deck over the rank counts "
              "(efficiency T(base)*P(base)/(P*T(P)))", COMMON_EPILOG)
    add_sweep(sub, "weak", "weak scaling: the deck's root grid grows with the rank count",
              WEAK_EPILOG)
    add_sweep(sub, "compare", "runtimes and options against each other on one deck",
              COMMON_EPILOG)
    c = sub.add_parser("collect", help="outputs of an --emit-slurm study whose jobs have run",
                       description="Reads DIR/runs/*/*/rep*/ of an --emit-slurm study and writes "
                                   "runs.csv, summary.csv and the plots.")
    c.add_argument("dir", help="the --emit-slurm folder")
    c.add_argument("--out", help="results folder (default: DIR)")
    t = sub.add_parser("table", help="a study's figures as Markdown (machine, date, commit, "
                       "command)", description=table.__doc__)
    t.add_argument("dir", help="a study's --out folder")
    t.add_argument("--into", metavar="FILE", help="replace FILE's figures block with the table")
    b = sub.add_parser("balancer", help="what the dynamic runtime's balancer did, from an "
                       "--lb_log file", description=balancer_log.__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    b.add_argument("log", help="a file written by miniamr --lb_log")
    b.add_argument("--plot", metavar="PNG", help="also plot shares, work held and imbalance")
    return parser


def default_miniamr(launcher="mpirun"):
    if launcher == "simulate":
        return os.path.join(REPO, "build-smpi", "miniamr")
    built = os.path.join(REPO, "build", "miniamr")
    if os.path.exists(built):
        return built
    return shutil.which("miniamr") or built


def first_error_line(run_dir):
    """': <first line of the run's stderr>', or '' when it wrote none."""
    try:
        with open(os.path.join(run_dir, "stderr.txt"), errors="replace") as f:
            line = next((l.strip() for l in f if l.strip()), "")
    except OSError:
        return ""
    return f": {line[:200]}" if line else ""


def finish(out, rows, kind, info, log):
    """summary.csv, plots and the checks, from every row of the study."""
    table, stats = results.summarize(rows, kind)
    results.write_rows(os.path.join(out, "summary.csv"), table, results.SUMMARY_COLUMNS)
    info = dict(info, oversubscribed=any(r["status"] == "oversubscribed" for r in rows))
    from . import plots
    files = plots.make_plots(out, rows, stats, kind, info)
    log("")
    log(results.text_table(stats))
    log("")
    log(f"wrote {os.path.join(out, 'runs.csv')}, {os.path.join(out, 'summary.csv')}" +
        "".join(f", {f}" for f in files))
    for w in results.mesh_warnings(rows):
        print(f"miniamr-study: warning: {w}", file=sys.stderr)
    problems = results.digest_problems(rows)
    bad = [r for r in rows if not results.finished(r)]
    if bad:
        problems.append(f"{len(bad)} run(s) did not finish: " + "; ".join(
            f"{r['point']} {r['variant']} rep {r['rep']} ({r['error']}"
            f"{first_error_line(os.path.join(out, r['run_dir']))}, see "
            f"{os.path.join(out, r['run_dir'])})" for r in bad[:5]))
    if problems:
        raise StudyFailure("\n".join(problems))
    groups = {r["digest_group"] for r in rows if r["runtime"] != "reference" and r["digest_group"]}
    if groups:
        log(f"field_digest equal within each of the {len(groups)} group(s) of runs that must "
            f"agree: {'; '.join(sorted(groups))}")


def simulation_of(a):
    """{name, platform, calibration} of a --launcher simulate study (None otherwise); the
    platform and calibration are checked here, before anything runs."""
    if a.launcher != "simulate":
        if a.platform:
            raise UsageError("--platform is the platform of --launcher simulate")
        return None
    if a.emit_slurm:
        raise UsageError("--launcher simulate runs here: it cannot be --emit-slurm'ed")
    if a.reference:
        raise UsageError("--reference cannot be simulated (only miniamr has a simulation build)")
    if a.oversubscribe:
        raise UsageError("--oversubscribe means nothing to a simulation: every simulated rank "
                         "has a core of the platform")
    if not a.platform:
        raise UsageError("--launcher simulate needs --platform FILE (platforms/*.xml)")
    platform = os.path.abspath(a.platform)
    calibration = os.path.abspath(a.calibration)
    check = subprocess.run([sys.executable, runner.SIMULATE, "--check", "--np", "1", "--platform",
                            platform, "--calibration", calibration], capture_output=True,
                           text=True)
    if check.returncode != 0:
        raise UsageError(check.stderr.strip().removeprefix("miniamr-simulate: error: "))
    return {"name": check.stdout.strip(), "platform": platform, "calibration": calibration}


def sweep(a, log):
    if not os.path.exists(a.deck):
        raise UsageError(f"deck {a.deck} not found")
    if not 1 <= a.reps <= MAX_REPS:
        raise UsageError(f"--reps {a.reps}: needs 1 to {MAX_REPS}")
    if a.timeout is not None and not (math.isfinite(a.timeout) and a.timeout > 0):
        raise UsageError(f"--timeout {a.timeout}: needs a positive number of seconds")
    ranks = positive_list(a.ranks, "ranks", MAX_RANKS)
    threads = positive_list(a.threads, "threads", MAX_THREADS)
    variants = parse_variants(a.variants, a.reference)
    try:
        extra = shlex.split(a.extra)
    except ValueError as e:
        raise UsageError(f"--extra {a.extra!r}: {e}") from None
    for name, _ in parse_options(extra):
        if name in ("runtime", "threads"):
            raise UsageError(f"--extra: --{name} comes from the variants and --threads")
    if not a.out and not a.dry_run and not a.emit_slurm:
        raise UsageError("--out is required (or --dry-run, or --emit-slurm DIR)")
    if a.out:
        check_output_folder(a.out, "--out")
        if not a.resume and os.path.isdir(a.out) and os.listdir(a.out) and \
                not os.path.exists(os.path.join(a.out, "runs.csv")):
            raise UsageError(f"--out {a.out}: a folder with other files in it and no study; give "
                             f"a new or empty folder")
    if a.emit_slurm:
        check_output_folder(a.emit_slurm, "--emit-slurm")
    deck = os.path.abspath(a.deck)
    config = read_deck(deck)
    simulation = simulation_of(a)
    miniamr = os.path.abspath(a.miniamr) if a.miniamr else default_miniamr(a.launcher)
    local = not a.dry_run and not a.emit_slurm
    if local and any(not v.is_reference for v in variants) and not os.access(miniamr, os.X_OK):
        raise UsageError(f"no executable miniamr at {miniamr} (build it, or pass --miniamr)")
    if local and not simulation and shutil.which(a.launcher) is None:
        raise UsageError(f"{a.launcher} is not on PATH")
    if local and simulation and shutil.which("smpirun") is None:
        raise UsageError("--launcher simulate needs SimGrid's smpirun (bash tools/bootstrap.sh "
                         "simulate installs it)")
    has_ref = any(v.is_reference for v in variants)
    if a.emit_slurm:
        deck_copy = os.path.join(os.path.abspath(a.emit_slurm), "deck", os.path.basename(deck))
        ref_exe = reference.executable(os.path.join(a.emit_slurm, "reference"))
    else:
        deck_copy, ref_exe = deck, reference.executable(a.reference_dir)
    cores = runner.usable_cores() if a.launcher == "mpirun" and not a.emit_slurm else None
    if simulation:
        # The platform's cores, not this machine's, bound the ranks (miniamr-simulate checks).
        cores = None
    plan = planning.build_plan(a.command, deck_copy, config, variants, ranks, threads, a.reps,
                               extra, miniamr, ref_exe if has_ref else None,
                               a.reference_max_blocks, cores, a.oversubscribe)
    # After the plan, so that a point the reference cannot run is named first.
    if has_ref and not os.path.isfile(a.reference_tarball):
        raise UsageError(reference.missing_tarball(a.reference_tarball))
    info = {"deck": os.path.basename(deck), "deck_path": deck, "extra": a.extra,
            "reps": a.reps, "host": socket.gethostname(), "kind": a.command,
            "miniamr": miniamr, "launcher": a.launcher}
    if simulation:
        info.update(host=f"{simulation['name']} (simulated)", simulated=simulation["name"],
                    platform=simulation["platform"], calibration=simulation["calibration"])
    for line in planning.growth_note(a.command, config, extra, ranks) + plan.notes:
        log(line)
    for w in plan.warnings:
        print(f"miniamr-study: warning: {w}", file=sys.stderr)

    if a.emit_slurm:
        os.makedirs(os.path.dirname(deck_copy), exist_ok=True)
        shutil.copy2(deck, deck_copy)
        scripts = slurm.emit(plan, a.emit_slurm, dict(info, host=""), a.slurm_time,
                             a.slurm_option, a.reference_tarball if has_ref else None)
        log(f"wrote {len(scripts)} batch script(s) for {len(plan.runs)} runs in "
            f"{os.path.abspath(a.emit_slurm)}: {', '.join(scripts)}; submit with "
            f"{os.path.join(os.path.abspath(a.emit_slurm), 'submit.sh')}")
        return 0

    previous = []
    csv_path = os.path.join(a.out, "runs.csv") if a.out else None
    if csv_path and os.path.exists(csv_path):
        if not a.resume:
            raise UsageError(f"{csv_path} exists: add --resume to continue that study, or choose "
                             f"another --out")
        previous = results.read_rows(csv_path)
        try:
            with open(os.path.join(a.out, "study.json")) as f:
                old = json.load(f)
        except (OSError, ValueError):
            old = {}
        for key in ("kind", "deck_path", "extra"):
            if old.get(key) != info[key]:
                raise UsageError(f"--resume: {a.out} holds a study with {key} {old.get(key)!r}, "
                                 f"not {info[key]!r}")
    if a.dry_run:
        done = {results.row_key(r) for r in previous if results.finished(r)}
        todo = [r for r in plan.runs if tuple(map(str, r.key)) not in done]
        if has_ref and not os.path.exists(ref_exe):
            log("# the reference would be built first: (cd " +
                shlex.quote(os.path.abspath(a.reference_dir)) + " && " + " && ".join(
                    shlex.join(c) for c in reference.build_commands(
                        os.path.abspath(a.reference_tarball))) + ")")
        log(f"# {len(todo)} run(s)" + (f", {len(plan.runs) - len(todo)} already finished"
                                       if previous else ""))
        for r in todo:
            log(runner.dry_run_line(r, a.launcher, a.oversubscribe, simulation))
        return 0

    if has_ref:
        reference.ensure(a.reference_tarball, a.reference_dir, log)
    os.makedirs(a.out, exist_ok=True)
    if previous:
        # Failed rows go: their runs run again.
        results.write_rows(csv_path, [r for r in previous if results.finished(r)])
    with open(os.path.join(a.out, "study.json"), "w") as f:
        json.dump(dict(info, command=sys.argv[1:], machine=machine.describe(miniamr)), f, indent=1)
    log(f"{a.command} study of {info['deck']}: {len(plan.runs)} runs "
        f"({a.reps} repetition(s) x {len(ranks) * len(threads)} point(s) x {len(variants)} "
        f"variant(s)) on {info['host']}, results in {a.out}")
    try:
        runner.run_study(plan, a.out, a.launcher, a.oversubscribe, previous, a.timeout, log,
                         simulation)
    except KeyboardInterrupt:
        raise StudyFailure(f"interrupted: the finished runs are in {csv_path}; continue with "
                           f"--resume") from None
    machine.measure_again(os.path.join(a.out, "study.json"), miniamr)
    rows = results.read_rows(csv_path)
    finish(a.out, rows, a.command, info, log)
    return 0


def collect(a, log):
    if a.out:
        check_output_folder(a.out, "--out")
    info, rows = slurm.collect(a.dir)
    out = a.out or a.dir
    os.makedirs(out, exist_ok=True)
    results.write_rows(os.path.join(out, "runs.csv"), rows)
    hosts = sorted({r["host"] for r in rows if r["host"]})
    info = dict(info, host=", ".join(hosts[:2]) + (" ..." if len(hosts) > 2 else "") or "?")
    missing = sum(r["status"] == "missing" for r in rows)
    log(f"collected {len(rows) - missing} of {len(rows)} runs from {a.dir}")
    finish(out, rows, info["kind"], info, log)
    return 0


def _actions(parser):
    """Every option of `parser` and of its subcommands."""
    for action in parser._actions:
        yield action
        if isinstance(action.choices, dict):
            for sub in action.choices.values():
                yield from _actions(sub)


def joined_values(argv, parser):
    """argv with each option's value that starts with '-' joined to it ("--ranks -1,2" becomes
    "--ranks=-1,2", "--extra --kokkos" becomes "--extra=--kokkos"), which argparse would take for
    an option of its own and report as a missing value; a word that is one of the tool's own
    options stays an option."""
    ours = {o for a in _actions(parser) for o in a.option_strings}
    takes_value = {o for a in _actions(parser) if a.nargs != 0 for o in a.option_strings}
    out, i = [], 0
    while i < len(argv):
        word = argv[i]
        if word in takes_value and i + 1 < len(argv) and argv[i + 1].startswith("-") and \
                argv[i + 1].split("=", 1)[0] not in ours:
            out.append(f"{word}={argv[i + 1]}")
            i += 2
        else:
            out.append(word)
            i += 1
    return out


def main(argv=None):
    def log(text):
        print(text, flush=True)
    try:
        parser = make_parser()
        a = parser.parse_args(joined_values(sys.argv[1:] if argv is None else argv, parser))
        if a.command == "collect":
            return collect(a, log)
        if a.command == "balancer":
            header, entries = balancer_log.read(a.log)
            rows = balancer_log.rows(entries)
            log(balancer_log.text(a.log, header, entries, rows))
            if a.plot:
                balancer_log.plot(header, rows, a.plot)
            return 0
        if a.command == "table":
            block = table.markdown(a.dir)
            if a.into:
                table.put_into(a.into, block)
            else:
                log(block)
            return 0
        return sweep(a, log)
    except UsageError as e:
        print(f"miniamr-study: error: {e}", file=sys.stderr)
        return 2
    except StudyFailure as e:
        print(f"miniamr-study: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:  # a file or folder given that cannot be read or written
        where = f"{e.filename}: " if e.filename else ""
        print(f"miniamr-study: error: {where}{e.strerror or e}", file=sys.stderr)
        return 2

"""The study as Slurm batch scripts (one per point, its variants and repetitions alternating in
one allocation), and `collect`, which turns their run folders into the local study's outputs."""
import json
import os
import shlex
import shutil

from . import UsageError, reference, results
from .runner import launch_prefix

RUN_FUNCTION = r'''# run FOLDER COMMAND...: COMMAND in FOLDER (results.yaml lands there), timed
# around srun.
run() {
  local dir="$study/$1"; shift
  mkdir -p "$dir"
  rm -f "$dir/results.yaml" "$dir/timing.txt"
  printf '%s\n' "$*" > "$dir/command.txt"
  local started t0 t1 rc
  started=$(date -Iseconds)
  t0=$(date +%s.%N)
  (cd "$dir" && "$@" > stdout.txt 2> stderr.txt)
  rc=$?
  t1=$(date +%s.%N)
  printf 'wall_s %s\nexit_status %s\nhost %s\nstarted %s\n' \
    "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')" "$rc" "$(hostname)" \
    "$started" > "$dir/timing.txt"
  echo "$(date -Iseconds) ${dir#$study/}: exit $rc"
}
'''


def emit(plan, study_dir, info, time_limit, sbatch_options, reference_tarball=None):
    """Writes <dir>/<point>.sbatch, submit.sh, README.md, study.json and each run's run.json."""
    study_dir = os.path.abspath(study_dir)
    os.makedirs(os.path.join(study_dir, "logs"), exist_ok=True)
    points = list(dict.fromkeys(r.point for r in plan.runs))
    scripts = []
    for point in points:
        runs = [r for r in plan.runs if r.point == point]
        ranks = max(r.ranks for r in runs)
        threads = max(r.threads for r in runs)
        lines = ["#!/bin/bash",
                 f"#SBATCH --job-name=miniamr-{plan.kind}-{point}",
                 f"#SBATCH --ntasks={ranks}",
                 f"#SBATCH --cpus-per-task={threads}",
                 f"#SBATCH --time={time_limit}",
                 # Timings need the nodes to themselves.
                 "#SBATCH --exclusive",
                 f"#SBATCH --output={study_dir}/logs/{point}-%j.out"]
        lines += [f"#SBATCH {opt}" for opt in sbatch_options]
        lines += [f"# miniamr-study {plan.kind} {plan.deck}, point {point}: "
                  f"{len(runs)} runs, variants alternating within each repetition",
                  "set -u", f"study={shlex.quote(study_dir)}",
                  f"export OMP_NUM_THREADS={threads}", "", RUN_FUNCTION]
        for r in runs:
            desc = r.describe()
            cmd = launch_prefix("srun", r.ranks, r.threads) + r.argv
            desc.update({"command": shlex.join(cmd), "rel_dir": r.rel_dir})
            run_dir = os.path.join(study_dir, r.rel_dir)
            os.makedirs(run_dir, exist_ok=True)
            with open(os.path.join(run_dir, "run.json"), "w") as f:
                json.dump(desc, f, indent=1)
            lines.append(f"run {shlex.quote(r.rel_dir)} {shlex.join(cmd)}")
        path = os.path.join(study_dir, f"{point}.sbatch")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        os.chmod(path, 0o755)
        scripts.append(os.path.basename(path))
    submit = ["#!/bin/bash",
              "# Builds the reference if the study has it, then submits every point.",
              "set -eu", 'cd "$(dirname "$0")"']
    if reference_tarball:
        ref_dir = os.path.join(study_dir, "reference")
        os.makedirs(ref_dir, exist_ok=True)
        shutil.copy2(reference_tarball, os.path.join(ref_dir, os.path.basename(reference_tarball)))
        tar, make = reference.build_commands(os.path.basename(reference_tarball), "JOBS")
        build = ["cd reference", shlex.join(tar),
                 shlex.join(make).replace("-jJOBS", '-j"$(nproc)"')]
        submit += ["if [ ! -x reference/miniAMR-1.7/ref/miniAMR.x ]; then",
                   f"  ({' && '.join(build)}) > reference/build.log 2>&1 || "
                   "{ echo 'the reference did not build: see reference/build.log' >&2; exit 1; }",
                   "fi"]
    submit += [f"sbatch {s}" for s in scripts]
    with open(os.path.join(study_dir, "submit.sh"), "w") as f:
        f.write("\n".join(submit) + "\n")
    os.chmod(os.path.join(study_dir, "submit.sh"), 0o755)
    with open(os.path.join(study_dir, "study.json"), "w") as f:
        json.dump(dict(info, kind=plan.kind, runs=[r.rel_dir for r in plan.runs],
                       scripts=scripts, notes=plan.notes), f, indent=1)
    with open(os.path.join(study_dir, "README.md"), "w") as f:
        f.write(README.format(kind=plan.kind, deck=plan.deck, n=len(plan.runs),
                              scripts=", ".join(scripts), dir=study_dir))
    return scripts


README = """# miniamr-study {kind} on {deck}: Slurm batch scripts

{n} runs in {scripts}: one script per point (ranks x threads), each running its variants
alternately within every repetition in one allocation (`--exclusive`), through srun.

    bash submit.sh            # builds the reference first if the study has it, then sbatch
    squeue -u $USER

Each run writes into `runs/<point>/<variant>/rep<k>/`: `run.json` (what it is, written now),
`command.txt`, `stdout.txt`, `stderr.txt`, the program's own files (`results.yaml`) and
`timing.txt` (wall seconds around srun, exit status, host, start). Job logs are in `logs/`.
A script run again re-runs its runs. When the jobs are done:

    miniamr-study collect {dir} --out RESULTS

writes RESULTS/runs.csv, summary.csv and the plots, as a local study does.
"""


def _timing(path):
    values = {}
    with open(path) as f:
        for line in f:
            key, _, value = line.strip().partition(" ")
            values[key] = value
    return values


def collect(study_dir):
    """runs.csv rows of an emitted study, in its order; runs without timing.txt are 'missing'."""
    try:
        with open(os.path.join(study_dir, "study.json")) as f:
            info = json.load(f)
    except (OSError, ValueError) as e:
        raise UsageError(f"{study_dir} is not a study written by --emit-slurm ({e})") from None
    rows = []
    for rel in info["runs"]:
        run_dir = os.path.join(study_dir, rel)
        with open(os.path.join(run_dir, "run.json")) as f:
            desc = json.load(f)
        timing_path = os.path.join(run_dir, "timing.txt")
        if not os.path.exists(timing_path):
            row = {c: "" for c in results.RUN_COLUMNS}
            row.update({k: v for k, v in desc.items() if k in row})
            row.update({"status": "missing", "error": "no timing.txt (not run yet?)",
                        "run_dir": os.path.abspath(run_dir)})
            rows.append(row)
            continue
        t = _timing(timing_path)
        status = int(t["exit_status"]) if t.get("exit_status", "").lstrip("-").isdigit() else \
            t.get("exit_status")
        rows.append(results.row_for(desc, run_dir, os.path.abspath(run_dir),
                                    float(t.get("wall_s", "nan")), status, t.get("host", ""),
                                    t.get("started", ""), desc["command"]))
    return info, rows

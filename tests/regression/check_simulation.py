#!/usr/bin/env python3
"""The simulation build on 64 simulated ranks (SimGrid SMPI), and tools/miniamr-simulate's
checks of its input.

- inputs (always, SimGrid or not): a missing, malformed or foreign platform file, a platform
  with fewer cores than ranks, a missing or malformed calibration each end miniamr-simulate
  with exit 2 and one message naming the problem, before anything runs; a vm.max_map_count
  too low for the rank count is warned about, with the fix; validate_simulation --calibrate runs
  the calibration first;
- 64 ranks (skipped, and said so, without smpirun or the simulation build): the deck on the
  4096-core cluster platform with each runtime finishes, says it is simulated on that platform
  (stdout and results.yaml: simulated, platform, compute model, no checksum or digest), ran
  under the allocator asked for (results.yaml host_allocator: jemalloc preloaded by default,
  glibc with --allocator system), and
  ends with the same mesh, block for block per level, as a real 2-rank run: refinement, the
  partition and the messages ran for real; every phase's time lies between 0 and the run's
  (all on the simulated clock);
- the calibration is what prices the kernels: the same run with every cost a thousand times larger
  adds 999 times the modelled compute time, and costs that grow with the working set are
  charged at each rank's own;
- a modelled sweep is priced at the working set of its lane's variables, as a real one streams
  through them: with costs growing with the working set, --sweep_vars 1 and --sweep_vars 8 (how
  many variables a padded sweep takes at a time, which no priced kernel does) cost the same;
- priced kernels (--compute model) keep no block storage of each rank's own: the simulator's
  peak memory is below that of the same run with the real kernels by at least half of the
  blocks' storage;
- miniamr-study --launcher simulate writes runs.csv rows marked simulated, whose wall_s is the
  simulated time.

  check_simulation.py --miniamr BIN --simulation-build DIR --deck DECK [--inputs-only]
"""
import csv
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

from mpi_env import mpi_env, script_arguments, verdict

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SIMULATE = os.path.join(REPO, "tools", "miniamr-simulate")
STUDY = os.path.join(REPO, "tools", "miniamr-study")
CLUSTER = os.path.join(REPO, "platforms", "cluster_fat_tree.xml")
CALIBRATION = os.path.join(REPO, "platforms", "calibration.yaml")
RANKS = 64
STEPS = 10
STORAGE_VARS = 8
SKIP = 77  # ctest's SKIP_RETURN_CODE


def simulate(args, cwd, **kw):
    return subprocess.run([sys.executable, SIMULATE] + args, cwd=cwd, capture_output=True,
                          text=True, timeout=600, **kw)


def input_failures(tmp, deck):
    def write(name, text):
        path = os.path.join(tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path
    bad_xml = write("bad.xml", "<platform version='4.1'><zone id='z'")
    foreign = write("foreign.xml", "<?xml version='1.0'?><html><body/></html>")
    small = write("small.xml", "<?xml version='1.0'?><platform version='4.1'><zone id='two' "
                               "routing='Full'><host id='a' speed='1Gf'/><host id='b' "
                               "speed='1Gf'/></zone></platform>")
    bad_cal = write("bad_cal.yaml", "seconds_per_update: [1, 2\n")
    no_map = write("no_map.yaml", "machine: x\n")
    cases = [
        (["--platform", os.path.join(tmp, "none.xml")], "none.xml: no such file"),
        (["--platform", bad_xml], "not well-formed XML"),
        (["--platform", foreign], "not a SimGrid platform (the root element is <html>)"),
        (["--platform", small, "--np", "3"], "--np 3: platform two"),
        (["--calibration", os.path.join(tmp, "none.yaml")], "none.yaml: no such file"),
        (["--calibration", bad_cal], "not valid YAML"),
        (["--calibration", no_map], "not a miniamr compute calibration"),
        (["--np", "0"], "--np must be at least 1"),
    ]
    failures = []
    for change, text in cases:
        opts = {"--np": "2", "--platform": CLUSTER, "--calibration": CALIBRATION}
        for k, v in zip(change[::2], change[1::2]):
            opts[k] = v
        args = [x for kv in opts.items() for x in kv] + ["--", deck]
        r = simulate(args, tmp)
        if r.returncode != 2 or r.stderr.count(text) != 1 or "Traceback" in r.stderr:
            failures.append(f"miniamr-simulate {' '.join(change)}: exit {r.returncode}, stderr "
                            f"{r.stderr.strip()[:300]!r}; want exit 2 and {text!r}")
    failures += map_count_failures(tmp)
    return failures


def map_count_failures(tmp):
    """miniamr-simulate warns, naming the fix, when vm.max_map_count looks too low for --np (the
    simulator needs a few mappings per simulated rank), and says nothing when it is high enough."""
    import contextlib
    import importlib.machinery
    import io
    tool = importlib.machinery.SourceFileLoader("miniamr_simulate", SIMULATE).load_module()
    limit = os.path.join(tmp, "max_map_count")
    with open(limit, "w") as f:
        f.write("65530\n")
    failures = []
    for ranks, warned in ((16384, True), (4096, False)):
        said = io.StringIO()
        with contextlib.redirect_stderr(said):
            tool.warn_map_count(ranks, limit)
        if ("sysctl -w vm.max_map_count=" in said.getvalue()) != warned:
            failures.append(f"vm.max_map_count 65530, {ranks} ranks: warning "
                            f"{said.getvalue().strip()!r}, want {'one' if warned else 'none'}")
    return failures


def validate_tool_failures(tmp):
    """tools/validate_simulation.py --calibrate measures the kernels before anything else: with
    no miniamr to measure it stops there, while without it the table is written."""
    tool = os.path.join(REPO, "tools", "validate_simulation.py")
    args = [sys.executable, tool, "--ranks", "", "--miniamr", os.path.join(tmp, "none"),
            "--calibration", os.path.join(tmp, "fresh.yaml"), "--rows",
            os.path.join(tmp, "rows.json"), "--out", os.path.join(tmp, "validation.md")]
    failures = []
    r = subprocess.run(args + ["--calibrate"], capture_output=True, text=True, timeout=60)
    want = "calibrate_compute: error: " + os.path.join(tmp, "none") + " is not an executable miniamr"
    if r.returncode == 0 or want not in r.stderr:
        failures.append(f"validate_simulation --calibrate without a miniamr: exit "
                        f"{r.returncode}, stderr {r.stderr.strip()[-300:]!r}; want {want!r}")
    r = subprocess.run(args, capture_output=True, text=True, timeout=60)
    if r.returncode != 0 or not os.path.exists(os.path.join(tmp, "validation.md")):
        failures.append(f"validate_simulation without --calibrate: exit {r.returncode}, "
                        f"{r.stderr.strip()[-300:]!r}")
    return failures


def levels(results):
    return results.get("final_blocks_per_level") or results.get("final_blocks")


def write_calibration(folder, kind):
    """The shipped calibration reduced to one cost per kernel ("base"), scaled a thousandfold
    ("x1000"), or that cost at 1 byte and 1001 times it at 1e15 bytes ("sized")."""
    with open(CALIBRATION) as f:
        cal = yaml.safe_load(f)
    cal.pop("working_sets", None)
    costs = cal["seconds_per_update"]
    if kind == "x1000":
        costs = {rt: {k: 1000 * v for k, v in c.items()} for rt, c in costs.items()}
        cal["seconds_per_update"] = costs
    if kind == "sized":
        cal["working_sets"] = [
            {"bytes": 1, "seconds_per_update": costs},
            {"bytes": 1e15, "seconds_per_update": {rt: {k: 1001 * v for k, v in c.items()}
                                                   for rt, c in costs.items()}}]
    path = os.path.join(folder, f"{kind}.yaml")
    with open(path, "w") as f:
        yaml.safe_dump(cal, f)
    return path


def simulated_failures(tmp, miniamr_sim, real_miniamr, deck):
    failures = []
    env = mpi_env()
    common = [deck, "--num_tsteps", str(STEPS), "--results", "R.yaml"]
    real_dir = os.path.join(tmp, "real")
    os.makedirs(real_dir)
    real = subprocess.run(["mpirun", "-np", "2", real_miniamr] + common + ["--quiet"],
                          cwd=real_dir, env=env, capture_output=True, text=True, timeout=600)
    if real.returncode != 0:
        return [f"the real 2-rank run failed: {real.stderr[-500:]}"]
    with open(os.path.join(real_dir, "R.yaml")) as f:
        want = yaml.safe_load(f)
    compute = {}
    # "base" and "x1000" charge one cost whatever the working set (the shipped calibration
    # without its working_sets, its costs scaled), so that the modelled time is updates x that
    # cost; "sized" charges from 1 to 1001 times the cost over working sets of 1 byte to 1e15,
    # so it lands in between only if each rank is charged at its own working set; the dynamic
    # run uses the shipped calibration as it is.
    for runtime, kind in (("static", "base"), ("dynamic", "shipped"), ("static", "x1000"),
                          ("static", "sized")):
        name = f"{runtime}-{kind}"
        run_dir = os.path.join(tmp, name)
        os.makedirs(run_dir)
        calibration = CALIBRATION if kind == "shipped" else write_calibration(run_dir, kind)
        # The x1000 run keeps the system's malloc; the others get the preloaded jemalloc.
        allocator = "system" if kind == "x1000" else "jemalloc"
        r = simulate(["--np", str(RANKS), "--platform", CLUSTER, "--calibration", calibration,
                      "--miniamr", miniamr_sim, "--allocator", allocator, "--"] + common +
                     ["--runtime", runtime], run_dir)
        if r.returncode != 0:
            failures.append(f"{name}: exit {r.returncode}: {r.stderr[-800:]}")
            continue
        with open(os.path.join(run_dir, "R.yaml")) as f:
            got = yaml.safe_load(f)
        if "Simulated on platform cluster_fat_tree (SMPI)" not in r.stdout:
            failures.append(f"{name}: the report does not say it was simulated")
        host_allocator = "glibc" if allocator == "system" else "jemalloc"
        for key, value in (("simulated", True), ("platform", "cluster_fat_tree"),
                           ("host_allocator", host_allocator),
                           ("compute", "model"), ("ranks", RANKS), ("field_digest", None),
                           ("final_checksums", None)):
            if got.get(key) != value:
                failures.append(f"{name}: results.yaml {key} is {got.get(key)!r}, want {value!r}")
        if levels(got) != levels(want) or got.get("mesh_history") != want.get("mesh_history"):
            failures.append(f"{name}: mesh {levels(got)} differs from the real run's "
                            f"{levels(want)}")
        if not got.get("total_time_max", 0) > 0:
            failures.append(f"{name}: no simulated time ({got.get('total_time_max')!r})")
        # Every phase on the simulated clock: none negative, none longer than the run (a phase
        # timed on the host's clock in part is either).
        total = got.get("total_time_max", 0)
        for phase in ("compute_time", "total_comm", "gridsum_time", "refine_time",
                      "time_total_load_bal"):
            low, high = got.get(f"{phase}_min"), got.get(f"{phase}_max")
            if low is None or high is None or low < 0 or high > total:
                failures.append(f"{name}: {phase} from {low!r} to {high!r} s on the ranks, "
                                f"outside 0 to the run's {total!r} s")
        compute[name] = (got.get("compute_time_ave", 0), got.get("cell_var_updates", 0))
    if len(compute) == 4:
        # Compute time is the modelled sweeps plus the real code around them, which SMPI times:
        # a thousand times the cost adds 999 times the modelled part, updates x cost per update.
        # The factor is large so that the modelled part outweighs the host-timed code around the
        # sweeps, whose SMPI time varies with the load on the machine running the simulation.
        with open(CALIBRATION) as f:
            per_update = yaml.safe_load(f)["seconds_per_update"]["static"]["stencil7"]
        (base, updates), (x1000, _) = compute["static-base"], compute["static-x1000"]
        modelled = updates / RANKS * per_update
        added = (x1000 - base) / (999 * modelled) if modelled else 0
        if not 0.8 < added < 1.25:
            failures.append(f"a thousand times the calibrated cost added {added:.2f} times 999 "
                            f"times the modelled compute ({compute}, {modelled:.3g} s modelled)")
        # "sized" adds 1000 f times the base cost per update, f = log(bytes) / log(1e15) the
        # place of the rank's working set between the two sizes: from f = 0.26 for 8 kB (one
        # variable of one block) to 0.53 for 1e8 bytes. Charged at no working set it adds none.
        sized = (compute["static-sized"][0] - base) / (1000 * modelled) if modelled else 0
        if not 0.2 < sized < 0.6:
            failures.append(f"costs growing with the working set added {sized:.3g} times 1000 "
                            f"times the modelled compute, want 0.2 to 0.6 ({compute})")
    return failures


def sweep_pass_failures(tmp, miniamr_sim, deck):
    """8 variables in one comm group, priced by costs that grow with the working set: the
    modelled compute must not depend on how many variables a padded sweep takes at a time."""
    compute = {}
    for passes in (1, 8):
        run_dir = os.path.join(tmp, f"passes{passes}")
        os.makedirs(run_dir)
        r = simulate(["--np", str(RANKS), "--platform", CLUSTER, "--calibration",
                      write_calibration(run_dir, "sized"), "--miniamr", miniamr_sim, "--", deck,
                      "--num_tsteps", str(STEPS), "--num_vars", "8", "--comm_vars", "8",
                      "--sweep_vars", str(passes), "--runtime", "static", "--results", "R.yaml"],
                     run_dir)
        if r.returncode != 0:
            return [f"--sweep_vars {passes}: exit {r.returncode}: {r.stderr[-800:]}"]
        with open(os.path.join(run_dir, "R.yaml")) as f:
            compute[passes] = yaml.safe_load(f).get("compute_time_ave", 0)
    # Priced at one variable's working set, the first cost 15% less on the build before.
    if not abs(compute[1] - compute[8]) <= 0.02 * compute[8]:
        return [f"modelled compute {compute[1]:.6g} s with --sweep_vars 1 against {compute[8]:.6g}"
                f" s with 8: a sweep priced at its pass's working set, not its lane's"]
    return []


def peak_mib(stderr):
    """The simulator's peak memory that miniamr-simulate prints last, or None."""
    m = re.search(r"peak memory (\d+) MiB", stderr)
    return int(m.group(1)) if m else None


def storage_failures(tmp, miniamr_sim, deck):
    """Priced kernels read no value, so the simulated ranks share one copy of block storage: the
    simulator holds less than the real kernels' run of the same mesh by at least half of the
    storage its blocks would take (8 variables of 10^3 cells: 64 KiB a block)."""
    failures, peak, blocks = [], {}, {}
    for compute in ("model", "real"):
        run_dir = os.path.join(tmp, f"storage-{compute}")
        os.makedirs(run_dir)
        extra = ["--calibration", CALIBRATION] if compute == "model" else []
        r = simulate(["--np", str(RANKS), "--platform", CLUSTER, "--compute", compute, *extra,
                      "--miniamr", miniamr_sim, "--", deck, "--num_tsteps", str(STEPS),
                      "--nx", "8", "--ny", "8", "--nz", "8", "--num_vars", str(STORAGE_VARS),
                      "--results", "R.yaml"], run_dir)
        if r.returncode != 0:
            return [f"storage-{compute}: exit {r.returncode}: {r.stderr[-800:]}"]
        peak[compute] = peak_mib(r.stderr)
        if peak[compute] is None:
            return [f"storage-{compute}: miniamr-simulate printed no peak memory: {r.stderr[-300:]}"]
        with open(os.path.join(run_dir, "R.yaml")) as f:
            history = yaml.safe_load(f)["mesh_history"]
        blocks[compute] = max(sum(h["blocks_per_level"]) for h in history)
    storage_mib = blocks["real"] * 10**3 * STORAGE_VARS * 8 / 2**20
    if blocks["model"] != blocks["real"]:
        failures.append(f"the storage runs built different meshes ({blocks})")
    if not peak["real"] - peak["model"] > storage_mib / 2:
        failures.append(f"priced kernels held {peak['model']} MiB against the real kernels' "
                        f"{peak['real']} MiB, where {storage_mib:.0f} MiB of block storage "
                        "should be shared")
    return failures


def study_failures(tmp, miniamr_sim, deck):
    out = os.path.join(tmp, "study")
    r = subprocess.run([sys.executable, STUDY, "strong", deck, "--ranks", "4,8", "--reps", "1",
                        "--launcher", "simulate", "--platform", CLUSTER, "--miniamr", miniamr_sim,
                        "--extra", "--num_tsteps 4", "--out", out], capture_output=True,
                       text=True, timeout=600)
    if r.returncode != 0:
        return [f"miniamr-study --launcher simulate: exit {r.returncode}: {r.stderr[-800:]}"]
    with open(os.path.join(out, "runs.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    failures = []
    if len(rows) != 4:
        failures.append(f"study: {len(rows)} rows, want 4")
    for row in rows:
        with open(os.path.join(out, row["run_dir"], "results.yaml")) as f:
            res = yaml.safe_load(f)
        if row["simulated"] != "cluster_fat_tree" or \
                abs(float(row["wall_s"]) - res["total_time_max"]) > 1e-6 or \
                not float(row["host_wall_s"]) > 0:
            failures.append(f"study row {row['point']} {row['variant']}: simulated "
                            f"{row['simulated']!r}, wall_s {row['wall_s']} (simulated time "
                            f"{res['total_time_max']}), host_wall_s {row['host_wall_s']}")
    return failures


def main():
    ap = script_arguments()
    ap.add_argument("--simulation-build", required=True, help="the -DMINIAMR_SIMGRID=ON build")
    ap.add_argument("--inputs-only", action="store_true")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="miniamr-simulation-") as tmp:
        failures = input_failures(tmp, a.deck) + validate_tool_failures(tmp)
        if a.inputs_only:
            return verdict(failures, "miniamr-simulate refuses bad platforms, calibrations and "
                                     "rank counts")
        miniamr_sim = os.path.join(a.simulation_build, "miniamr")
        why = None
        if shutil.which("smpirun") is None:
            why = "SimGrid is not installed (no smpirun; bash tools/bootstrap.sh test installs it)"
        elif not os.path.exists(miniamr_sim):
            why = (f"no simulation build at {miniamr_sim} (cmake -S . -B build-smpi "
                   f"-DMINIAMR_SIMGRID=ON && cmake --build build-smpi --target miniamr)")
        if why:
            print(f"SKIP 64 simulated ranks: {why}")
            return SKIP if not failures else verdict(failures, "")
        failures += simulated_failures(tmp, miniamr_sim, a.miniamr, a.deck)
        failures += sweep_pass_failures(tmp, miniamr_sim, a.deck)
        failures += storage_failures(tmp, miniamr_sim, a.deck)
        failures += study_failures(tmp, miniamr_sim, a.deck)
    return verdict(failures, f"{RANKS} simulated ranks of both runtimes on cluster_fat_tree: "
                             "the real run's mesh, labelled simulated, priced by the calibration")


if __name__ == "__main__":
    sys.exit(main())

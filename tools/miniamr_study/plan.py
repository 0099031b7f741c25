"""A study's points and runs: which command each (point, variant, repetition) runs."""
import math
import os
from dataclasses import dataclass, field

from . import UsageError
from .deck import (apply_options, grid_text, reference_args, reference_max_blocks,
                   scaled_max_blocks, weak_growth)

# miniamr's report bits: 1 results.yaml, 4 the stdout report.
REPORT_PERF = "5"


@dataclass
class Run:
    """One measurement; `describe()` is what runs.csv and a Slurm run folder record of it."""
    study: str
    deck: str
    point: str
    variant: object
    rep: int
    ranks: int
    threads: int
    argv: list          # the program and its options, without the launcher
    root_grid: str
    rank_grid: str      # the reference's npx x npy x npz ('' for miniamr)
    digest_group: str   # runs with the same group must give the same field_digest
    oversubscribed: bool = False

    @property
    def key(self):
        return (self.point, self.variant.label, self.rep)

    @property
    def rel_dir(self):
        return os.path.join("runs", self.point, self.variant.slug, f"rep{self.rep}")

    def describe(self):
        return {"study": self.study, "deck": self.deck, "point": self.point,
                "variant": self.variant.label, "runtime": self.variant.runtime,
                "ranks": self.ranks, "threads": self.threads, "rep": self.rep,
                "root_grid": self.root_grid, "rank_grid": self.rank_grid,
                "digest_group": self.digest_group, "oversubscribed": self.oversubscribed}


@dataclass
class Plan:
    kind: str
    deck: str
    runs: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    warnings: list = field(default_factory=list)


def point_name(ranks, threads):
    return f"p{ranks}t{threads}"


def build_plan(kind, deck_path, deck_config, variants, ranks_list, threads_list, reps, extra,
               miniamr, reference_exe=None, reference_blocks=None, cores=None,
               oversubscribe=False):
    """Runs in the order they are measured: for rep, for point, for variant (the variants rotated
    by one each repetition). `cores` None skips the core check (Slurm decides)."""
    deck_name = os.path.basename(deck_path)
    plan = Plan(kind, deck_name)
    base = apply_options(deck_config, extra)
    dropped = set()
    points = [(r, t) for r in sorted(ranks_list) for t in sorted(threads_list)]
    per_point = {}
    for ranks, threads in points:
        name = point_name(ranks, threads)
        for v in variants:
            config = apply_options(base, list(v.options))
            root = config.root_grid()
            growth = weak_growth(root, ranks) if kind == "weak" else (1, 1, 1)
            grown = config.copy()
            for key, i, g in zip(("init_x", "init_y", "init_z"), config.init(), growth):
                grown.options[key] = str(i * g)
            used_threads = 1 if v.is_reference else threads
            oversub = cores is not None and ranks * used_threads > cores
            if oversub and not oversubscribe:
                raise UsageError(
                    f"point {name} ({v.label}) needs {ranks * used_threads} cores ({ranks} ranks x "
                    f"{used_threads} threads), the machine has {cores}; add --oversubscribe to run "
                    f"it anyway (its timings are not meaningful)")
            if oversub:
                msg = (f"{name} ({v.label}) runs {ranks * used_threads} ranks x threads on {cores} "
                       f"cores: oversubscribed, timings are not meaningful (rows marked "
                       f"'oversubscribed')")
                if msg not in plan.warnings:
                    plan.warnings.append(msg)
            if v.is_reference:
                if reference_exe is None:
                    raise UsageError("the reference variant needs the reference (--reference)")
                pool = reference_blocks or reference_max_blocks(config, ranks, growth)
                args, grid, left_out = reference_args(grown, ranks, pool)
                dropped.update(left_out)
                argv = [reference_exe] + args
                rank_grid, group = grid_text(grid), ""
            else:
                argv = [miniamr, deck_path, "--runtime", v.runtime, "--threads", str(threads),
                        "--report_perf", REPORT_PERF] + list(extra) + list(v.options)
                if kind == "weak":
                    argv += ["--init_x", grown.options["init_x"], "--init_y",
                             grown.options["init_y"], "--init_z", grown.options["init_z"]]
                # A deck's max_blocks is per rank for its own rank count: keep the total.
                cap = scaled_max_blocks(config, ranks, growth)
                if cap is not None and str(cap) != str(config.options["max_blocks"]):
                    argv += ["--max_blocks", str(cap)]
                rank_grid = ""
                group = f"root {grid_text(grown.root_grid())}"
                if v.numerics():
                    group += f" with {v.numerics()}"
            per_point[(name, v.label)] = (ranks, used_threads, argv, grid_text(grown.root_grid()),
                                          rank_grid, group, oversub)
    for rep in range(1, reps + 1):
        # Each repetition starts one variant later, so that no variant always runs right after
        # the same one: a run can be slowed by the one before it (on a 2-core VM, the second run
        # after the reference's was 15% slower than the first, whichever runtime it was).
        shift = (rep - 1) % len(variants)
        order = list(variants[shift:]) + list(variants[:shift])
        for ranks, threads in points:
            name = point_name(ranks, threads)
            for v in order:
                r, t, argv, root, rank_grid, group, oversub = per_point[(name, v.label)]
                plan.runs.append(Run(kind, deck_name, name, v, rep, r, t, argv, root, rank_grid,
                                     group, oversub))
    if dropped:
        plan.notes.append("not passed to the reference (miniamr only): " +
                          ", ".join(f"--{d}" for d in sorted(dropped)))
    return plan


def growth_note(kind, deck_config, extra, ranks_list):
    """One line per rank count saying the root grid it runs (weak scaling)."""
    if kind != "weak":
        return []
    config = apply_options(deck_config, extra)
    root = config.root_grid()
    lines = []
    for ranks in sorted(ranks_list):
        g = weak_growth(root, ranks)
        lines.append(f"weak scaling: {ranks} rank(s) run the root grid "
                     f"{grid_text(tuple(r * f for r, f in zip(root, g)))} "
                     f"(the deck's {grid_text(root)} times {grid_text(g)}), "
                     f"{math.prod(root) * ranks} root blocks")
    return lines

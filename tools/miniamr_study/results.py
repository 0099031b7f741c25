"""runs.csv (one row per run, written as it comes), summary.csv and the field_digest check."""
import csv
import os
import re
import statistics

import miniamr_results

RUN_COLUMNS = ["study", "deck", "point", "variant", "runtime", "ranks", "threads", "rep",
               "status", "error", "wall_s", "total_time_ave", "T_comp", "T_comm", "T_ref", "T_lb",
               "T_checksum", "blocks_ts_ave", "cell_var_updates", "cell_var_updates_per_s",
               "effective_bandwidth_gbs", "peak_rss_max", "system_s_max", "blocks_migrated",
               "field_digest",
               "collectives_per_step", "closure_rounds_per_step", "balance_bound",
               "root_grid", "rank_grid", "git_revision",
               "digest_group", "host", "started", "run_dir", "command", "simulated",
               "host_wall_s"]
SUMMARY_COLUMNS = ["study", "deck", "point", "ranks", "threads", "root_grid", "variant", "n",
                   "failed", "wall_median", "wall_min", "wall_max", "time_loop_median",
                   "comp_median", "comm_median", "checksum_median", "ref_median", "lb_median",
                   "system_median",
                   "blocks_ts_median", "blocks_per_rank", "collectives_per_step_median",
                   "closure_rounds_median", "balance_bound_median", "balance_bound_min",
                   "balance_bound_max", "speedup", "efficiency",
                   "work_efficiency", "ratio_to_reference", "ratio_to_static",
                   "pairs", "paired_ratio_to_reference", "paired_ratio_min", "paired_ratio_max",
                   "refine_ratio_to_reference", "refine_ratio_min", "refine_ratio_max",
                   "static_pairs", "paired_ratio_to_static", "paired_static_min",
                   "paired_static_max", "loop_ratio_to_static", "loop_static_min",
                   "loop_static_max", "steps_ratio_to_static", "steps_static_min",
                   "steps_static_max", "field_digest", "oversubscribed", "simulated"]
# The phases (averages over ranks) a summary gives the median of: its column, runs.csv's column.
PHASE_COLUMNS = [("comp_median", "T_comp"), ("comm_median", "T_comm"),
                 ("checksum_median", "T_checksum"), ("ref_median", "T_ref"), ("lb_median", "T_lb")]
FINISHED = ("ok", "oversubscribed")
SUMMARY_RE = re.compile(r"Summary: ranks (\d+) ts (\d+) time (\S+) calc (\S+) comm (\S+) "
                        r"red (\S+) refine (\S+) blocks/ts (\S+) max_blocks (\d+)")


def finished(row):
    return row.get("status") in FINISHED


def row_key(row):
    return (row["point"], row["variant"], str(row["rep"]))


def _per_step(r, key):
    """The median over the refinement steps after timestep 0 (the initial refinement builds the
    mesh from its roots) of refine_traffic's `key`: what an adaptation costs in global
    collectives or closure rounds, to set against the rank count."""
    steps = [t.get(key) for t in (r.get("refine_traffic") or []) if t.get("timestep", 0) > 0]
    steps = [x for x in steps if x is not None]
    return statistics.median(steps) if steps else ""


def balance_bound(compute_s):
    """What a perfect balance of a static run's ranks would take against its busiest rank, from
    their compute seconds: the static runtime gives the ranks equal shares, so rank r works at
    1 / compute_s[r] shares a second, and all P shares over those speeds take the harmonic mean
    of compute_s. 1 on ranks of one speed; 0.4 with one of two ranks a quarter as fast. A
    balancer (the dynamic runtime) gains at most this fraction of the busiest rank's compute,
    whatever slows a rank: --slow_rank, or a core that runs slower than the others."""
    times = [float(t) for t in compute_s or []]
    if not times or min(times) <= 0:
        return ""
    return statistics.harmonic_mean(times) / max(times)


def _yaml_figures(path):
    r = miniamr_results.load(path)
    if "field_digest" not in r:
        return None

    def phase(name):
        value = r.phase(name)
        return "" if value is None else value
    return {"total_time_ave": r.get("total_time_ave", ""), "T_comp": phase("T_comp"),
            "T_comm": phase("T_comm"), "T_ref": phase("T_ref"), "T_lb": phase("T_lb"),
            "T_checksum": phase("T_checksum"), "blocks_ts_ave": r.get("total_blocks_ts_ave", ""),
            "cell_var_updates": r.get("cell_var_updates", ""),
            "cell_var_updates_per_s": r.get("cell_var_updates_per_s", ""),
            "effective_bandwidth_gbs": r.get("effective_bandwidth_gbs", ""),
            "peak_rss_max": r.get("peak_rss_max", ""),
            "system_s_max": r.get("system_time_max", ""),
            "blocks_migrated": r.get("blocks_migrated", r.get("blocks_moved_lb", "")),
            "field_digest": r.get("field_digest", ""),
            "collectives_per_step": _per_step(r, "collectives"),
            "closure_rounds_per_step": _per_step(r, "closure_rounds"),
            "balance_bound": (balance_bound((r.get("per_rank") or {}).get("compute_s"))
                              if r.get("runtime") == "static" else ""),
            "total_time_max": r.get("total_time_max", ""),
            "git_revision": (r.get("provenance", {}) or {}).get("git_revision", "")}


def _summary_figures(path):
    """The phase times of the reference's `Summary:` line (averages over ranks)."""
    with open(path, errors="replace") as f:
        m = SUMMARY_RE.search(f.read())
    if not m:
        return None
    return {"total_time_ave": m.group(3), "T_comp": m.group(4), "T_comm": m.group(5),
            "T_checksum": m.group(6), "T_ref": m.group(7), "blocks_ts_ave": m.group(8)}


def row_for(desc, run_dir, run_dir_text, wall, status, host, started, command, simulated=""):
    """A runs.csv row from a run's description, its folder and how it ended. `simulated` names
    the SimGrid platform of a simulated run, whose wall_s is then its simulated time (the time
    loop of its slowest rank) and host_wall_s what the simulation took here."""
    row = {c: "" for c in RUN_COLUMNS}
    row.update({k: v for k, v in desc.items() if k in row})
    row.update({"wall_s": f"{wall:.6f}", "host": host, "started": started,
                "run_dir": run_dir_text, "command": command, "simulated": simulated,
                "host_wall_s": f"{wall:.6f}"})
    figures, error = None, ""
    if status != 0:
        error = "timed out" if status == "timeout" else f"exit status {status}"
    elif desc["runtime"] == "reference":
        figures = _summary_figures(os.path.join(run_dir, "stdout.txt"))
        error = "" if figures else "no Summary line on stdout"
    else:
        path = os.path.join(run_dir, "results.yaml")
        try:
            figures = _yaml_figures(path)
            error = "" if figures else "results.yaml has no field_digest"
        except miniamr_results.ResultsError as e:
            error = f"no readable results.yaml ({e})"
    if figures and simulated:
        if figures.get("total_time_max") in ("", None):
            figures, error = None, "results.yaml has no total_time max"
        else:
            row["wall_s"] = f"{float(figures['total_time_max']):.6f}"
    if figures:
        row.update({k: v for k, v in figures.items() if k in row})
        row["status"] = "oversubscribed" if desc.get("oversubscribed") else "ok"
    else:
        row["status"], row["error"] = "failed", error
    return row


class CsvLog:
    """Appends rows to runs.csv, each flushed at once (an interrupted study keeps them)."""

    def __init__(self, path):
        self.path = path

    def __enter__(self):
        new = not os.path.exists(self.path) or os.path.getsize(self.path) == 0
        if not new:
            # A study resumed with a version whose columns differ: its rows are rewritten under
            # this version's header (missing figures empty) before new rows follow them.
            with open(self.path, newline="") as f:
                header = next(csv.reader(f), [])
            if header != RUN_COLUMNS:
                write_rows(self.path, read_rows(self.path))
        self.f = open(self.path, "a", newline="")
        self.w = csv.DictWriter(self.f, RUN_COLUMNS, extrasaction="ignore")
        if new:
            self.w.writeheader()
            self.f.flush()
        return self

    def write(self, row):
        self.w.writerow(row)
        self.f.flush()

    def __exit__(self, *exc):
        self.f.close()


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def write_rows(path, rows, columns=RUN_COLUMNS):
    tmp = path + ".tmp"
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, columns, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    os.replace(tmp, path)


def _num(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def _fmt(x, digits=6):
    return "" if x is None else f"{x:.{digits}g}"


def static_baseline(labels):
    """The variant the others are compared with as 'static': the plain one, else the first
    static one."""
    if "static" in labels:
        return "static"
    return next((l for l in labels if l.split("@", 1)[0].strip() == "static"), None)


def paired_ratios(rows, point, variant, figure, mate_variant="reference"):
    """figure(run) / figure(mate run) for each repetition where both finished, the mate being the
    run of `mate_variant` (the reference, or the static runtime): runs next to each other in time,
    so that a host whose speed drifts moves both sides of each ratio."""
    ref = {str(r["rep"]): r for r in rows
           if r["point"] == point and r["variant"] == mate_variant and finished(r)}
    out = []
    for r in rows:
        mate = ref.get(str(r["rep"]))
        if r["point"] != point or r["variant"] != variant or not finished(r) or mate is None:
            continue
        a, b = figure(r), figure(mate)
        if a is not None and b:
            out.append(a / b)
    return out


def _refinement(row):
    """Refinement as the reference times it: its T_ref includes the load balance in the step,
    which miniamr's T_lb counts apart (the reference reports no T_lb of its own)."""
    ref, lb = _num(row["T_ref"]), _num(row["T_lb"])
    if ref is None:
        return None
    return ref + (lb or 0.0)


def _less_refinement(row):
    """The time loop less refinement (averages over ranks): the time steps and the balancing,
    what a runtime decides. Refinement runs the same code in both runtimes, and the page faults
    of a growing mesh land in it, which cost ten times more in some runs than in others on a
    virtual machine."""
    loop, ref = _num(row["total_time_ave"]), _num(row["T_ref"])
    if loop is None or ref is None:
        return None
    return loop - ref


def summarize(rows, kind):
    """One summary row per (point, variant), finished runs only, points by rank count."""
    groups, order = {}, []
    for r in rows:
        k = (r["point"], r["variant"])
        if k not in groups:
            groups[k] = []
            order.append(k)
        groups[k].append(r)
    labels = list(dict.fromkeys(r["variant"] for r in rows))
    static = static_baseline(labels)

    def point_ranks(point):
        m = re.match(r"p(\d+)t(\d+)$", point)
        return (int(m.group(1)), int(m.group(2))) if m else (0, 0)
    order.sort(key=lambda k: (point_ranks(k[0]), labels.index(k[1])))
    out = {}
    for point, variant in order:
        rs = groups[(point, variant)]
        ok = [r for r in rs if finished(r)]
        walls = [float(r["wall_s"]) for r in ok]
        ranks, threads = point_ranks(point)
        first = rs[0]
        s = {"study": first["study"], "deck": first["deck"], "point": point, "ranks": ranks,
             "threads": threads, "root_grid": first["root_grid"], "variant": variant,
             "n": len(ok), "failed": len(rs) - len(ok),
             "oversubscribed": int(any(r["status"] == "oversubscribed" for r in ok)),
             "simulated": first.get("simulated", "")}
        if walls:
            s.update({"wall_median": statistics.median(walls), "wall_min": min(walls),
                      "wall_max": max(walls)})
            loops = [x for x in (_num(r["total_time_ave"]) for r in ok) if x is not None]
            blocks = [x for x in (_num(r["blocks_ts_ave"]) for r in ok) if x is not None]
            s["time_loop_median"] = statistics.median(loops) if loops else None
            for column, phase in PHASE_COLUMNS:
                xs = [x for x in (_num(r[phase]) for r in ok) if x is not None]
                s[column] = statistics.median(xs) if xs else None
            s["blocks_ts_median"] = statistics.median(blocks) if blocks else None
            s["blocks_per_rank"] = s["blocks_ts_median"] / ranks if blocks else None
            for column, per_run in (("collectives_per_step_median", "collectives_per_step"),
                                    ("closure_rounds_median", "closure_rounds_per_step"),
                                    ("system_median", "system_s_max")):
                xs = [x for x in (_num(r.get(per_run, "")) for r in ok) if x is not None]
                s[column] = statistics.median(xs) if xs else None
            bounds = [x for x in (_num(r.get("balance_bound", "")) for r in ok) if x is not None]
            if bounds:
                s.update({"balance_bound_median": statistics.median(bounds),
                          "balance_bound_min": min(bounds), "balance_bound_max": max(bounds)})
            digests = {r["field_digest"] for r in ok if r["field_digest"]}
            s["field_digest"] = digests.pop() if len(digests) == 1 else \
                ("MISMATCH" if digests else "")
        out[(point, variant)] = s
    for (point, variant), s in out.items():
        if "wall_median" not in s:
            continue
        # Speed-up against the smallest rank count of the same variant and thread count (none
        # when it ran on one rank count only).
        same = [t for (p, v), t in out.items()
                if v == variant and t["threads"] == s["threads"] and "wall_median" in t]
        base = min(same, key=lambda t: t["ranks"]) if len(same) > 1 else None
        if base is not None:
            s["speedup"] = base["wall_median"] / s["wall_median"]
            s["efficiency"] = (s["speedup"] if kind == "weak"
                               else s["speedup"] * base["ranks"] / s["ranks"])
            if s.get("blocks_ts_median") and base.get("blocks_ts_median"):
                # Block-stages per second per rank against the base: efficiency per unit of work.
                s["work_efficiency"] = (s["blocks_ts_median"] / s["wall_median"] / s["ranks"]) / \
                    (base["blocks_ts_median"] / base["wall_median"] / base["ranks"])
        ref = out.get((point, "reference"))
        if ref and variant != "reference" and "wall_median" in ref:
            s["ratio_to_reference"] = s["wall_median"] / ref["wall_median"]
            walls = paired_ratios(rows, point, variant, lambda r: _num(r["wall_s"]))
            if walls:
                s.update({"paired_ratio_to_reference": statistics.median(walls),
                          "paired_ratio_min": min(walls), "paired_ratio_max": max(walls),
                          "pairs": len(walls)})
            refine = paired_ratios(rows, point, variant, _refinement)
            if refine:
                s["refine_ratio_to_reference"] = statistics.median(refine)
                s["refine_ratio_min"], s["refine_ratio_max"] = min(refine), max(refine)
        st = out.get((point, static)) if static else None
        if st and variant != static and "wall_median" in st:
            s["ratio_to_static"] = s["wall_median"] / st["wall_median"]
            walls = paired_ratios(rows, point, variant, lambda r: _num(r["wall_s"]), static)
            if walls:
                s.update({"paired_ratio_to_static": statistics.median(walls),
                          "paired_static_min": min(walls), "paired_static_max": max(walls),
                          "static_pairs": len(walls)})
            # The time loops alone: the launch (about 0.3 s of a small run, the same for both)
            # is no part of what a runtime can win or lose.
            loops = paired_ratios(rows, point, variant, lambda r: _num(r["total_time_ave"]),
                                  static)
            if loops:
                s.update({"loop_ratio_to_static": statistics.median(loops),
                          "loop_static_min": min(loops), "loop_static_max": max(loops)})
            steps = paired_ratios(rows, point, variant, _less_refinement, static)
            if steps:
                s.update({"steps_ratio_to_static": statistics.median(steps),
                          "steps_static_min": min(steps), "steps_static_max": max(steps)})
    table = []
    for s in out.values():
        table.append({c: (_fmt(s.get(c)) if isinstance(s.get(c), float) else s.get(c, ""))
                      for c in SUMMARY_COLUMNS})
    return table, list(out.values())


def digest_problems(rows):
    """Groups of finished miniamr runs that must agree and do not, one line each."""
    groups = {}
    for r in rows:
        if finished(r) and r["runtime"] != "reference" and r["digest_group"]:
            groups.setdefault(r["digest_group"], {}).setdefault(r["field_digest"], []).append(r)
    problems = []
    for group, by_digest in groups.items():
        if len(by_digest) > 1:
            parts = []
            for digest, rs in by_digest.items():
                runs = ", ".join(f"{r['point']} {r['variant']} rep {r['rep']}" for r in rs[:4])
                more = f" and {len(rs) - 4} more" if len(rs) > 4 else ""
                parts.append(f"{digest or '(none)'} in {runs}{more}")
            problems.append(f"field_digest differs between runs that must agree ({group}): " +
                            "; ".join(parts))
    return problems


def mesh_warnings(rows):
    """The reference's blocks per stage against miniamr's on the same point and root grid: a
    difference means the translated options describe another problem."""
    warnings = []
    for point in dict.fromkeys(r["point"] for r in rows):
        here = [r for r in rows if r["point"] == point and finished(r)]
        ref = {r["blocks_ts_ave"] for r in here if r["runtime"] == "reference"}
        ours = {r["blocks_ts_ave"] for r in here if r["runtime"] != "reference" and
                r["digest_group"] == f"root {r['root_grid']}"}
        if ref and ours:
            a, b = _num(sorted(ref)[0]), _num(sorted(ours)[0])
            if a is None or b is None or abs(a - b) > 1e-6 * max(abs(a), abs(b), 1):
                warnings.append(f"{point}: the reference averaged {sorted(ref)[0]} blocks per "
                                f"stage, miniamr {sorted(ours)[0]}: not the same mesh")
    return warnings


def text_table(stats):
    """The summary as printed at the end of a study."""
    lines = [f"{'point':8s} {'variant':28s} {'n':>3s} {'wall s median (min..max)':>28s} "
             f"{'speedup':>8s} {'eff':>6s} {'/ref':>6s} {'/static':>7s}"]
    for s in stats:
        if "wall_median" not in s:
            lines.append(f"{s['point']:8s} {s['variant'][:28]:28s} {0:3d} "
                         f"{'(no finished run)':>28s}")
            continue
        wall = f"{s['wall_median']:.3f} ({s['wall_min']:.3f}..{s['wall_max']:.3f})"

        def opt(k, w):
            return f"{s[k]:{w}.3f}" if s.get(k) is not None else " " * (w - 1) + "-"
        lines.append(f"{s['point']:8s} {s['variant'][:28]:28s} {s['n']:3d} {wall:>28s} "
                     f"{opt('speedup', 8)} {opt('efficiency', 6)} {opt('ratio_to_reference', 6)} "
                     f"{opt('ratio_to_static', 7)}")
    phased = [s for s in stats if s.get("comp_median") is not None]
    if phased:
        lines.append("")
        lines.append("time loop by phase, median seconds (average over ranks; the reference "
                     "counts its balancing as refinement), the most system time of a rank's "
                     "process (page faults, mostly; start-up included) and the global "
                     "collectives of a refinement step after timestep 0 (median over steps and "
                     "runs):")
        lines.append(f"{'point':8s} {'variant':28s} {'loop':>8s} {'compute':>8s} {'comm':>8s} "
                     f"{'checksum':>8s} {'refine':>8s} {'balance':>8s} {'system':>8s} "
                     f"{'coll/step':>9s}")
    for s in phased:
        def cell(k):
            return f"{s[k]:8.3f}" if s.get(k) is not None else "       -"
        steps = s.get("collectives_per_step_median")
        lines.append(f"{s['point']:8s} {s['variant'][:28]:28s} {cell('time_loop_median')} "
                     f"{cell('comp_median')} {cell('comm_median')} {cell('checksum_median')} "
                     f"{cell('ref_median')} {cell('lb_median')} {cell('system_median')} "
                     + (f"{steps:9.1f}" if steps is not None else "        -"))
    def section(key, heading, cells):
        """A heading, then one line for each summary with `key`: its point, variant, cells."""
        rows = [s for s in stats if s.get(key) is not None]
        if rows:
            lines.extend(["", heading])
        for s in rows:
            lines.append(f"{s['point']:8s} {s['variant'][:28]:28s} " + cells(s))

    def spread(s, median, low, high):
        return f"{s[median]:.3f} ({s[low]:.3f}..{s[high]:.3f})"

    def optional(s, label, median, low, high):
        return f"{label} {spread(s, median, low, high)}, " if s.get(median) is not None else ""

    section("paired_ratio_to_static",
            "against the static run of the same repetition, median (min..max):",
            lambda s: "wall " + spread(s, "paired_ratio_to_static", "paired_static_min",
                                       "paired_static_max") + ", "
            + optional(s, "time loop", "loop_ratio_to_static", "loop_static_min",
                       "loop_static_max")
            + optional(s, "less refinement", "steps_ratio_to_static", "steps_static_min",
                       "steps_static_max")
            + f"{s['static_pairs']} pair(s)")
    section("balance_bound_median",
            "the static runs' compute balanced perfectly over their ranks' measured speeds, "
            "against their busiest rank's (the least a balancer can reach: 1 on ranks of one "
            "speed), median (min..max):",
            lambda s: spread(s, "balance_bound_median", "balance_bound_min", "balance_bound_max"))
    section("paired_ratio_to_reference",
            "against the reference run of the same repetition, median (min..max):",
            lambda s: "wall " + spread(s, "paired_ratio_to_reference", "paired_ratio_min",
                                       "paired_ratio_max") + ", "
            + optional(s, "refinement (T_ref + T_lb)", "refine_ratio_to_reference",
                       "refine_ratio_min", "refine_ratio_max")
            + f"{s['pairs']} pair(s)")
    return "\n".join(lines)

"""`miniamr-study table DIR`: a study's figures as a Markdown table that names its machine (CPU
model, cores, the copy bandwidth measured at the study's start and end), its date, the commit
that ran and the command that made it, between <!-- figures:begin --> and <!-- figures:end -->
marks; --into FILE puts it in place of FILE's marked block (the README's and the docs'
figures are regenerated that way)."""
import json
import os
import shlex

from . import UsageError
from .results import finished, read_rows

BEGIN, END = "<!-- figures:begin -->", "<!-- figures:end -->"


def _seconds(s, key):
    x = s.get(key)
    return "-" if x in (None, "") else f"{float(x):.3g}"


def _wall(s):
    if s.get("wall_median") in (None, ""):
        return "no finished run"
    return (f"{float(s['wall_median']):.3g} s ({float(s['wall_min']):.3g}.."
            f"{float(s['wall_max']):.3g})")


def _against_reference(s):
    if s.get("ratio_to_reference") in (None, ""):
        return "-"
    text = f"{float(s['ratio_to_reference']):.3f}"
    if s.get("paired_ratio_to_reference") not in (None, ""):
        text += (f" (paired {float(s['paired_ratio_to_reference']):.3f}, "
                 f"{float(s['paired_ratio_min']):.3f}..{float(s['paired_ratio_max']):.3f})")
    return text


def _machine(info):
    m = info.get("machine")
    if not m:
        return "Machine: not recorded (a study from before miniamr-study recorded it)."
    copy = m.get("copy_gbs") or []
    if copy:
        low, high = f"{min(copy):.1f}", f"{max(copy):.1f}"
        spread = f"{low} GB/s" if low == high else f"{low}-{high} GB/s"
        copy_text = (f"{m.get('copy_threads', '?')}-thread copy {spread} (`bench/stream_copy` at "
                     f"the study's start and end)")
    else:
        copy_text = "copy bandwidth not measured (no `bench/stream_copy` beside miniamr)"
    return f"Machine: {m['cpu']}, {m['cores']} cores, {copy_text}."


def _revision(runs):
    revisions = sorted({r.get("git_revision", "") for r in runs
                        if r["runtime"] != "reference" and finished(r) and r.get("git_revision")})
    return ", ".join(revisions) if revisions else "unknown"


def _date(runs):
    days = sorted({r["started"][:10] for r in runs if r.get("started")})
    if not days:
        return "date unknown"
    return days[0] if len(days) == 1 else f"{days[0]} to {days[-1]}"


def markdown(study_dir):
    """The marked block of a study folder's figures."""
    try:
        with open(os.path.join(study_dir, "study.json")) as f:
            info = json.load(f)
        runs = read_rows(os.path.join(study_dir, "runs.csv"))
        summary = read_rows(os.path.join(study_dir, "summary.csv"))
    except (OSError, ValueError) as e:
        raise UsageError(f"{study_dir} is not a finished study folder ({e})") from None
    if not summary:
        raise UsageError(f"{study_dir}/summary.csv has no rows")
    what = ("simulated time of the slowest rank's time loop on platform "
            f"{info['simulated']}" if info.get("simulated")
            else f"wall time around {info.get('launcher', 'mpirun')}")
    extra = f" with `{info['extra']}`" if info.get("extra") else ""
    lines = [BEGIN,
             f"`miniamr-study {info['kind']}` of `{info['deck']}`{extra}: median of "
             f"{info['reps']} repetitions (min..max), the variants alternating within each and "
             f"rotated by one each repetition, {what}; phases are medians of the average over ranks (the reference counts its "
             f"balancing as refinement), collectives those of a refinement step after timestep 0 (median); \"paired\": each run against the reference run of its "
             f"own repetition. {_machine(info)} {_date(runs)}, commit {_revision(runs)}.",
             "",
             "| variant | ranks x threads | wall | time loop s | compute s | comm s | refine s "
             "| balance s | collectives per step | against the reference |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for s in summary:
        steps = s.get("collectives_per_step_median")
        lines.append(f"| {s['variant']} | {s['ranks']} x {s['threads']} | {_wall(s)} | "
                     f"{_seconds(s, 'time_loop_median')} | {_seconds(s, 'comp_median')} | "
                     f"{_seconds(s, 'comm_median')} | {_seconds(s, 'ref_median')} | "
                     f"{_seconds(s, 'lb_median')} | "
                     f"{'-' if steps in (None, '') else f'{float(steps):g}'} | "
                     f"{_against_reference(s)} |")
    bounds = [f"{s['variant']} on {s['ranks']} x {s['threads']} "
              f"{float(s['balance_bound_median']):.3f} ({float(s['balance_bound_min']):.3f}.."
              f"{float(s['balance_bound_max']):.3f})"
              for s in summary if s.get("balance_bound_median") not in (None, "")]
    if bounds:
        lines += ["", "The static runs' compute balanced perfectly over their ranks' measured "
                  "speeds, against their busiest rank's (the least a balancer can reach: 1 on "
                  "ranks of one speed), median (min..max): " + "; ".join(bounds) + "."]
    command = info.get("command") or []
    lines += ["", "```sh", "tools/miniamr-study " + shlex.join(command),
              f"tools/miniamr-study table {shlex.quote(study_dir)} --into FILE   # this table",
              "```", END]
    return "\n".join(lines)


def put_into(path, block):
    """Replaces the marked block of the file at `path` (written whole, then renamed)."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise UsageError(f"--into {path}: {e.strerror}") from None
    if BEGIN not in text or END not in text or text.index(BEGIN) > text.index(END):
        raise UsageError(f"--into {path}: no {BEGIN} ... {END} block to replace")
    text = text[:text.index(BEGIN)] + block + text[text.index(END) + len(END):]
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(path + ".tmp", path)

"""`miniamr-study balancer LOG`: what the dynamic runtime's balancer did, from its --lb_log.

One row per line of the log: the timestep, a refinement cut or a decision between refinement
steps and what became of it, the shares the cut was made with (a decision's: those it proposed,
taken or not), the work each rank held over the interval before the line (its predicted seconds
per stage times its speed, as fractions of the whole), the seconds per stage each rank measured
over that interval and their imbalance (max over mean). With up to 4 ranks every rank is shown,
beyond that the least and the most.

The summary adds the cuts and the blocks they moved, the decisions taken and why the others were
not, the imbalance over the whole log (the intervals' slowest and mean ranks summed, each weighted
by the timesteps it covers: the share of the run's stage time lost to imbalance is 1 - 1 /
that), and how far the work a rank held was from the share it was cut to over the next interval,
on average (weighted by the interval's stage time) and at most (blocks are whole: a rank's share
lies between two blocks' bounds).
"""
import collections
import json
import os

from . import UsageError

# Each line's interval of the run: the timesteps since the line before.
Row = collections.namedtuple("Row", "timestep kind outcome shares work seconds imbalance steps")


def read(path):
    """The log's header and its lines, checked: a clear UsageError for anything else."""
    if os.path.exists(path) and not os.path.isfile(path):
        raise UsageError(f"{path}: not a regular file (--lb_log writes one)")
    try:
        with open(path) as f:
            text = f.read()
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not a balancer log (--lb_log writes JSON lines)")
    numbered = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    parsed, line_of = [], []
    for n, line in numbered:
        line_of.append(n)
        try:
            parsed.append(json.loads(line))
        except json.JSONDecodeError as e:
            raise UsageError(f"{path}:{n}: not a JSON line ({e.msg}): is it an --lb_log file?")
        if not isinstance(parsed[-1], dict):
            raise UsageError(f"{path}:{n}: not a JSON object: is it an --lb_log file?")
    if not parsed or "miniamr_lb_log" not in parsed[0]:
        raise UsageError(f"{path}: no --lb_log header line (miniamr_lb_log) at its start")
    header, entries = parsed[0], parsed[1:]
    ranks = header.get("ranks")
    if not isinstance(ranks, int) or ranks < 1:
        raise UsageError(f"{path}: the header gives no rank count")
    for n, e in zip(line_of[1:], entries):
        if e.get("kind") not in ("refinement", "decision") or \
                not isinstance(e.get("timestep"), int):
            raise UsageError(f"{path}:{n}: neither a refinement cut nor a decision with a timestep")
        for key in ("shares", "speeds", "predicted_s_per_stage_before", "measured_s_per_stage"):
            v = e.get(key)
            if key == "measured_s_per_stage" and v is None:
                continue  # decisions log the slowest rank's only
            if not isinstance(v, list) or len(v) != ranks or \
                    not all(isinstance(x, (int, float)) and x >= 0 for x in v):
                raise UsageError(f"{path}:{n}: {key} is not {ranks} numbers of at least 0")
        moves = e.get("moves", [])
        if not isinstance(e.get("blocks", 0), int) or not isinstance(moves, list) or \
                not all(isinstance(m, dict) and isinstance(m.get("blocks", 0), int) for m in moves):
            raise UsageError(f"{path}:{n}: its blocks or moves are not counts of blocks")
    return header, entries


def _fractions(values):
    total = sum(values)
    return [v / total for v in values] if total > 0 else None


def _blocks(n):
    return f"{n} block{'s' if n != 1 else ''}"


def _outcome(e):
    if e["kind"] == "refinement":
        if e.get("recut") is False:
            return f"kept: {e.get('reason', 'no re-cut')}"
        return f"cut, {_blocks(e.get('blocks', 0))} moved"
    if e.get("taken"):
        return f"taken, {_blocks(sum(m.get('blocks', 0) for m in e.get('moves', [])))} moved"
    return f"skipped: {e.get('reason', '')}"


def rows(entries):
    """Row per entry. `seconds` is measured per rank where the line has it (refinement cuts),
    else predicted; `steps` the timesteps since the previous line (its interval)."""
    out = []
    previous = 0
    for e in entries:
        predicted = e["predicted_s_per_stage_before"]
        # A rank that held no work keeps its last measurement in the log; it spent nothing.
        seconds = [m if p > 0 else 0.0
                   for m, p in zip(e.get("measured_s_per_stage") or predicted, predicted)]
        work = _fractions([p * s for p, s in zip(predicted, e["speeds"])])
        mean = sum(seconds) / len(seconds)
        imbalance = max(seconds) / mean if mean > 0 else None
        out.append(Row(e["timestep"], e["kind"], _outcome(e), e["shares"], work, seconds,
                       imbalance, max(0, e["timestep"] - previous)))
        previous = e["timestep"]
    return out


def summary(entries, table):
    """The log's totals (a dict): cuts, blocks, decisions, reasons, imbalance, cut error."""
    cuts = [e for e in entries if e["kind"] == "refinement"]
    decisions = [e for e in entries if e["kind"] == "decision"]
    reasons = collections.Counter(e.get("reason", "") for e in decisions if not e.get("taken"))
    kept = collections.Counter(e.get("reason", "") for e in cuts if e.get("recut") is False)
    slowest = mean = 0.0
    for r in table:
        if r.imbalance is not None and r.steps > 0:
            slowest += max(r.seconds) * r.steps
            mean += sum(r.seconds) / len(r.seconds) * r.steps
    # A line's work ran under the shares of the cut before it (a refinement cut, or a decision
    # taken since, which moves the boundaries of its own shares).
    off = weighted_off = weight = 0.0
    cut_shares = None
    for e, r in zip(entries, table):
        if cut_shares is not None and r.work is not None:
            want = _fractions(cut_shares)
            gap = max(abs(w - s) for w, s in zip(r.work, want))
            off = max(off, gap)
            # Weighted by the stage time it ran for: a mesh of a few blocks cannot be cut finely,
            # and runs for little of the time.
            weighted_off += gap * max(r.seconds) * r.steps
            weight += max(r.seconds) * r.steps
        if e["kind"] == "refinement" or e.get("taken"):
            cut_shares = e["shares"]
    return {
        "refinement_cuts": len(cuts),
        "cuts_kept": sum(kept.values()),
        "kept_reasons": dict(kept),
        "blocks_moved_at_refinement": sum(e.get("blocks", 0) for e in cuts),
        "decisions": len(decisions),
        "decisions_taken": sum(1 for e in decisions if e.get("taken")),
        "blocks_moved_by_decisions": sum(m.get("blocks", 0) for e in decisions if e.get("taken")
                                         for m in e.get("moves", [])),
        "skipped_reasons": dict(reasons),
        "weighted_imbalance": slowest / mean if mean > 0 else None,
        "largest_share_error": off,
        "mean_share_error": weighted_off / weight if weight > 0 else None,
    }


def _ranks(values, fmt):
    if values is None:
        return "-"
    if len(values) <= 4:
        return " ".join(fmt.format(v) for v in values)
    return f"{fmt.format(min(values))}..{fmt.format(max(values))}"


def text(path, header, entries, table):
    """The report of the log read from `path` (read(); `table`: rows() of its entries), as a
    string."""
    s = summary(entries, table)
    P = header["ranks"]
    lines = [f"{path}: {P} ranks, strategy {header.get('strategy', '?')}, lb_threshold "
             f"{header.get('lb_threshold', '?')}, decisions every {header.get('lb_freq', '?')} "
             f"timesteps, migration priced by the {header.get('link_model', '?')} link model",
             "", "| timestep | line | outcome | shares cut or proposed | work held | s per stage | "
             "imbalance |",
             "|---|---|---|---|---|---|---|"]
    for r in table:
        imbalance = "-" if r.imbalance is None else f"{r.imbalance:.3f}"
        lines.append(f"| {r.timestep} | {r.kind} | {r.outcome} | "
                     f"{_ranks(_fractions(r.shares), '{:.3f}')} | {_ranks(r.work, '{:.3f}')} | "
                     f"{_ranks(r.seconds, '{:.3g}')} | {imbalance} |")
    lines.append("")
    kept = "".join(f"; {n} kept ({why})" for why, n in sorted(s["kept_reasons"].items()))
    lines.append(f"Refinement cuts: {s['refinement_cuts']}, "
                 f"{_blocks(s['blocks_moved_at_refinement'])} moved{kept}.")
    skipped = ", ".join(f"{n} {why}" for why, n in sorted(s["skipped_reasons"].items()))
    lines.append(f"Decisions: {s['decisions']}, {s['decisions_taken']} taken "
                 f"({_blocks(s['blocks_moved_by_decisions'])} moved)"
                 + (f", not taken: {skipped}" if skipped else "") + ".")
    if s["weighted_imbalance"] is not None:
        lost = 1 - 1 / s["weighted_imbalance"]
        lines.append(f"Imbalance over the log, weighted by timesteps: "
                     f"{s['weighted_imbalance']:.3f} ({100 * lost:.1f}% of the stage time "
                     f"waited for the slowest rank).")
    if s["mean_share_error"] is not None:
        lines.append(f"Gap between a rank's work and the share it was cut to, the most over "
                     f"the ranks: {s['mean_share_error']:.3f} of the whole on average (weighted "
                     f"by stage time), at most {s['largest_share_error']:.3f}.")
    return "\n".join(lines)


def plot(header, table, out):
    """A PNG at `out` of a log (read() and rows()): each rank's share and the work it held, and
    the imbalance, against the timestep (with more than 8 ranks, the least and the most of
    them)."""
    from .plots import _pyplot, _save
    plt = _pyplot()
    ts = [r.timestep for r in table]
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(8, 6))
    P = header["ranks"]
    series = range(P) if P <= 8 else None
    shares = [_fractions(r.shares) for r in table]
    work = [r.work for r in table]
    if series is not None:
        for k in series:
            line, = top.step(ts, [x[k] for x in shares], where="post", label=f"rank {k} share")
            top.plot(ts, [w[k] if w else float("nan") for w in work], "o", ms=3,
                     color=line.get_color(), label=f"rank {k} work held")
    else:
        top.step(ts, [min(x) for x in shares], where="post", label="least share")
        top.step(ts, [max(x) for x in shares], where="post", label="most share")
    top.set_ylabel("fraction of the work")
    top.legend(fontsize=7, ncol=2)
    bottom.plot(ts, [r.imbalance if r.imbalance else float("nan") for r in table], "o-", ms=3)
    bottom.axhline(header.get("lb_threshold", 1.0), color="grey", ls="--", lw=0.8,
                   label="lb_threshold")
    bottom.set_ylabel("max / mean s per stage")
    bottom.set_xlabel("timestep")
    bottom.legend(fontsize=7)
    top.set_title(f"balancer log: {P} ranks, strategy {header.get('strategy', '?')}")
    _save(plt, fig, os.path.dirname(out) or ".", os.path.basename(out), dpi=120)

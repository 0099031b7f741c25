"""Variants: `RUNTIME[@extra options]`, runtime static, dynamic or reference."""
import re
import shlex
from dataclasses import dataclass

from . import UsageError
from .deck import parse_options

RUNTIMES = ("static", "dynamic", "reference")
# Options that never change miniamr's results (where blocks live, how ranks and threads run,
# what is reported): runs that differ only in these must give the same field_digest. The rank
# and root grid are compared through the root grid itself.
NEUTRAL = {"runtime", "threads", "task_order_seed", "lb", "lb_threshold", "lb_freq", "lb_max_move",
           "lb_log", "lb_replay", "slow_rank", "noise", "trace", "dump_graph", "report_perf",
           "max_memory", "max_blocks", "rcb", "morton", "hilbert", "trunc_hilbert", "reorder",
           "lb_opt", "lb_weight", "inbalance", "limit_move", "group_blocks", "break_ties",
           "change_dir", "send_faces", "blocking_send", "plot_freq", "npx", "npy", "npz",
           "init_x", "init_y", "init_z", "isa", "sweep_vars", "chunk_vars", "batch_tsteps",
           "map_ahead", "kokkos", "quiet", "verbose", "progress_every", "results",
           "results_format", "launch", "workers", "plan", "plan_strict", "plan_timeout",
           "lb_link_model"}


@dataclass(frozen=True)
class Variant:
    label: str      # as given, e.g. "dynamic@--lb sfc"
    runtime: str
    options: tuple  # the words after '@'
    slug: str       # folder name under runs/<point>/

    @property
    def is_reference(self):
        return self.runtime == "reference"

    def numerics(self):
        """The options that may change results, as one string ('' when none)."""
        kept = []
        for name, values in parse_options(list(self.options)):
            if name not in NEUTRAL:
                kept += [f"--{name}"] + list(values)
        return shlex.join(kept)


def slugify(label):
    return re.sub(r"[^A-Za-z0-9]+", "_", label).strip("_") or "variant"


def parse_variants(text, add_reference=False):
    """Comma-separated variants; the reference is appended when asked for and not listed."""
    items = [v.strip() for v in text.split(",")]
    if not text.strip() or any(not v for v in items):
        raise UsageError(f"--variants {text!r}: empty variant in the list")
    variants, slugs = [], set()
    for item in items:
        runtime, _, opts = item.partition("@")
        runtime = runtime.strip()
        if runtime not in RUNTIMES:
            raise UsageError(f"unknown variant {item!r}: the runtime before '@' must be one of "
                             f"{', '.join(RUNTIMES)}")
        try:
            words = tuple(shlex.split(opts))
        except ValueError as e:
            raise UsageError(f"variant {item!r}: {e}") from None
        for name, _ in parse_options(list(words)):
            if name in ("runtime", "threads"):
                raise UsageError(f"variant {item!r}: --{name} comes from the variant's runtime "
                                 f"and --threads, not from its options")
        if any(v.label == item for v in variants):
            raise UsageError(f"variant {item!r} is listed twice")
        slug, n = slugify(item), 2
        while slug in slugs:
            slug, n = f"{slugify(item)}_{n}", n + 1
        slugs.add(slug)
        variants.append(Variant(item, runtime, words, slug))
    if add_reference and not any(v.is_reference for v in variants):
        variants.append(Variant("reference", "reference", (), "reference"))
    return variants

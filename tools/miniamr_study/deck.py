"""Decks and option lists: parsing, the root grid, weak scaling and the reference's command line."""
import math
import shlex
from dataclasses import dataclass, field

from . import UsageError
from .inputs import read_text

# miniamr's options that take no value (`build/miniamr --help`); every other takes one, except
# --object (14).
FLAGS = {"report_diffusion", "permute", "kokkos", "blocking_send", "refine_ghost",
         "refine_ghosts", "change_dir", "group_blocks", "break_ties", "send_faces", "rcb",
         "morton", "hilbert", "trunc_hilbert", "help"}
OBJECT_VALUES = 14

# What the reference miniAMR 1.7 accepts (it aborts on any other word).
REFERENCE_VALUES = {"nx", "ny", "nz", "init_x", "init_y", "init_z", "npx", "npy", "npz",
                    "max_blocks", "num_refine", "block_change", "uniform_refine", "refine_freq",
                    "inbalance", "lb_opt", "num_vars", "comm_vars", "num_tsteps", "time",
                    "stages_per_ts", "checksum_freq", "stencil", "error_tol", "report_perf",
                    "plot_freq", "code", "limit_move", "reorder", "num_objects"}
REFERENCE_FLAGS = {"report_diffusion", "permute", "blocking_send", "refine_ghost", "change_dir",
                   "group_blocks", "break_ties", "send_faces", "rcb", "morton", "hilbert",
                   "trunc_hilbert"}
# The reference rejects the README's spelling.
ALIASES = {"refine_ghosts": "refine_ghost"}
TRUE_WORDS = {"1", "true", "yes", "on"}
# Per-rank block pool of the reference when the deck sets no max_blocks: this many blocks in all,
# spread over the ranks (enough for the -ci decks on 1 rank, which peak near 5300).
DEFAULT_TOTAL_POOL = 10000


@dataclass
class Config:
    """A deck with command-line options applied: options by name (a flag's value is a bool),
    and the refinement objects, 14 words each."""
    options: dict = field(default_factory=dict)
    objects: list = field(default_factory=list)

    def copy(self):
        return Config(dict(self.options), [list(o) for o in self.objects])

    def integer(self, name, default):
        value = self.options.get(name, default)
        try:
            return int(value)
        except (TypeError, ValueError):
            raise UsageError(f"{name} = {value!r} is not an integer") from None

    def rank_grid(self):
        return tuple(self.integer(k, 1) for k in ("npx", "npy", "npz"))

    def init(self):
        return tuple(self.integer(k, 1) for k in ("init_x", "init_y", "init_z"))

    def root_grid(self):
        """miniamr's root grid: npx*init_x x npy*init_y x npz*init_z, whatever the rank count."""
        return tuple(n * i for n, i in zip(self.rank_grid(), self.init()))


def read_deck(path):
    """Reads `key = value` lines; '#' starts a comment; one `object = 14 values` line each."""
    config = Config()
    # (a deck is small text, as miniamr reads it: a binary file or /dev/zero is refused)
    for number, line in enumerate(read_text(path, "deck", limit=1 << 20).splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        key, eq, value = line.partition("=")
        key, value = key.strip(), value.strip()
        if not eq or not key or not value:
            raise UsageError(f"{path}:{number}: expected 'key = value', got {line[:60]!r}")
        if key == "object":
            words = value.split()
            if len(words) != OBJECT_VALUES:
                raise UsageError(f"{path}:{number}: object needs {OBJECT_VALUES} values, "
                                 f"got {len(words)}")
            config.objects.append(words)
        elif key in FLAGS:
            config.options[key] = value.lower() in TRUE_WORDS
        else:
            config.options[key] = value
    return config


def parse_options(tokens):
    """Splits command-line words into (name, values) pairs."""
    pairs, i = [], 0
    while i < len(tokens):
        word = tokens[i]
        if not word.startswith("--") or len(word) < 3:
            raise UsageError(f"expected an option, got {word!r} in {shlex.join(tokens)!r}")
        name = word[2:]
        if name in FLAGS:
            count = 0
        elif name == "object":
            count = OBJECT_VALUES
        else:
            count = 1
        values = tokens[i + 1:i + 1 + count]
        if len(values) < count or any(v.startswith("--") for v in values):
            raise UsageError(f"--{name} needs {count} value(s) in {shlex.join(tokens)!r}")
        pairs.append((name, values))
        i += 1 + count
    return pairs


def apply_options(config, tokens):
    """The config after command-line options, as miniamr reads them: later options win and any
    --object replaces all of the deck's objects."""
    result = config.copy()
    objects = []
    for name, values in parse_options(tokens):
        if name == "object":
            objects.append(list(values))
        else:
            result.options[name] = True if name in FLAGS else values[0]
    if objects:
        result.objects = objects
    return result


def prime_factors(n):
    factors, d = [], 2
    while d * d <= n:
        while n % d == 0:
            factors.append(d)
            n //= d
        d += 1
    if n > 1:
        factors.append(n)
    return factors


def weak_growth(root, ranks):
    """Factors (fx, fy, fz), fx*fy*fz = ranks, for the root grid of `ranks` ranks: each prime
    factor of `ranks`, largest first, multiplies the direction whose root grid is currently the
    smallest (x before y before z on ties), so blocks stay as close to cubes as they can."""
    grid, growth = list(root), [1, 1, 1]
    for p in sorted(prime_factors(ranks), reverse=True):
        d = grid.index(min(grid))
        grid[d] *= p
        growth[d] *= p
    return tuple(growth)


def rank_grid_for(root, ranks, preferred=None):
    """npx, npy, npz with npx*npy*npz = ranks that divide the root grid: the deck's own when it
    fits, otherwise the one with the smallest per-rank box surface (x split first on ties);
    None when there is none."""
    if preferred and math.prod(preferred) == ranks and \
            all(r % p == 0 for r, p in zip(root, preferred)):
        return tuple(preferred)
    best = None
    for px in range(ranks, 0, -1):
        if ranks % px:
            continue
        for py in range(ranks // px, 0, -1):
            if (ranks // px) % py:
                continue
            grid = (px, py, ranks // (px * py))
            if any(r % p for r, p in zip(root, grid)):
                continue
            bx, by, bz = (r // p for r, p in zip(root, grid))
            surface = bx * by + by * bz + bx * bz
            if best is None or surface < best[0]:
                best = (surface, grid)
    return best[1] if best else None


def scaled_max_blocks(config, ranks, growth):
    """A deck's max_blocks is per rank for its own npx*npy*npz ranks: keep the total, times the
    root grid's growth, spread over `ranks`. None when the deck sets none."""
    if "max_blocks" not in config.options:
        return None
    total = config.integer("max_blocks", 0) * math.prod(config.rank_grid()) * math.prod(growth)
    return math.ceil(total / ranks)


def reference_max_blocks(config, ranks, growth):
    """The reference's fixed block pool per rank: the deck's max_blocks scaled as above, or
    DEFAULT_TOTAL_POOL blocks (times the growth) over the ranks."""
    scaled = scaled_max_blocks(config, ranks, growth)
    return scaled if scaled else math.ceil(DEFAULT_TOTAL_POOL * math.prod(growth) / ranks)


def grid_text(grid):
    return "x".join(str(g) for g in grid)


def reference_args(config, ranks, max_blocks):
    """The reference's options for a config on `ranks` ranks, keeping the root grid: a rank grid
    that divides it, init_* = root / rank grid, and a block pool. Returns (args, rank grid,
    names left out because only miniamr knows them)."""
    root = config.root_grid()
    grid = rank_grid_for(root, ranks, config.rank_grid())
    if grid is None:
        raise UsageError(
            f"the reference cannot run the root grid {grid_text(root)} on {ranks} ranks: it needs "
            f"npx*npy*npz = {ranks} with npx, npy, npz dividing {grid_text(root)} (pick rank "
            f"counts that divide the root grid, or a deck with a larger one)")
    init = tuple(r // g for r, g in zip(root, grid))
    # The reference refuses a pool smaller than its root blocks per rank.
    max_blocks = max(max_blocks, math.prod(init))
    args, dropped = [], []
    fixed = {"npx", "npy", "npz", "init_x", "init_y", "init_z", "max_blocks", "num_objects",
             "report_perf"}
    for name, value in config.options.items():
        name = ALIASES.get(name, name)
        if name in fixed:
            continue
        if name in REFERENCE_FLAGS:
            if value is True or str(value).lower() in TRUE_WORDS:
                args.append(f"--{name}")
        elif name in REFERENCE_VALUES:
            args += [f"--{name}", str(value)]
        else:
            dropped.append(name)
    for name, values in zip(("npx", "npy", "npz", "init_x", "init_y", "init_z"), grid + init):
        args += [f"--{name}", str(values)]
    # Report bit 4: the stdout report and its Summary line, nothing else.
    args += ["--max_blocks", str(max_blocks), "--report_perf", "4"]
    if config.objects:
        # The reference needs --num_objects before its objects.
        args += ["--num_objects", str(len(config.objects))]
        for obj in config.objects:
            args += ["--object"] + list(obj)
    return args, grid, dropped

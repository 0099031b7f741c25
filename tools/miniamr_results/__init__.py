"""miniamr_results: the one reader of miniamr's results file (results.yaml, or the same keys as
JSON). Key names come from results_keys.txt beside this file, the list the C++ writer is
compiled against: asking for a name the list lacks is a KeyError, so a script cannot read a key
miniamr never writes.

    import miniamr_results
    r = miniamr_results.load("results.yaml")     # ResultsError when unreadable or not miniamr's
    r["total_time_ave"], r.get("blocks_migrated", 0), r.phase("T_ref")
"""
import json
import os
import re
import stat

HERE = os.path.dirname(os.path.abspath(__file__))
KEYS_FILE = os.path.join(HERE, "results_keys.txt")
SCHEMA_VERSION = 1


class ResultsError(Exception):
    """A results file that cannot be read, is not miniamr's, or lacks a key asked for."""


def _read_list():
    """(name, when) for each line of results_keys.txt, in order."""
    entries = []
    with open(KEYS_FILE, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            parts = line.split()
            entries.append((parts[0], parts[1] if len(parts) > 1 else "always"))
    return entries


LISTED = _read_list()


def _pattern(name):
    """A regular expression for the keys a listed name stands for."""
    text = re.escape(name)
    text = text.replace(re.escape("{i}"), r"\d+")
    text = text.replace(re.escape("{ave,min,max}"), "(?:ave|min|max)")
    text = text.replace(re.escape("*"), r"[^.]+")
    return re.compile(text + r"\Z")


_TOP = [(_pattern(name), name, when) for name, when in LISTED if "." not in name]
_NESTED = {name for name, _ in LISTED if "." in name}


def is_key(name):
    """Whether `name` is a top-level key of the results file (one of results_keys.txt's)."""
    return any(p.match(name) for p, _, _ in _TOP)


def expected_keys(runtime, objects):
    """The top-level keys, in order, of a results file written by `runtime` (static, dynamic)
    for a run with `objects` objects."""
    keys = []
    for _, name, when in _TOP:
        if when == "dynamic" and runtime != "dynamic":
            continue
        if "{i}" in name:
            keys += [name.replace("{i}", str(i)) for i in range(objects)]
        elif "{ave,min,max}" in name:
            keys += [name.replace("{ave,min,max}", s) for s in ("ave", "min", "max")]
        else:
            keys.append(name)
    # The objects' keys follow num_objects in one block, object by object.
    first = next((i for i, k in enumerate(keys) if re.match(r"obj\d+", k)), None)
    if first is not None:
        per_object = [k for k in keys if re.match(r"obj\d+", k)]
        rest = [k for k in keys if not re.match(r"obj\d+", k)]
        per_object.sort(key=lambda k: int(re.match(r"obj(\d+)", k).group(1)))
        keys = rest[:first] + per_object + rest[first:]
    return keys


def _known(name):
    if not is_key(name):
        raise KeyError(f"{name!r} is not a key of miniamr's results file "
                       f"(tools/miniamr_results/results_keys.txt)")


class Results:
    """A results file's keys, read by name (names checked against results_keys.txt)."""

    def __init__(self, doc, path="results"):
        self.doc, self.path = doc, path

    def __getitem__(self, name):
        _known(name)
        if name not in self.doc:
            raise ResultsError(f"{self.path} has no {name}")
        return self.doc[name]

    def get(self, name, default=None):
        _known(name)
        value = self.doc.get(name)
        return default if value is None else value

    def __contains__(self, name):
        _known(name)
        return name in self.doc

    def keys(self):
        return list(self.doc.keys())

    def phase(self, name, which="avg"):
        """A phase's time (phases.T_comp and so on): `avg` over ranks or the slowest rank's."""
        if f"phases.{name}" not in _NESTED or f"phases.*.{which}" not in _NESTED:
            raise KeyError(f"phases.{name}.{which} is not a key of miniamr's results file")
        return ((self.doc.get("phases") or {}).get(name) or {}).get(which)

    @property
    def dynamic(self):
        return self.doc.get("runtime") == "dynamic"


def parse(text, path="results"):
    """Results from the text of a results file (YAML, or JSON when it starts with '{')."""
    try:
        if text.lstrip().startswith("{"):
            doc = json.loads(text)
        else:
            import yaml  # Debian's python3-yaml
            doc = yaml.safe_load(text)
    except ValueError as e:  # json.JSONDecodeError
        raise ResultsError(f"{path}: not valid JSON: {e}") from e
    except Exception as e:  # yaml.YAMLError, without importing yaml for JSON files
        raise ResultsError(f"{path}: not valid YAML: {e}") from e
    if not isinstance(doc, dict) or doc.get("program") != "miniamr":
        raise ResultsError(f"{path}: not a miniamr results file (no `program: miniamr`)")
    if doc.get("schema_version") != SCHEMA_VERSION:
        raise ResultsError(f"{path}: schema_version {doc.get('schema_version')}, this reader "
                           f"knows {SCHEMA_VERSION}")
    return Results(doc, path)


# The largest results file read: one of a 100,000-rank run with its per-rank records.
LOAD_LIMIT = 1 << 30


def read_text(path, what, limit):
    """The text of `path` (a `what`: "results file", "deck"), or ResultsError naming the problem:
    missing, not a regular file (a FIFO is refused without waiting), larger than `limit` bytes,
    not UTF-8 text or holding NUL bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as e:
        raise ResultsError(f"cannot read {what} {path}: {e.strerror or e}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = "a folder" if stat.S_ISDIR(mode) else \
            "not a regular file (a pipe, device or socket)"
        raise ResultsError(f"cannot read {what} {path}: it is {kind}")
    with os.fdopen(fd, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise ResultsError(f"cannot read {what} {path}: larger than {limit >> 20} MiB, the limit "
                           f"for a {what}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ResultsError(f"{what} {path} is not text: byte {e.start} is not UTF-8") from None
    if "\0" in text:
        raise ResultsError(f"{what} {path} is not text: it holds a NUL byte")
    return text


def load(path):
    """The results file at `path`; ResultsError when it cannot be read (read_text) or is not
    miniamr's."""
    return parse(read_text(path, "results file", LOAD_LIMIT), path)

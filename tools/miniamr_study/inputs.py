"""What every tool does with the files it is given: a file to read must be a regular text file of
bounded size, a file or folder to write must be somewhere writable and not something else
(a folder where a file is meant, a file where a folder is), and bad input of any kind ends the
tool with one message and exit status 2, never a traceback."""
import os
import sys

import miniamr_results

from . import UsageError

# Decks, CSV and YAML files are small; anything larger is a wrong path (/dev/zero, a data file).
TEXT_LIMIT = 64 << 20


def read_text(path, what, limit=TEXT_LIMIT):
    """The text of `path` (a `what`: "deck", "results file"), or UsageError naming the problem:
    missing, not a regular file (a FIFO is refused without waiting), too large, not UTF-8
    text or holding NUL bytes."""
    try:
        return miniamr_results.read_text(path, what, limit)
    except miniamr_results.ResultsError as e:
        raise UsageError(str(e)) from None


def _writable_folder(folder):
    """Why nothing can be created in `folder` (or the folders it would be created in), or ""."""
    probe = os.path.abspath(folder or ".")
    while not os.path.exists(probe):
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    if not os.path.isdir(probe):
        return f"{probe} is not a folder"
    if not os.access(probe, os.W_OK | os.X_OK):
        return f"the folder {probe} is not writable"
    return ""


def check_output_folder(path, what):
    """UsageError unless `path` is a folder a tool may write into, or can be created: an
    existing file there (/etc/passwd) is never taken for a folder."""
    if os.path.exists(path) and not os.path.isdir(path):
        raise UsageError(f"{what} {path}: exists and is not a folder")
    why = _writable_folder(path)
    if why:
        raise UsageError(f"{what} {path}: cannot write there: {why}")


def check_output_file(path, what, suffixes):
    """UsageError unless `path` ends in one of `suffixes` (so a typo never overwrites a file of
    another kind) and can be written: not a folder, its folder writable."""
    if not path.lower().endswith(tuple(suffixes)):
        raise UsageError(f"{what} {path}: the name must end in {' or '.join(suffixes)}")
    if os.path.isdir(path):
        raise UsageError(f"{what} {path}: is a folder")
    if os.path.exists(path) and not os.path.isfile(path):
        raise UsageError(f"{what} {path}: exists and is not a regular file")
    why = _writable_folder(os.path.dirname(path))
    if why:
        raise UsageError(f"{what} {path}: cannot write there: {why}")


def run_tool(name, main):
    """Runs `main()`; bad input (UsageError) and files that cannot be read or written (OSError)
    end with one line "NAME: error: ..." and exit status 2. Returns the exit status."""
    try:
        return main()
    except UsageError as e:
        print(f"{name}: error: {e}", file=sys.stderr)
    except OSError as e:
        where = f"{e.filename}: " if e.filename else ""
        print(f"{name}: error: {where}{e.strerror or e}", file=sys.stderr)
    return 2

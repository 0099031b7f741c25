#!/usr/bin/env python3
"""The README and docs/ as a reader of a fresh clone finds them: the README at most 300 lines
with the two set-up commands first, every relative link pointing at a file that exists, no
path into the development machine's shared folder, no dated diary prose, and the figures
tables naming their machine, date, commit and command."""
import argparse
import glob
import os
import re
import sys

DIARY = re.compile(r"\b(earlier (that|the same) day|the day before|days? (before|later|earlier)"
                   r"|later (that|the same) day|that day)\b", re.I)
LINK = re.compile(r"\]\(([^)\s#]+)(#[^)\s]*)?\)")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repo", required=True)
    a = ap.parse_args()
    repo = os.path.abspath(a.repo)
    pages = ([os.path.join(repo, "README.md"), os.path.join(repo, "bench", "README.md")] +
             sorted(glob.glob(os.path.join(repo, "docs", "*.md"))))
    problems = []
    readme = open(pages[0], encoding="utf-8").read()
    lines = readme.splitlines()
    if len(lines) > 300:
        problems.append(f"README.md has {len(lines)} lines, more than 300")
    head = "\n".join(lines[:6])
    for cmd in ("bash tools/bootstrap.sh run", "bash tools/bootstrap.sh test"):
        if cmd not in head:
            problems.append(f"README.md does not start with `{cmd}`")
    for page in pages:
        text = open(page, encoding="utf-8").read()
        name = os.path.relpath(page, repo)
        for m in LINK.finditer(text):
            target = m.group(1)
            if re.match(r"[a-z]+:", target):
                continue
            if not os.path.exists(os.path.join(os.path.dirname(page), target)):
                problems.append(f"{name}: link to missing {target}")
        if "../shared" in text or "/work/shared" in text:
            problems.append(f"{name}: sends the reader to the shared folder")
        for m in DIARY.finditer(text):
            problems.append(f"{name}: dated diary prose: \"{m.group(0)}\"")
        # A figures table says where, when, at which commit and by which command it was made.
        for block in re.findall(r"^<!-- figures:begin -->$(.*?)^<!-- figures:end -->$", text,
                                re.S | re.M):
            for what, pattern in (("date", r"\b20\d\d-\d\d-\d\d\b"),
                                  ("commit", r"\bcommit\s+[0-9a-f]{7,}"),
                                  ("machine", r"(?i)machine:"),
                                  ("command", r"miniamr-study")):
                if not re.search(pattern, block):
                    problems.append(f"{name}: the figures table does not name its {what}")
    # Every key of the results file is explained in docs/outputs.md.
    outputs = open(os.path.join(repo, "docs", "outputs.md"), encoding="utf-8").read()
    with open(os.path.join(repo, "tools", "miniamr_results", "results_keys.txt")) as f:
        names = [line.split()[0] for line in f if line.strip() and not line.startswith("#")]
    for name in names:
        leaf = name.split(".")[-1]
        if leaf == "*":
            continue
        shown = {leaf, leaf.replace("{i}", "<i>"), leaf.replace("_{ave,min,max}", "_*"),
                 leaf.replace("_{ave,min,max}", "")}
        if not any(f"`{s}`" in outputs or f"`{s}" in outputs and s.startswith("obj") or
                   re.search(rf"\b{re.escape(s)}\b", outputs) for s in shown):
            problems.append(f"docs/outputs.md does not explain the results key {name}")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

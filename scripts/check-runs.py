#!/usr/bin/env python3
"""runs/README.md against the folders of runs/, and the records against scripts/ (CTest: docs_runs).

- every folder of runs/ has its row in runs/README.md's table (| [`NAME`](NAME/) | what |), and every row
  names a folder that exists, once;
- no file under runs/ has the bytes of a script under scripts/: today's files, and, in a git checkout, every
  version of every file git has held under scripts/ (a record points at the script and its commit,
  `git show COMMIT:scripts/...`, and never copies it).
One line per problem, FILE: reason, and exit 1; exit 0 with a summary line."""
import hashlib
import pathlib
import re
import subprocess
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
runs = root / "runs"
row = re.compile(r"^\| \[`([^`/]+)`\]\(([^)]+)\) \|")


def git_blob(data):
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def table_problems():
    out, seen = [], {}
    text = (runs / "README.md").read_text(encoding="utf-8").splitlines()
    for n, line in enumerate(text, 1):
        m = row.match(line)
        if not m:
            continue
        name, target = m.groups()
        if target.rstrip("/") != name:
            out.append(f"runs/README.md:{n}: the row of {name} links to {target}")
        if name in seen:
            out.append(f"runs/README.md:{n}: {name} has a row already at line {seen[name]}")
        seen[name] = n
        if not (runs / name).is_dir():
            out.append(f"runs/README.md:{n}: no folder runs/{name}")
    for d in sorted(p.name for p in runs.iterdir() if p.is_dir()):
        if d not in seen:
            out.append(f"runs/README.md: no row for the folder runs/{d}")
    return out, len(seen)


def script_blobs():
    """Blob ids of scripts/ today and, where git answers, of every version it has held; and whether git did."""
    blobs = {git_blob(p.read_bytes()): str(p.relative_to(root)) for p in (root / "scripts").rglob("*") if p.is_file()}
    try:
        log = subprocess.run(["git", "-C", str(root), "log", "--all", "--raw", "--no-abbrev", "--format=", "--",
                              "scripts"], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return blobs, False
    if log.returncode != 0:
        return blobs, False
    for line in log.stdout.splitlines():  # :100644 100755 OLD NEW M\tPATH
        fields = line.split("\t")
        meta = fields[0].split()
        if len(meta) >= 4 and len(fields) > 1 and set(meta[3]) != {"0"}:
            blobs.setdefault(meta[3], fields[-1])
    return blobs, True


def copy_problems():
    blobs, history = script_blobs()
    out = []
    for p in sorted(runs.rglob("*")):
        if p.is_file() and p.stat().st_size > 0:
            script = blobs.get(git_blob(p.read_bytes()))
            if script:
                out.append(f"{p.relative_to(root)}: a copy of {script} (point at it and its commit instead)")
    return out, len(blobs), history


def main():
    problems, rows = table_problems()
    copies, nblobs, history = copy_problems()
    problems += copies
    for p in problems:
        print(p)
    where = "every version git holds" if history else "today's files only (git did not answer)"
    print(f"check-runs: {rows} rows, {nblobs} script versions ({where}), {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

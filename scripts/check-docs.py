#!/usr/bin/env python3
"""Every relative link in the reader's documents resolves: README.md, docs/*.md, ARCHITECTURE.md,
DEVELOPERS.md, python/README.md, papers/findings.md, papers/diary.md, runs/README.md. A link to FILE must name a file or folder of the
tree; FILE#anchor and #anchor a heading of that Markdown file (GitHub's anchor spelling). One line per
broken link, FILE:LINE: reason, and exit 1 (CTest: docs_links). ARCHITECTURE.md's recipes (its "### Add ..."
sections) are checked against the code too: every file they name in backticks (`engine/config.{h,cpp}` is two)
exists, and every C++ name they give a file for (`configFields()` (`engine/config.cpp`)) is in that file."""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
docs = [root / p for p in ("README.md", "ARCHITECTURE.md", "DEVELOPERS.md", "python/README.md", "papers/findings.md",
                       "papers/diary.md", "runs/README.md")]
docs += sorted((root / "docs").glob("*.md"))
link = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def anchors(path):
    out, fence = set(), False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fence = not fence
        elif not fence and line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            out.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return out


bad = 0
for doc in docs:
    if not doc.exists():
        print(f"{doc.relative_to(root)}: missing")
        bad += 1
        continue
    fence = False
    for n, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("```"):
            fence = not fence
        if fence:
            continue
        for target in link.findall(line):
            if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            dest = (doc.parent / path).resolve() if path else doc
            where = f"{doc.relative_to(root)}:{n}"
            if not dest.exists():
                print(f"{where}: link to {target}: no such file")
                bad += 1
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                print(f"{where}: link to {target}: no heading '{anchor}' in {dest.relative_to(root)}")
                bad += 1

def expand(token):
    """`gpu/codegen/rolling.{h,cpp}` -> both files; other tokens as they are."""
    m = re.match(r"(.*)\{([^}]*)\}(.*)", token)
    return [m.group(1) + part + m.group(3) for part in m.group(2).split(",")] if m else [token]


def recipes(path):
    """(line number, line) of the "### Add ..." sections."""
    inside = False
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("#"):
            inside = line.startswith("### Add")
        if inside:
            yield n, line


path_token = re.compile(r"`([A-Za-z_][\w./-]*/[\w.-]*\.(?:\{[a-z,]+\}|h|cpp|py|md|txt|sh|def|json|in))`")
name_in_file = re.compile(r"`([A-Za-z_][\w:]*)\(?\)?` \(`([\w./-]+\.(?:h|cpp))`\)")
recipe_bad = 0
for n, line in recipes(root / "ARCHITECTURE.md"):
    for token in path_token.findall(line):
        for f in expand(token):
            if not (root / f).exists():
                print(f"ARCHITECTURE.md:{n}: a recipe names {f}: no such file")
                recipe_bad += 1
    for name, f in name_in_file.findall(line):
        if (root / f).exists() and name.split("::")[-1] not in (root / f).read_text(encoding="utf-8"):
            print(f"ARCHITECTURE.md:{n}: a recipe puts {name} in {f}: not there")
            recipe_bad += 1
bad += recipe_bad
print(f"check-docs: {len(docs)} documents, {bad} broken links or recipe names")
sys.exit(1 if bad else 0)

#!/usr/bin/env python3
"""Every relative link in the reader's documents resolves: README.md, docs/*.md, ARCHITECTURE.md,
DEVELOPERS.md, python/README.md, papers/findings.md, papers/diary.md, runs/README.md. A link to FILE must name a file or folder of the
tree; FILE#anchor and #anchor a heading of that Markdown file (GitHub's anchor spelling). One line per
broken link, FILE:LINE: reason, and exit 1 (CTest: docs_links)."""
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
print(f"check-docs: {len(docs)} documents, {bad} broken links")
sys.exit(1 if bad else 0)

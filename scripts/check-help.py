#!/usr/bin/env python3
"""The help texts and the reader's documents agree with the binary (CTest docs_help).

    scripts/check-help.py TAPELAB_BIN [SOURCE_DIR] [--write]

1. docs/strategies.md's list between its `<!-- strategies:` markers is `tapelab plan --help`'s list of
   strategies (the registry's, in its order; papers/style.py colours strategies by it); --write rewrites it.
2. Every `--flag` a command's help names is a flag of that command, or of a command the same paragraph
   names (`tapelab run`, "run and price"); help of one command never promises another's flags.
3. docs/cli.md names every flag of every command.
4. No document copies the product list: a line naming three or more of the catalog's products in a comma
   list (`tapelab tape --help` lists them) is a copy that goes stale (python/README.md, docs/cli.md had 3 of 11).
5. `--checkpoint auto`'s behaviour per engine: the help of run and price names, as off, exactly the engines
   `tapelab engines --json` says do not auto-checkpoint (auto_checkpoint false).
6. `tapelab --version` names the commit.
One line per problem, FILE or COMMAND first, and exit 1.
"""
import json
import pathlib
import re
import subprocess
import sys

args = [a for a in sys.argv[1:] if not a.startswith("--")]
write = "--write" in sys.argv
binary = args[0]
root = pathlib.Path(args[1] if len(args) > 1 else pathlib.Path(__file__).resolve().parent.parent)
problems = []


def run(*cmd):
    p = subprocess.run([binary, *cmd], capture_output=True, text=True)
    return p.stdout + p.stderr


def commands():
    text = run("--help")
    out, inside = [], False
    for line in text.splitlines():
        if line.strip().lower().startswith(("commands", "subcommands")):
            inside = True
            continue
        m = re.match(r"\s{2}([a-z]+)\s{2,}", line)
        if inside and m:
            out.append(m.group(1))
    return out


def flags_of(help_text):
    """The flags a help text declares: lines of its options list that start with -x, --name."""
    out = set()
    for line in help_text.splitlines():
        m = re.match(r"\s+(?:-\w, )?--([\w-]+)", line)
        if m:
            out.add(m.group(1))
    return out


# 1. the strategies
plan_help = run("plan", "--help")
listed = plan_help.split("strategies:\n", 1)[1] if "strategies:\n" in plan_help else ""
names = [line.strip() for line in listed.splitlines() if re.match(r"  [a-z][\w-]+ {2,}\S", line)]
doc = root / "docs" / "strategies.md"
text = doc.read_text(encoding="utf-8")
m = re.search(r"(<!-- strategies:[^\n]*-->\n```\n)(.*?)(```\n<!-- strategies: end -->)", text, re.S)
if not m or not names:
    problems.append(f"{doc.relative_to(root)}: no strategies block, or `tapelab plan --help` lists none")
else:
    want = "".join("      " + line + "\n" for line in names)
    if m.group(2) != want:
        if write:
            doc.write_text(text[:m.start(2)] + want + text[m.end(2):], encoding="utf-8")
            print(f"{doc.relative_to(root)}: strategies block rewritten")
        else:
            problems.append(f"{doc.relative_to(root)}: the strategies block is not `tapelab plan --help`'s list "
                            "(scripts/check-help.py BIN --write)")

# 2 and 3. flags
cmds = commands()
if not cmds:
    problems.append("tapelab --help: no commands listed")
helps = {c: run(c, "--help") for c in cmds}
declared = {c: flags_of(h) | {"help"} for c, h in helps.items()}
cli_doc = (root / "docs" / "cli.md").read_text(encoding="utf-8")
def paragraphs(text):
    """Each flag's line on its own, and the prose between blank lines."""
    out = []
    for para in re.split(r"\n\s*\n", text):
        lines = para.splitlines()
        if any(re.match(r"\s+-", line) for line in lines):
            out += lines
        else:
            out.append(para)
    return out


for c, h in helps.items():
    for para in paragraphs(h):
        named = {c} | {x for x in cmds if re.search(rf"\b{x}\b", para)}
        allowed = set().union(*(declared[x] for x in named))
        for flag in re.findall(r"(?<![\w-])--([a-z][\w-]*)", para):
            if flag not in allowed:
                problems.append(f"tapelab {c} --help: names --{flag}, a flag of no command it names "
                                f"(in: '{' '.join(para.split())[:90]}...')")
    for flag in sorted(declared[c] - {"help"}):
        if f"--{flag}" not in cli_doc:
            problems.append(f"docs/cli.md: does not name `tapelab {c} --{flag}`")

# 4. product lists
m = re.search(r"--product NAME\s+([a-z][\w, -]*)", run("tape", "--help"))
catalog = [p.strip() for p in m.group(1).split(",")] if m else []
if len(catalog) < 4:
    problems.append("tapelab tape --help: --product lists no catalog")
docs = [root / p for p in ("README.md", "python/README.md", "docs/cli.md", "docs/python.md")]
for d in docs:
    for n, line in enumerate(d.read_text(encoding="utf-8").splitlines(), 1):
        found = [p for p in catalog if re.search(rf"(?<![\w-]){re.escape(p)}(?![\w-])", line)]
        if len(found) >= 3 and re.search(r"(?<![\w-])(" + "|".join(map(re.escape, found)) + r")[,|/]", line):
            problems.append(f"{d.relative_to(root)}:{n}: copies {len(found)} of the catalog's {len(catalog)} products "
                            "(say `tapelab tape --help` lists them)")

# 5. auto checkpointing per engine
engines = json.loads(subprocess.run([binary, "engines", "--json"], capture_output=True, text=True).stdout)
off = sorted(e["name"] for e in engines if not e.get("auto_checkpoint", True))
for c in ("run", "price"):
    line = " ".join(next((p for p in re.split(r"\n(?=\s+-)", helps.get(c, "")) if "--checkpoint" in p), "").split())
    said = sorted(set(re.findall(r"\(([\w-]+(?:, [\w-]+)*): off", line)))
    said = sorted({n for group in said for n in group.split(", ")})
    if said != off:
        problems.append(f"tapelab {c} --help: --checkpoint says auto is off on {said or 'no engine'}; "
                        f"tapelab engines --json says {off or 'none'}")

# 6. the version
v = run("--version")
if not re.search(r"\(commit [0-9a-f]{7,}", v) and "(commit unknown)" not in v:
    problems.append(f"tapelab --version: '{v.strip()}' names no commit")

for p in problems:
    print(p)
print(f"check-help: {len(cmds)} commands, {sum(len(f) for f in declared.values())} flags, {len(names)} strategies, "
      f"{len(catalog)} products; {len(problems)} problems")
sys.exit(1 if problems else 0)

#!/usr/bin/env python3
"""The README's "Your own tape" lines work as written after its set-up (CTest docs_readme).

    scripts/check-readme.py BUILD_DIR [SOURCE_DIR] [--all]

Does what scripts/main-job.sh does for them (a virtual environment on Debian's Python with the tapelab
module and command installed from BUILD_DIR), activates it the README's way, then in a fresh folder (the
source tree's experiments/ beside it) runs the README's Python block as record.py with `python3 record.py`
and each line of the shell block after it as written. A `# N nodes, ...` comment on `tape --summary` must
be what it prints. The lines that time every engine or search for minutes (compare, tune, the drivers) run
with TAPELAB_PATHS=2000 and only with --all; without it each of them must at least parse (`--help` of the
same command and flags, exit 0). One line per problem and exit 1.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

args = [a for a in sys.argv[1:] if not a.startswith("--")]
build = os.path.abspath(args[0])
src = os.path.abspath(args[1] if len(args) > 1 else os.path.join(os.path.dirname(__file__), ".."))
everything = "--all" in sys.argv
text = open(os.path.join(src, "README.md"), encoding="utf-8").read()
own = text[text.index("## Your own tape"):]
python_block = re.search(r"```python\n(.*?)```", own, re.S).group(1)
shell_block = re.search(r"```sh\n(.*?)```", own, re.S).group(1)
setup = re.search(r"```sh\n(.*?)```", text, re.S).group(1)
problems = []
if ". .venv/bin/activate" not in setup:
    problems.append("README.md: the set-up block does not activate .venv")

work = tempfile.mkdtemp(prefix="tapelab-readme-")
try:
    venv = os.path.join(work, ".venv")
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", venv], check=True)
    subprocess.run(["cmake", "--install", build, "--component", "python", "--prefix", venv], check=True,
                   stdout=subprocess.DEVNULL)
    os.symlink(os.path.join(build, "cli", "tapelab"), os.path.join(venv, "bin", "tapelab"))
    os.symlink(os.path.join(src, "experiments"), os.path.join(work, "experiments"))
    env = dict(os.environ, VIRTUAL_ENV=venv, PATH=os.path.join(venv, "bin") + os.pathsep + os.environ["PATH"],
               TAPELAB_CACHE_DIR=os.path.join(work, "cache"))
    env.pop("PYTHONPATH", None)  # the venv alone, as after `. .venv/bin/activate`
    with open(os.path.join(work, "record.py"), "w") as f:
        f.write(python_block)
    p = subprocess.run("python3 record.py", shell=True, cwd=work, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        problems.append(f"README.md: `python3 record.py` failed (exit {p.returncode}): {p.stderr.strip()[-300:]}")
    slow = ("tapelab compare", "tapelab tune", "experiments/")
    for line in [x for x in shell_block.splitlines() if x.strip()]:
        cmd, _, comment = line.partition("#")
        cmd = cmd.strip()
        is_slow = cmd.startswith(slow)
        if is_slow and not everything:
            words = cmd.split()
            flags = [w for w in words if w.startswith("--")]
            head = words[:2] if words[0] == "tapelab" else words[:1]
            p = subprocess.run(head + ["--help"], cwd=work, env=env, capture_output=True, text=True)
            missing = [f for f in flags if f not in p.stdout]
            if p.returncode != 0 or missing:
                problems.append(f"README.md: `{cmd}`: --help exit {p.returncode}, flags it does not take: {missing}")
            continue
        run_env = dict(env, TAPELAB_PATHS="2000") if is_slow or " run " in f" {cmd} " else env
        p = subprocess.run(cmd, shell=True, cwd=work, env=run_env, capture_output=True, text=True)
        if p.returncode != 0:
            problems.append(f"README.md: `{cmd}` failed (exit {p.returncode}): {p.stderr.strip()[-300:]}")
            continue
        m = re.match(r"\s*(\d[\d,]*) nodes, (\d+) draws, (\d+) inputs, pipe width (\d+)", comment)
        if m and "--summary" in cmd:
            want = [int(x.replace(",", "")) for x in m.groups()]
            got = [int(re.search(rf"(\d[\d,]*) {w}", p.stdout.replace("pipe width", "pipewidth")).group(1).replace(",", ""))
                   if re.search(rf"(\d[\d,]*) {w}", p.stdout.replace("pipe width", "pipewidth")) else None
                   for w in ("nodes", "draws", "inputs")]
            if got != want[:3]:
                problems.append(f"README.md: `{cmd}` prints {got} nodes/draws/inputs, the comment says {want[:3]}")
        print(f"ok: {cmd}")
finally:
    shutil.rmtree(work, ignore_errors=True)
for p in problems:
    print(p)
print(f"check-readme: {len(problems)} problems")
sys.exit(1 if problems else 0)

"""What the bench compares: strategies and tapes, as a user names them.

Strategies (each a Strategy with a name the CSV and figures keep, and where it comes from):
  NAME            a built-in strategy, checked against the registry (tapelab.strategies(): never a
                  list kept here); `all` is every one of them
  exact           the per-value optimum (HiGHS), a process strategy: `tapelab plan --strategy exact`
                  at the budget of the row it is compared with (bench.py --exact)
  FILE.py:FN      a function FN(tape, segments) in a Python file of yours, returning cuts or
                  {"cuts": [...], "inner": [...]} (tapelab.plan's contract); FILE.py alone: every
                  public function of the file whose name does not start with '_' and that takes
                  (tape, segments)
  --strategy-cmd  a process writing a plan file (docs/strategies.md, "Strategies as processes"),
                  run through `tapelab plan --strategy-cmd`; named by the plan file's "strategy"
Tapes: a product NAME[:PARAM=V:...] of the catalog (tapelab.products()), FILE.tape, or FILE.py:FN
(a recording: FN() returns a tapelab.Tape).
"""
import importlib.util
import inspect
import json
import os
import subprocess
import tempfile

import tapelab


class InputError(ValueError):
    """Bad input from the user: one line naming the flag or the file (exit 2)."""


class Strategy:
    """A strategy of the bench: `kind` is builtin, python, process or exact; plan(tape, segments) a Plan."""

    def __init__(self, name, kind, planner, origin=""):
        self.name, self.kind, self._planner, self.origin = name, kind, planner, origin

    @property
    def user(self):
        return self.kind in ("python", "process")

    def plan(self, tape, segments):
        return self._planner(tape, segments)


def builtin_names():
    return list(tapelab.strategies())


def _load_module(path, flag):
    if not os.path.isfile(path):
        raise InputError(f"{flag} {path}: no such file")
    spec = importlib.util.spec_from_file_location("tapelab_user_" + os.path.basename(path)[:-3].replace("-", "_"), path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # the user's file: whatever it raises is one line
        raise InputError(f"{flag} {path}: importing it raised {type(e).__name__}: {e}") from None
    return module


def _takes_tape_and_segments(fn):
    try:
        params = [p for p in inspect.signature(fn).parameters.values()
                  if p.default is inspect.Parameter.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        return False
    return len(params) == 2


def python_strategies(spec, flag="--strategies"):
    """FILE.py:FN[+FN...] or FILE.py -> [Strategy]."""
    path, _, names = spec.partition(".py:") if ".py:" in spec else (spec[:-3], "", "")
    path += ".py"
    module = _load_module(path, flag)
    if names:
        fns = []
        for n in names.split("+"):
            fn = getattr(module, n, None)
            if not callable(fn):
                raise InputError(f"{flag} {spec}: {path} has no function '{n}'")
            fns.append(fn)
    else:
        fns = [f for n, f in vars(module).items() if inspect.isfunction(f) and not n.startswith("_")
               and f.__module__ == module.__name__ and _takes_tape_and_segments(f)]
        if not fns:
            raise InputError(f"{flag} {spec}: no function (tape, segments) in {path}")
    taken = set(builtin_names()) | {"plain", "exact"}
    out = []
    for fn in fns:
        name = fn.__name__ if fn.__name__ not in taken else "python:" + fn.__name__

        def planner(tape, segments, fn=fn, name=name):
            try:
                return tapelab.plan(tape, fn, segments=segments, name=name)
            except ValueError:
                raise
            except Exception as e:  # the user's function raised: a one-line error naming it
                raise ValueError(f"tapelab: strategy '{name}' ({path}) raised {type(e).__name__}: {e}") from None
        out.append(Strategy(name, "python", planner, os.path.abspath(path)))
    return out


def process_strategy(command, tapelab_bin, work, budget=None, solve_seconds=60):
    """A --strategy-cmd process, planned through `tapelab plan --strategy-cmd`. Named by its first plan's
    "strategy" field (set when the bench first plans with it)."""
    st = Strategy("cmd", "process", None, command)

    def planner(tape, segments):
        plan, name = cli_plan(tapelab_bin, work, tape, segments, ["--strategy-cmd", command], budget, solve_seconds)
        st.name = name or st.name
        return plan
    st._planner = planner
    return st


def exact_plan(tapelab_bin, work, tape, segments, budget, solve_seconds):
    """exact at `budget` over optimal's blocks at `segments` (tapelab plan --strategy exact), and what its solver
    said ("optimal in 2.1 s", "time limit 10 s, gap 0.42")."""
    plan, _, solver = cli_plan(tapelab_bin, work, tape, segments, ["--strategy", "exact"], budget, solve_seconds,
                               with_solver=True)
    said = solver.get("status", "")
    if solver.get("seconds") is not None:
        said += f" in {float(solver['seconds']):.1f} s"
    if solver.get("gap") not in (None, "", 0, 0.0):
        said += f", gap {float(solver['gap']):.3g}"
    return plan, said


def cli_plan(tapelab_bin, work, tape, segments, flags, budget, solve_seconds, with_solver=False):
    """(Plan, the plan file's strategy name[, its "solver" dict]) from `tapelab plan TAPE ... --out FILE`."""
    tape_file = os.path.join(work, f"{tape.structure[:16]}.tape")
    if not os.path.exists(tape_file):
        tape.write(tape_file)
    fd, out = tempfile.mkstemp(dir=work, suffix=".json")
    os.close(fd)
    cmd = [tapelab_bin, "plan", tape_file, "--checkpoint", str(segments), "--solve-seconds", str(solve_seconds),
           *flags, "--out", out]
    if budget:
        cmd += ["--budget", str(budget)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1]
        err = RuntimeError(last) if p.returncode != 3 else tapelab.EngineUnavailable(last)
        err.returncode = p.returncode
        raise err
    with open(out, encoding="utf-8") as f:
        j = json.load(f)
    plan = tapelab.read_plan(out, tape)
    return (plan, j.get("strategy", ""), j.get("solver") or {}) if with_solver else (plan, j.get("strategy", ""))


def resolve_strategies(text, tapelab_bin, work, commands=()):
    """--strategies A,B,FILE.py:FN and each --strategy-cmd -> [Strategy], in the order given."""
    known = builtin_names()
    out = []
    for item in [s for s in (text or "").split(",") if s]:
        if item == "all":
            out += [Strategy(n, "builtin", _builtin(n)) for n in known]
        elif item in known:
            out.append(Strategy(item, "builtin", _builtin(item)))
        elif item.endswith(".py") or ".py:" in item:
            out += python_strategies(item)
        else:
            raise InputError(f"--strategies: unknown strategy '{item}' (built in: {', '.join(known)}; "
                             "or FILE.py:FUNCTION, or --strategy-cmd)")
    for c in commands:
        out.append(process_strategy(c, tapelab_bin, work))
    seen = set()
    unique = []
    for s in out:
        if (s.kind, s.name, s.origin) not in seen:
            seen.add((s.kind, s.name, s.origin))
            unique.append(s)
    return unique


def _builtin(name):
    return lambda tape, segments: tapelab.plan(tape, name, segments=segments)


def _product(spec):
    name, _, params = spec.partition(":")
    catalog = {p["name"]: p for p in tapelab.products()}
    if name not in catalog:
        raise InputError(f"--tapes: unknown product '{name}' (the catalog: {', '.join(catalog)}; or --tape FILE)")
    kw = {}
    for item in [x for x in params.split(":") if x]:
        k, eq, v = item.partition("=")
        try:
            kw[k] = int(v) if v.lstrip("-").isdigit() else float(v)
        except ValueError:
            eq = ""
        if not eq:
            raise InputError(f"--tapes {spec}: expected NAME:PARAM=VALUE:..., got '{item}'")
    try:
        tape = tapelab.product(name, **kw)
    except ValueError as e:
        raise InputError(str(e).replace("tapelab: ", f"--tapes {spec}: ", 1)) from None
    label = name + ("-" + "-".join(f"{k}{v}" for k, v in kw.items()) if kw else "")
    return label, tape


def resolve_tapes(products, files):
    """[(label, Tape, source)] of --tapes NAME[:P=V:...],... and each --tape FILE.tape or FILE.py:FN."""
    out = []
    for spec in [s for s in (products or "").split(",") if s]:
        label, tape = _product(spec)
        out.append((label, tape, "product " + spec))
    for path in files or []:
        if ".py:" in path:
            file, _, fn = path.partition(".py:")
            module = _load_module(file + ".py", "--tape")
            f = getattr(module, fn, None)
            if not callable(f):
                raise InputError(f"--tape {path}: no function '{fn}' in {file}.py")
            tape = f()
            if not isinstance(tape, tapelab.Tape):
                raise InputError(f"--tape {path}: {fn}() returned {type(tape).__name__}, not a tapelab.Tape")
            out.append((fn, tape, "recording " + path))
        else:
            try:
                tape = tapelab.read_tape(path)
            except ValueError as e:
                raise InputError(str(e).splitlines()[0]) from None
            out.append((os.path.basename(path), tape, "file " + path))
    labels = [t[0] for t in out]
    for label in labels:
        if labels.count(label) > 1:
            raise InputError(f"two tapes are labelled '{label}' (rows are keyed by it)")
    if not out:
        raise InputError("no tape: give --tapes NAME,... or --tape FILE")
    return out

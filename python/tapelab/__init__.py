"""tapelab: adjoint Monte-Carlo tapes on CPUs and GPUs, plain and checkpointed.

    import tapelab
    tape = tapelab.product("asian", steps=252)            # or tapelab.read_tape("x.tape")
    plan = tapelab.plan(tape, "window", segments=16)       # or cuts=[...], a plan file, a function
    r = tapelab.price(tape, engine="cpu-jit", plan=plan, paths=100_000, seed=42)
    r.value, r.greeks["spot"], r.greeks_stderr["spot"], r.kernel_stats.compile_seconds

A strategy is any function strategy(tape, segments) returning the top-level cuts
(node indices, increasing, inside the tape), or {"cuts": [...], "inner": [...]}
for a nested plan, "inner" as in a plan file (planner/planfile.h): one entry per
segment, None or {"cuts": [...], "chain": bool, "inner": [...]} (a bare list is
short for {"cuts": list}). Its plan runs on every engine like a built-in one.

Keywords mean what the CLI's flags of the same name mean, defaults come from the
same TAPELAB_* variables, and errors are exceptions whose text is the line the
CLI prints: ValueError for invalid input, EngineUnavailable (a RuntimeError) for
an engine that cannot run here, RuntimeError for a failed run.
"""
import json
import math
import numbers
import sys
import time
import warnings

import numpy as np

from . import _tapelab as _core
from ._tapelab import (EngineUnavailable, Kernel, KernelStats, Metrics, Plan, Result, Tape, engines, op_names,
                       parse_plan, parse_tape, read_plan, read_tape, strategies)

__version__ = _core.__version__
__all__ = ["EngineUnavailable", "Kernel", "KernelStats", "Metrics", "OPS", "Plan", "Recorder", "Result", "Tape",
           "compile", "draws", "engines", "from_jax", "op_names", "parse_plan", "parse_tape", "plan", "price", "product",
           "products", "read_plan", "read_tape", "strategies", "tune"]

OPS = tuple(op_names())  # op spellings by op code: OPS[tape.op[i]]
PLAN_FORMAT = "tapelab-plan 1"


for _line in _core._unknown_variables():  # as the CLI warns: a misspelt variable is never silently a default
    warnings.warn("tapelab: " + _line, RuntimeWarning, stacklevel=2)


def _invalid(message):
    return ValueError("tapelab: " + message)


def product(name, steps=None, assets=None, max_nodes=None, **params):
    """A product's tape, as `tapelab price --product NAME` records it: steps= and assets= as --steps and
    --assets, any other keyword a structural parameter (--param NAME=VALUE; tapelab.products() lists them),
    e.g. product("lmm", forwards=40), product("barrier", steps=50, smoothing=0.005). Input values are set
    at pricing time (inputs={...}, the CLI's --set). Its size is estimated from the parameters first: over
    max_nodes (default TAPELAB_MAX_NODES, else 2,000,000; the CLI's --max-nodes) it is refused (ValueError
    naming the parameters) before anything is recorded."""
    return _core._product(name, steps, assets, {k: float(v) for k, v in params.items()},
                          None if max_nodes is None else float(max_nodes))


def _whole(value, name, lo, hi):
    """`value` as an int in lo..hi, or ValueError in the words the CLI uses for a flag (no bool, no float:
    draws(..., first_path=4.7) is not path 4)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise _invalid(f"{name}: expected an integer, got {type(value).__name__} {repr(value)[:40]}")
    if not lo <= int(value) <= hi:
        raise _invalid(f"{name}: expected an integer from {lo} to {hi}, got '{int(value)}'")
    return int(value)


def draws(seed, paths, count, first_path=0):
    """The standard normals every engine uses in fp64: shape (paths, count), row p the draws k = 0..count-1 of
    path first_path + p under `seed` (tape/philox.h's drawNormal). A function of the same draws (JAX, NumPy)
    then gives the same pathwise estimator as a tape. Path indices are 64-bit: a range past 2^64 - 1 is a
    ValueError (as price() says of TAPELAB_PATH_OFFSET), never a wrap to path 0; more values than memory holds
    is MemoryError."""
    last = 2**64 - 1
    seed, first_path = _whole(seed, "seed", 0, last), _whole(first_path, "first_path", 0, last)
    paths, count = _whole(paths, "paths", 1, 2**48), _whole(count, "count", 0, 2**32 - 1)
    if paths - 1 > last - first_path:
        raise _invalid(f"first_path: {first_path} + {paths} paths pass the last 64-bit path index (2^64 - 1); "
                       "the path index would wrap")
    if paths * count > sys.maxsize // 16:  # the draws and their copy into the array
        raise MemoryError(f"tapelab: draws: {paths} x {count} values do not fit in memory")
    raw = _core._draws(seed, first_path, paths, count)
    return np.frombuffer(raw, dtype=np.float64).reshape(paths, count)


def products():
    """Every product: [{"name", "summary", "params": {name: (default, help)}}]."""
    return _core._catalog()


def from_jax(f, inputs, draws, *, name="jax", out=None):
    """A tape from a JAX function f(inputs, z) of a dict of named scalars and K = `draws` standard normals
    (tapelab/jax_import.py): value and gradient equal JAX's on the same draws. out= also writes a .tape file."""
    from .jax_import import from_jax as _from_jax
    return _from_jax(f, inputs, draws, name=name, out=out)


# ---- tapes: the node columns as NumPy arrays (read-only views of copies) -----------------------------

def _column(name, dtype, doc):
    return property(lambda tape: np.frombuffer(tape._column(name), dtype=dtype), doc=doc)


Tape.op = _column("op", np.uint8, "op code per node (OPS[code] is its name)")
Tape.a = _column("a", np.int32, "first argument per node, -1 when none")
Tape.b = _column("b", np.int32, "second argument per node, -1 when none")
Tape.c = _column("c", np.int32, "third argument per node (select), -1 when none")
Tape.imm = _column("imm", np.float64, "const: its value; randn: draw index; input: input ordinal")
Tape.input_nodes = _column("input_nodes", np.int32, "node of each input")
Tape.defaults = _column("defaults", np.float64, "default value of each input")
Tape.op_names = property(lambda tape: np.asarray(OPS, dtype=object)[tape.op], doc="op name per node")
Tape.last_use = lambda tape: np.frombuffer(tape._column("last_use"), dtype=np.int32)
Tape.last_use.__doc__ = "the last node reading each value (the output counts as read at n)"
Tape.live_across = lambda tape: np.frombuffer(tape._column("live_across"), dtype=np.int32)
Tape.live_across.__doc__ = "for c in 0..n: values a cut before node c must keep (planner/liveness.h)"
Tape.first_reverse_read = lambda tape: np.frombuffer(tape._column("first_reverse_read"), dtype=np.int32)
Tape.first_reverse_read.__doc__ = ("per node j, the smallest node whose adjoint rule reads j's value, -1 when the reverse "
                                   "sweep never reads it (planner/liveness.h)")


# ---- plans ---------------------------------------------------------------------------------------------

def _plain_json(x):
    """Python and NumPy values as JSON's: the plan-file reader then checks and names every field."""
    if isinstance(x, dict):
        return {str(k): _plain_json(v) for k, v in x.items()}
    if isinstance(x, (list, tuple, np.ndarray)):
        return [_plain_json(v) for v in x]
    if isinstance(x, np.bool_):
        return bool(x)
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    return x


def _inner_entry(e):
    # A bare list of cuts is short for {"cuts": list}, at any depth.
    if isinstance(e, (list, tuple, np.ndarray)):
        return {"cuts": e}
    if isinstance(e, dict) and isinstance(e.get("inner"), (list, tuple)):
        return {**e, "inner": [_inner_entry(x) for x in e["inner"]]}
    return e


def _tape(tape, label="tape"):
    """The one-line error the README promises for what is not a tape (None, a path, ...)."""
    if not isinstance(tape, Tape):
        raise _invalid(f"{label}: expected a tapelab.Tape (tapelab.product, read_tape, parse_tape), "
                       f"got {type(tape).__name__}")
    return tape


def _integer(value, flag):
    """An int keyword (not a bool, a float or a string), or the one-line ValueError naming the flag."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise _invalid(f"{flag}: expected an integer, got {type(value).__name__} {value!r:.40}")
    return int(value)


def _cuts_plan(tape, cuts, inner, name, label, requested=0, seconds=0.0):
    _tape(tape)
    doc = {"format": PLAN_FORMAT, "tape": {"name": tape.name, "nodes": len(tape), "structure": tape.structure},
           "strategy": name, "cuts": cuts}
    if inner is not None:
        if not isinstance(inner, (list, tuple)):
            raise _invalid(f"{label}: inner: expected a list with one entry per segment")
        try:
            doc["inner"] = [_inner_entry(e) for e in inner]
        except RecursionError:
            raise _invalid(f"{label}: inner: nested deeper than Python can walk (a plan nests at most 256 levels)") from None
    try:
        text = json.dumps(_plain_json(doc), allow_nan=False)
    except RecursionError:
        raise _invalid(f"{label}: inner: nested deeper than Python can walk (a plan nests at most 256 levels)") from None
    except (TypeError, ValueError) as e:
        raise _invalid(f"{label}: {e}") from None
    return parse_plan(text, tape, label, requested, seconds)


def plan(tape, strategy=None, *, segments=16, seglen=None, inner=None, budget=None, cuts=None, name=None):
    """A plan for `tape`.

    plan(tape, "window", segments=16)              a built-in strategy (tapelab.strategies()), with
                                                   seglen (uniform), inner (two-level: sub-segments per
                                                   segment), budget (budget: most values live at once)
    plan(tape, my_strategy, segments=16)           a function strategy(tape, segments) -> cuts or
                                                   {"cuts": [...], "inner": [...]}
    plan(tape, cuts=[96, 192], inner=[...])        given cuts; inner (optional) as in a plan file
    Plan files: tapelab.read_plan(path, tape), tapelab.parse_plan(text, tape).
    """
    _tape(tape)
    if cuts is not None:
        if strategy is not None:
            raise _invalid("plan: give a strategy or cuts, not both")
        return _cuts_plan(tape, cuts, inner, name or "cuts", "cuts")
    if strategy is None:
        strategy = "window"
    if isinstance(strategy, str):
        if inner is not None and not isinstance(inner, int):
            raise _invalid("--inner: a strategy takes a sub-segment count; nested cuts go with cuts=")
        return _core._plan_strategy(tape, strategy, segments, seglen, inner, budget)
    if not callable(strategy):
        raise _invalid(f"plan: a strategy is a name or a function, not {type(strategy).__name__}")
    name = name or "python:" + getattr(strategy, "__name__", "strategy")
    label = f"strategy '{name}'"
    start = time.perf_counter()
    out = strategy(tape, segments)
    seconds = time.perf_counter() - start
    if isinstance(out, dict):
        unknown = set(out) - {"cuts", "inner"}
        if unknown or "cuts" not in out:
            raise _invalid(f"{label}: returned a dict with keys {sorted(out)}; expected cuts and optionally inner")
        return _cuts_plan(tape, out["cuts"], out.get("inner"), name, label, segments, seconds)
    if isinstance(out, (list, tuple, np.ndarray)):
        return _cuts_plan(tape, out, None, name, label, segments, seconds)
    raise _invalid(f"{label}: returned {type(out).__name__}; expected a list of cuts or "
                   "{\"cuts\": [...], \"inner\": [...]}")


_make_plan = plan  # compile() and price() take a plan= keyword


# ---- kernels and runs ----------------------------------------------------------------------------------

def _input_index(tape, name, flag):
    if name not in tape.inputs:
        raise _invalid(f"{flag}: the tape has no input '{name}' (inputs: {', '.join(tape.inputs)})")
    return tape.inputs.index(name)


def _finite(value, flag):
    try:
        v = float(value)
    except (TypeError, ValueError):
        v = math.nan
    if not math.isfinite(v):
        raise _invalid(f"{flag}: '{value}' is not a finite number")
    if v == 0 and isinstance(value, str) and any(c in "123456789" for c in value.lower().split("e")[0]):
        raise _invalid(f"{flag}: '{value}' underflows to zero")  # the CLI's and the tape reader's rule
    return v


def _market(tape, overrides):
    values = list(tape.defaults)
    for name, v in (overrides or {}).items():
        values[_input_index(tape, name, "--set")] = _finite(v, "--set " + name)
    return values


def _market_sets(tape, inputs, ladder):
    """The input sets to price: inputs is one dict of overrides (or a list of them, one per market);
    ladder={name: [v1, v2, ...]} prices one market per value on top of inputs (the CLI's --ladder)."""
    if isinstance(inputs, (list, tuple)):
        if ladder is not None:
            raise _invalid("--ladder: give a ladder or a list of markets, not both")
        if not inputs:
            raise _invalid("inputs: no markets")
        return [_market(tape, m) for m in inputs]
    base = _market(tape, inputs)
    if isinstance(ladder, dict) and isinstance(inputs, dict) and set(ladder) & set(inputs):
        name = sorted(set(ladder) & set(inputs))[0]
        raise _invalid(f"--ladder {name}: --set also sets '{name}'; give the input one or the other")
    if ladder is None:
        return [base]
    if not isinstance(ladder, dict) or len(ladder) != 1:
        raise _invalid("--ladder: expected {NAME: [V1, V2, ...]}")
    (name, values), = ladder.items()
    k = _input_index(tape, name, "--ladder")
    sets = []
    for v in values:
        s = list(base)
        s[k] = _finite(v, "--ladder " + name)
        sets.append(s)
    if not sets:
        raise _invalid("--ladder: no values")
    return sets


def compile(tape, engine=None, *, plan=None, strategy=None, segments=None, checkpoint=None, ckpt_nodes=None,
            seglen=None, inner=None, budget=None, kernel=None, layout=None, precision=None, greeks=True,
            markets=None, dump=None, config=None, knobs=None, inputs=None, ladder=None):
    """A kernel for `tape` on `engine` (default TAPELAB_ENGINE, else reference; "auto": a GPU, else cpu-jit).

    What it cuts: plan= (a Plan), or strategy= (a built-in name with segments=/checkpoint= "off"|"auto"|N,
    seglen=, inner=, budget=; or a Python function, or a list of cuts); by default the CLI's: checkpointed
    with window at 16 segments from ckpt_nodes (768) nodes. kernel= plain|register|scratch,
    precision= fp32|fp64, greeks=False for value only, markets= input sets per dispatch (1..8; default 1, or
    the markets inputs=/ladder= give, at most 8),
    dump= a directory for the generated source, config= "NAME=VALUE,..." the kernel's configuration over the
    engine's defaults (tapelab config --list; the scratch buffer's layout is its field layout=, the keyword
    layout= is retired), knobs= {TAPELAB_VARIABLE: value} as if in the environment.
    inputs=/ladder= (as for run()): the markets run() will price, where known now: the inputs every dispatch's
    markets share (a spot ladder: all but spot) are then read once and what only they reach is computed once
    per path (config shared_inputs, the CLI's ladders); run() then refuses markets that differ in one of them.
    The GIL is released while the kernel compiles; Ctrl-C stops it (KeyboardInterrupt). A request the kernel
    does not follow (strategy= on a tape auto checkpointing leaves whole: the plain kernel runs) warns
    (RuntimeWarning, the CLI's line) and is listed in Kernel.not_used.
    """
    sets = None if inputs is None and ladder is None else _market_sets(_tape(tape), inputs, ladder)
    if markets is None:  # as price(): the markets given, at most 8 a dispatch, else one
        markets = min(len(sets), 8) if sets else 1
    k = _build_kernel(tape, engine, plan=plan, strategy=strategy, segments=segments, checkpoint=checkpoint,
                      ckpt_nodes=ckpt_nodes, seglen=seglen, inner=inner, budget=budget, kernel=kernel, layout=layout,
                      precision=precision, greeks=greeks, markets=markets, dump=dump, config=config, knobs=knobs,
                      sets=sets)
    _warn_not_used(k)
    return k


def _warn_not_used(kernel):
    """Each request the kernel does not follow as the CLI says it on stderr, a RuntimeWarning at the caller of
    compile() or price()."""
    for line in kernel.not_used:
        warnings.warn("tapelab: " + line, RuntimeWarning, stacklevel=3)


def _build_kernel(tape, engine=None, *, plan=None, strategy=None, segments=None, checkpoint=None, ckpt_nodes=None,
                  seglen=None, inner=None, budget=None, kernel=None, layout=None, precision=None, greeks=True,
                  markets=1, dump=None, config=None, knobs=None, sets=None):
    _tape(tape)
    markets = _integer(markets, "--markets")
    if segments is not None:
        if checkpoint is not None:
            raise _invalid("give segments or checkpoint, not both")
        checkpoint = segments
    if strategy is not None and not isinstance(strategy, str):
        if plan is not None:
            raise _invalid("--plan: the file's plan replaces --strategy; give one of them")
        if isinstance(strategy, (list, tuple, np.ndarray)):
            plan = _cuts_plan(tape, strategy, None, "cuts", "cuts")
        else:
            count = {None: 16, "auto": 16, "off": 1}.get(checkpoint, checkpoint)
            plan = _make_plan(tape, strategy, segments=int(count))
        strategy, checkpoint = None, None
    return _core._compile(tape, engine, plan, strategy, checkpoint, ckpt_nodes, seglen, inner, budget, kernel, layout,
                          precision, greeks, markets, dump, config, knobs or {}, sets or [])


def tune(tape, engine, *, markets=1, paths=None, seed=42, budget_seconds=300.0, repeats=3, strategies=None,
         segments=None, plans=4, compile_only=False, store=True, precision=None, greeks=True, config=None,
         knobs=None, progress=None):
    """Search plans x kernel configurations for the fastest exact kernel of one job, as `tapelab tune` does.

    The job: `tape` on `engine` with `markets` input sets per dispatch (a spot ladder 1% apart where the
    tape has "spot"), in `precision` (default the engine's), at the math contract config= may fix
    ("math=approx"; other fields given in config= stay fixed too). Each candidate is timed after a
    warm-up (median of `repeats` runs of `paths` paths; default 1,000,000 on a GPU, 100,000 elsewhere) and
    must give its own plain kernel's bits. Stops starting candidates after `budget_seconds`. The winner
    goes to the tuning cache unless store=False; later compile()/price() calls of the job with the default
    checkpointing use it (Result.tuned names the entry). progress= a function taking one line per step.
    Returns a dict: engine, device, markets, precision, math, paths, compile_only, seconds, budget_spent,
    candidates (ranked dicts: plan, kind, segments, peak_live, config, step, status, bits, mpaths_per_s,
    median_s, spread, seconds, registers, local_bytes), winner, defaults (two of them) and stored.
    """
    return _core._tune(_tape(tape), engine, _integer(markets, "--markets"), paths, seed, float(budget_seconds), int(repeats),
                       list(strategies or []), [int(s) for s in (segments or [])], int(plans), bool(compile_only),
                       bool(store), precision, bool(greeks), config, knobs or {}, progress)


def _kernel_run(self, paths=None, seed=None, inputs=None, ladder=None):
    """Prices the markets (inputs=, ladder=, as for price()) with `paths` paths (default TAPELAB_PATHS, else
    100000) under `seed` (TAPELAB_SEED, else 42), `markets` per dispatch. The GIL is released while it runs."""
    paths, seed = _core._paths_and_seed(paths, seed)
    return self._run(_market_sets(self.tape, inputs, ladder), paths, seed)


Kernel.run = _kernel_run


def price(tape, engine=None, *, paths=None, seed=None, inputs=None, ladder=None, markets=None, **options):
    """Compiles and runs (tapelab price/run): `inputs` overrides input values ({name: value}, the CLI's --set)
    or lists several markets; ladder={name: [values]} prices one market per value, `markets` per dispatch
    (default: all, at most 8). Other keywords: compile()'s. Ctrl-C stops the compile or the run
    (KeyboardInterrupt); a result that is not finite, or a request the kernel does not follow (Result.not_used),
    warns (RuntimeWarning)."""
    sets = _market_sets(_tape(tape), inputs, ladder)
    paths, seed = _core._paths_and_seed(paths, seed)  # checked before anything compiles
    if markets is None:
        markets = min(len(sets), 8) if len(sets) > 1 else 1
    k = _build_kernel(tape, engine, markets=markets, sets=sets, **options)  # what the markets share, read once
    _warn_not_used(k)
    return k._run(sets, paths, seed)


# ---- results: market 0 by name, every market as arrays -------------------------------------------------

def _by_name(result, rows):
    return dict(zip(result.input_names, rows[0])) if result.has_greeks else {}


Result.value = property(lambda r: r._values()[0][0], doc="the first market's value")
Result.stderr = property(lambda r: r._values()[1][0], doc="its standard error")
Result.greeks = property(lambda r: _by_name(r, r._greeks()[0]), doc="the first market's Greeks by input name")
Result.greeks_stderr = property(lambda r: _by_name(r, r._greeks()[1]), doc="their standard errors")
Result.values = property(lambda r: np.array(r._values()[0]), doc="every market's value, shape (markets,)")
Result.stderrs = property(lambda r: np.array(r._values()[1]), doc="their standard errors")
Result.greek_array = property(lambda r: np.array(r._greeks()[0], dtype=np.float64).reshape(len(r), -1),
                              doc="Greeks, shape (markets, inputs): d value / d input (empty without Greeks)")
Result.greek_stderr_array = property(lambda r: np.array(r._greeks()[1], dtype=np.float64).reshape(len(r), -1),
                                     doc="their standard errors, same shape")
Result.config = property(lambda r: r.to_dict()["config"], doc="the kernel's configuration, canonical text")
Result.tuned = property(lambda r: r.to_dict()["tuned"] or None,
                        doc="the tuning cache entry whose winner the kernel uses (tune()), else None")
Result.provenance = property(lambda r: r.to_dict()["provenance"],
                             doc="where the configuration, plan and kind came from: default, tuned or user")
Result.compile_seconds = property(lambda r: r.kernel_stats.compile_seconds, doc="the kernel's compile time")
Result.markets = property(lambda r: [r.to_dict(m) for m in range(len(r))], doc="each market as to_dict() gives it")
Result.__repr__ = lambda r: (f"<tapelab.Result {r.engine} {r.kind} ({r.precision}), {len(r)} market(s), "
                             f"value {r.value!r} ± {r.stderr!r}>")
Result.__repr__.__doc__ = "<tapelab.Result ENGINE KIND (PRECISION), N market(s), value V ± E>"

from .record import Recorder  # noqa: E402  (a tape recorded in Python: tapelab/record.py)

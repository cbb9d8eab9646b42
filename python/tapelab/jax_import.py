"""Models from JAX: tapelab.from_jax(f, inputs, draws=K).

f(inputs, z) is a JAX function of a dict of named scalars and a vector z of K standard normals that
returns a scalar. from_jax traces it once (jax.make_jaxpr, fp64), then evaluates the jaxpr on symbolic
scalars: every arithmetic primitive on them appends one tape node, scans, while loops with a known trip
count and calls are unrolled, vector operations (broadcasts, slices, gathers, dot products, reductions)
become the scalar nodes they stand for, and z[k] becomes `randn k` where it is first read. What depends
on neither inputs nor draws (loop counters, indices, iota) is computed by JAX itself, as concrete values.

The tape is the same pathwise estimator as JAX's value_and_grad on the same draws (tapelab.draws gives
them): equal to rounding (reductions may add in another order). An unsupported primitive is a ValueError
naming it and where it appears in f's source.
"""
import functools
import math

import numpy as np

from . import _tapelab as _core


def _error(message):
    return ValueError("tapelab: from_jax: " + message)


class _Tape:
    """The .tape text being written: inputs first, then nodes in the order they are computed."""

    def __init__(self):
        self.lines = ["tapelab-tape 1"]
        self.count = 0
        self.draw_nodes = {}

    def node(self, text):
        self.lines.append(text)
        self.count += 1
        return self.count - 1

    def ref(self, x):
        """The node of a scalar: a symbolic one's, a draw's (made on first use), a new const for a number."""
        if isinstance(x, _Sym):
            return x.node
        if isinstance(x, _Draw):
            if x.k not in self.draw_nodes:
                self.draw_nodes[x.k] = self.node(f"randn {x.k}")
            return self.draw_nodes[x.k]
        v = float(x)
        if not math.isfinite(v):
            raise _error(f"a constant {v!r} is not finite; a tape's constants are")
        return self.node(f"const {v!r}")

    def op(self, name, *args):
        return _Sym(self, self.node(name + " " + " ".join(str(self.ref(a)) for a in args)))


class _Draw:
    """z[k] before anything reads it."""
    __slots__ = ("tape", "k")

    def __init__(self, tape, k):
        self.tape, self.k = tape, k


class _Sym:
    """A scalar the tape computes: arithmetic on it appends nodes."""
    __slots__ = ("tape", "node")

    def __init__(self, tape, node):
        self.tape, self.node = tape, node

    def __add__(self, o):
        return self if _is_int_zero(o) else self.tape.op("add", self, o)

    def __radd__(self, o):  # NumPy's object sums and products start from the integer 0
        return self if _is_int_zero(o) else self.tape.op("add", o, self)

    def __sub__(self, o):
        return self.tape.op("sub", self, o)

    def __rsub__(self, o):
        return self.tape.op("sub", o, self)

    def __mul__(self, o):
        return self.tape.op("mul", self, o)

    def __rmul__(self, o):
        return self.tape.op("mul", o, self)

    def __truediv__(self, o):
        return self.tape.op("div", self, o)

    def __rtruediv__(self, o):
        return self.tape.op("div", o, self)

    def __neg__(self):
        return self.tape.op("neg", self)


def _is_int_zero(o):
    return isinstance(o, int) and not isinstance(o, bool) and o == 0


def _symbolic(x):
    return isinstance(x, (_Sym, _Draw))


def _is_concrete(v):
    """Neither a symbolic scalar nor an array of them: JAX itself can compute with it."""
    return not (isinstance(v, (_Sym, _Draw)) or (isinstance(v, np.ndarray) and v.dtype == object))


def _row(x, step):
    """Element `step` of a scanned-over array, as an array."""
    return np.asarray(x[step]) if _is_concrete(x) else _array(x[step])


def _objects(v):
    """An array of scalars (symbolic ones, or Python numbers) of v."""
    if isinstance(v, np.ndarray) and v.dtype == object:
        return v
    if isinstance(v, (_Sym, _Draw)):
        return _array(v)
    a = np.asarray(v)
    out = np.empty(a.shape, dtype=object)
    for idx in np.ndindex(a.shape):
        out[idx] = a[idx].item()
    return out


def _array(r):
    """NumPy hands a 0-d result back as its element: an object array again."""
    if isinstance(r, np.ndarray):
        return r.astype(object) if r.dtype != object else r
    out = np.empty((), dtype=object)
    out[()] = r
    return out


def _lift(x, tape):
    """A scalar as something arithmetic works on: draws and numbers become nodes where they meet one."""
    return x if isinstance(x, _Sym) else _Sym(tape, tape.ref(x))


class _Importer:
    def __init__(self, jax, tape):
        self.jax, self.lax, self.tape = jax, jax.lax, tape
        self.where = ""

    # ---- elementwise helpers
    def elementwise(self, fn, *args):
        """fn on the elements of args (broadcast), symbolic where any argument is."""
        objs = [_objects(a) for a in args]
        return _array(np.frompyfunc(fn, len(objs), 1)(*objs))

    def unary(self, name):
        t = self.tape
        return lambda v: self.elementwise(lambda x: t.op(name, x), v)

    def binary(self, name):
        t = self.tape
        return lambda x, y: self.elementwise(lambda a, b: t.op(name, a, b), x, y)

    def reduce(self, v, axes, fold):
        v = _objects(v)
        keep = [d for d in range(v.ndim) if d not in axes]
        moved = np.transpose(v, keep + list(axes))
        rows = moved.reshape(int(np.prod([v.shape[d] for d in keep], dtype=np.int64)), -1)
        out = np.empty(rows.shape[0], dtype=object)
        for r in range(rows.shape[0]):
            out[r] = functools.reduce(fold, list(rows[r]))
        return out.reshape([v.shape[d] for d in keep])

    # ---- data movement by index arrays: the primitive run by JAX on element numbers
    def move(self, eqn, args, movable):
        """A primitive whose every output element is a copy of one input element (slices, gathers,
        broadcasts, reshapes, concatenations): JAX runs it on element numbers, which then pick the
        elements. `movable`: which arguments carry data (the others, indices, pass as they are)."""
        pool, ids = [], []
        for a, m in zip(args, movable):
            if not m:
                ids.append(a)
                continue
            o = _objects(a)
            ids.append(np.arange(len(pool), len(pool) + o.size, dtype=np.int32).reshape(o.shape))
            pool.extend(o.reshape(-1).tolist())
        picked = np.asarray(eqn.primitive.bind(*ids, **eqn.params))
        flat = np.empty(len(pool), dtype=object)
        flat[:] = pool
        return _array(flat[picked])

    # ---- the evaluator
    def run(self, jaxpr, consts, args):
        env = {}

        def read(v):
            if type(v).__name__ == "Literal":
                return np.asarray(v.val)
            return env[v]

        for var, val in zip(jaxpr.constvars, consts):
            env[var] = val
        for var, val in zip(jaxpr.invars, args):
            env[var] = val
        for eqn in jaxpr.eqns:
            ins = [read(v) for v in eqn.invars]
            outs = self.apply(eqn, ins)
            if not eqn.primitive.multiple_results:
                outs = [outs]
            for var, val in zip(eqn.outvars, outs):
                env[var] = val
        return [read(v) for v in jaxpr.outvars]

    def where_of(self, eqn):
        try:
            from jax._src import source_info_util
            return source_info_util.summarize(eqn.source_info)
        except Exception:  # the summary is best effort: older and newer JAX keep it elsewhere
            return "?"

    def apply(self, eqn, ins):
        name = eqn.primitive.name
        p = eqn.params
        if all(_is_concrete(v) for v in ins) and name not in ("scan", "while", "cond", "pjit", "closed_call",
                                                               "custom_jvp_call", "custom_vjp_call",
                                                               "custom_vjp_call_jaxpr", "remat", "checkpoint"):
            out = eqn.primitive.bind(*ins, **p)  # nothing symbolic: JAX computes it
            return [np.asarray(o) for o in out] if eqn.primitive.multiple_results else np.asarray(out)
        t = self.tape
        handler = self.handlers().get(name)
        if handler is None:
            raise _error(f"unsupported primitive '{name}' at {self.where_of(eqn)} "
                         f"(supported: {', '.join(sorted(self.handlers()))})")
        try:
            return handler(eqn, ins, p, t)
        except ValueError as e:
            if str(e).startswith("tapelab: from_jax:"):
                raise
            raise _error(f"primitive '{name}' at {self.where_of(eqn)}: {e}") from None

    @functools.lru_cache(maxsize=None)
    def handlers(self):
        u, b, t = self.unary, self.binary, self.tape
        op = lambda name: (lambda e, i, p, t: b(name)(i[0], i[1]))  # noqa: E731
        one = lambda name: (lambda e, i, p, t: u(name)(i[0]))  # noqa: E731
        moved = lambda e, i, p, t: self.move(e, i, [True] * len(i))  # noqa: E731

        def sym_only(fn):
            return lambda e, i, p, t: self.elementwise(fn, *i)

        def integer_pow(e, i, p, t):
            y = int(p["y"])

            def power(x):
                x = _lift(x, t)
                if y == 0:
                    return 1.0
                r, base, n = None, x, abs(y)
                while n:  # square and multiply, as XLA expands it
                    if n & 1:
                        r = base if r is None else r * base
                    n >>= 1
                    if n:
                        base = base * base
                return r if y > 0 else 1.0 / r
            return self.elementwise(power, i[0])

        def compare(name, swap):
            return lambda e, i, p, t: self.elementwise(
                lambda x, y: t.op(name, y, x) if swap else t.op(name, x, y), i[0], i[1])

        def eq(e, i, p, t):
            return self.elementwise(lambda x, y: t.op("mul", t.op("le", x, y), t.op("le", y, x)), i[0], i[1])

        def select_n(e, i, p, t):
            if len(i) != 3:
                raise ValueError(f"select_n with {len(i) - 1} cases (two are supported: jnp.where)")
            pred, c0, c1 = i
            if _is_concrete(pred):
                return _array(np.where(np.asarray(pred).astype(bool), _objects(c1), _objects(c0)))
            return self.elementwise(lambda c, x0, x1: t.op("select", c, x1, x0), pred, c0, c1)

        def logistic(x):
            return 1.0 / (1.0 + t.op("exp", -_lift(x, t)))

        def sign(x):
            return t.op("sub", t.op("lt", 0.0, x), t.op("lt", x, 0.0))

        def clamp(e, i, p, t):
            lo, x, hi = i
            return self.elementwise(lambda a, v, c: t.op("max", t.op("min", v, c), a), lo, x, hi)

        def reduce_with(opname):
            return lambda e, i, p, t: self.reduce(i[0], tuple(p["axes"]), lambda x, y: t.op(opname, x, y))

        def reduce_sum(e, i, p, t):
            return self.reduce(i[0], tuple(p["axes"]), lambda x, y: _lift(x, t) + y)

        def cumsum(e, i, p, t):
            v = _objects(i[0])
            axis, rev = p["axis"], p.get("reverse", False)
            v = np.moveaxis(v, axis, -1).copy()
            rng = range(v.shape[-1] - 1, -1, -1) if rev else range(v.shape[-1])
            acc = None
            out = np.empty_like(v)
            for idx in np.ndindex(v.shape[:-1]):
                acc = None
                for k in rng:
                    acc = v[idx + (k,)] if acc is None else _lift(acc, t) + v[idx + (k,)]
                    out[idx + (k,)] = acc
            return np.moveaxis(out, -1, axis)

        def dot_general(e, i, p, t):
            (lc, rc), (lb, rb) = p["dimension_numbers"]
            x, y = _objects(i[0]), _objects(i[1])
            lf = [d for d in range(x.ndim) if d not in lc and d not in lb]
            rf = [d for d in range(y.ndim) if d not in rc and d not in rb]
            xs = np.transpose(x, list(lb) + lf + list(lc))
            ys = np.transpose(y, list(rb) + list(rc) + rf)
            nb = int(np.prod([x.shape[d] for d in lb], dtype=np.int64))
            m = int(np.prod([x.shape[d] for d in lf], dtype=np.int64))
            k = int(np.prod([x.shape[d] for d in lc], dtype=np.int64))
            n = int(np.prod([y.shape[d] for d in rf], dtype=np.int64))
            xm, ym = xs.reshape(nb, m, k), ys.reshape(nb, k, n)
            out = np.empty((nb, m, n), dtype=object)
            for bi in range(nb):
                for r in range(m):
                    for c in range(n):
                        acc = None
                        for q in range(k):
                            term = _lift(xm[bi, r, q], t) * ym[bi, q, c]
                            acc = term if acc is None else acc + term
                        out[bi, r, c] = acc if acc is not None else 0.0
            return out.reshape([x.shape[d] for d in lb] + [x.shape[d] for d in lf] + [y.shape[d] for d in rf])

        def convert(e, i, p, t):
            dt = np.dtype(p["new_dtype"])
            if dt.kind not in "fb":
                raise ValueError(f"converts a traced value to {dt} (only floats and booleans are traced)")
            return _objects(i[0])

        def call(param):
            def run(e, i, p, t):
                inner = p[param]
                consts = list(getattr(inner, "consts", []))
                jaxpr = getattr(inner, "jaxpr", inner)
                return self.run(jaxpr, [np.asarray(c) for c in consts], i)
            return run

        def scan(e, i, p, t):
            body = p["jaxpr"]
            nc, nk = p["num_consts"], p["num_carry"]
            consts, carry, xs = i[:nc], list(i[nc:nc + nk]), i[nc + nk:]
            ys = []
            steps = range(p["length"] - 1, -1, -1) if p["reverse"] else range(p["length"])
            for step in steps:
                out = self.run(body.jaxpr, [np.asarray(c) for c in body.consts],
                               list(consts) + carry + [_row(x, step) for x in xs])
                carry, y = out[:nk], out[nk:]
                ys.append(y)
            if p["reverse"]:
                ys.reverse()
            stacked = []
            for k in range(len(body.jaxpr.outvars) - nk):
                col = [y[k] for y in ys]
                if all(_is_concrete(c) for c in col):
                    stacked.append(np.stack([np.asarray(c) for c in col]) if col else np.zeros((0,)))
                else:
                    stacked.append(np.stack([_objects(c) for c in col]))
            return carry + stacked

        def while_loop(e, i, p, t):
            cc, bc = p["cond_nconsts"], p["body_nconsts"]
            cconsts, bconsts, carry = i[:cc], i[cc:cc + bc], list(i[cc + bc:])
            cj, bj = p["cond_jaxpr"], p["body_jaxpr"]
            for _ in range(10_000_000):
                go = self.run(cj.jaxpr, [np.asarray(c) for c in cj.consts], list(cconsts) + carry)[0]
                if not _is_concrete(go):
                    raise ValueError("a while loop whose condition depends on inputs or draws (its trip count "
                                     "must not: use lax.scan or fori_loop with fixed bounds)")
                if not bool(np.asarray(go)):
                    return carry
                carry = self.run(bj.jaxpr, [np.asarray(c) for c in bj.consts], list(bconsts) + carry)
            raise ValueError("a while loop of more than 10,000,000 trips")

        def cond(e, i, p, t):
            index = i[0]
            if not _is_concrete(index):
                raise ValueError("lax.cond on a value that depends on inputs or draws (use jnp.where: both "
                                 "branches are computed and one is selected)")
            br = p["branches"][int(np.asarray(index))]
            return self.run(br.jaxpr, [np.asarray(c) for c in br.consts], i[1:])

        h = {
            "add": op("add"), "sub": op("sub"), "mul": op("mul"), "div": op("div"), "max": op("max"),
            "min": op("min"), "pow": op("pow"), "neg": one("neg"), "exp": one("exp"), "log": one("log"),
            "sqrt": one("sqrt"), "abs": one("abs"), "tanh": one("tanh"),
            "lt": compare("lt", False), "le": compare("le", False), "gt": compare("lt", True),
            "ge": compare("le", True), "eq": eq,
            "ne": lambda e, i, p, t: self.elementwise(lambda v: 1.0 - _lift(v, t), eq(e, i, p, t)),
            "and": op("mul"), "or": op("max"),
            "not": lambda e, i, p, t: self.elementwise(lambda v: 1.0 - _lift(v, t), i[0]),
            "select_n": select_n, "integer_pow": integer_pow,
            "square": sym_only(lambda x: _lift(x, t) * x),
            "rsqrt": sym_only(lambda x: 1.0 / t.op("sqrt", x)),
            "logistic": sym_only(logistic), "sign": sym_only(sign),
            "exp2": sym_only(lambda x: t.op("exp", _lift(x, t) * math.log(2.0))),
            "log1p": sym_only(lambda x: t.op("log", 1.0 + _lift(x, t))),
            "expm1": sym_only(lambda x: t.op("exp", x) - 1.0),
            "clamp": clamp, "reduce_sum": reduce_sum, "reduce_max": reduce_with("max"),
            "reduce_min": reduce_with("min"), "cumsum": cumsum, "dot_general": dot_general,
            "convert_element_type": convert, "copy": lambda e, i, p, t: i[0], "copy_p": lambda e, i, p, t: i[0],
            "stop_gradient": lambda e, i, p, t: i[0],
            "broadcast_in_dim": moved, "reshape": moved, "squeeze": moved, "expand_dims": moved,
            "transpose": moved, "slice": moved, "concatenate": moved, "rev": moved, "pad": moved,
            "dynamic_slice": lambda e, i, p, t: self.move(e, i, [True] + [False] * (len(i) - 1)),
            "dynamic_update_slice": lambda e, i, p, t: self.move(e, i, [True, True] + [False] * (len(i) - 2)),
            "gather": lambda e, i, p, t: self.move(e, i, [True, False]),
            "scan": scan, "while": while_loop, "cond": cond,
            "pjit": call("jaxpr"), "closed_call": call("call_jaxpr"), "core_call": call("call_jaxpr"),
            "remat": call("jaxpr"), "checkpoint": call("jaxpr"), "custom_jvp_call": call("call_jaxpr"),
            "custom_vjp_call": call("call_jaxpr"), "custom_vjp_call_jaxpr": call("fun_jaxpr"),
        }
        return h


MAX_DRAWS = 1 << 20  # standard normals per path: far past any model's (a 252-step, 5-asset basket reads 1,260)


def _draw_count(draws):
    """K: an integer from 1 to MAX_DRAWS (not a bool, not 4.7: a truncated count would read fewer draws than
    f does; not 2**40: JAX would try to allocate them)."""
    import numbers
    if isinstance(draws, bool) or not isinstance(draws, numbers.Integral):
        raise _error(f"draws: expected an integer, got {type(draws).__name__} {repr(draws)[:40]}")
    if not 1 <= int(draws) <= MAX_DRAWS:
        raise _error(f"draws: expected an integer from 1 to {MAX_DRAWS} (the standard normals f reads per path), "
                     f"got '{int(draws)}'")
    return int(draws)


def from_jax(f, inputs, draws, *, name="jax", out=None):
    """A tapelab Tape from f(inputs, z) (module docstring). `inputs`: {name: default value}; `draws`: K.
    Returns the Tape; out= also writes it as a .tape file."""
    draws = _draw_count(draws)  # before JAX allocates anything for them
    try:
        import jax
    except ImportError:
        raise _error("needs jax (pip install 'jax[cpu]'; scripts/setup.sh installs it)") from None
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    if not isinstance(inputs, dict) or not inputs:
        raise _error("inputs: expected a dict {name: default value} with at least one entry")
    names = list(inputs)
    defaults = [float(inputs[k]) for k in names]

    def g(xs, z):
        return f(dict(zip(names, xs)), z)

    closed = jax.make_jaxpr(g)(tuple(jnp.asarray(v, dtype=jnp.float64) for v in defaults),
                               jnp.zeros((draws,), dtype=jnp.float64))
    out_vars = closed.jaxpr.outvars
    if len(out_vars) != 1 or tuple(getattr(out_vars[0].aval, "shape", ())) != ():
        raise _error("f must return one scalar (the value to price)")

    tape = _Tape()
    for k, v in zip(names, defaults):
        tape.lines.append(f"input {k} {v!r}")
        tape.count += 1
    args = []
    for k in range(len(names)):
        s = np.empty((), dtype=object)
        s[()] = _Sym(tape, k)
        args.append(s)
    z = np.empty((draws,), dtype=object)
    for k in range(draws):
        z[k] = _Draw(tape, k)
    args.append(z)
    importer = _Importer(jax, tape)
    result = importer.run(closed.jaxpr, [np.asarray(c) for c in closed.consts], args)[0]
    value = _objects(result).reshape(())[()]
    node = tape.ref(value)
    tape.lines.append(f"output {node}")
    text = "\n".join(tape.lines) + "\n"
    t = _core.parse_tape(text, f"from_jax({name})", str(name))  # the tape is called `name` (CSVs, plans, figures)
    if out is not None:
        t.write(str(out))
    return t

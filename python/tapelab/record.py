"""Record a tape in Python with ordinary operators, as the C++ Recorder does (tape/recorder.h).

    import tapelab
    from tapelab.record import Recorder, exp, sqrt, maximum

    rec = Recorder("my-asian")
    spot, strike = rec.input("spot", 100.0), rec.input("strike", 100.0)
    z = rec.randn(0)
    s = spot * exp(0.5 * z)
    rec.output(maximum(s - strike, 0.0))
    tape = rec.tape()                    # a tapelab.Tape, ready for plan(), compile(), price()

Semantics are the C++ Recorder's, node for node, so the same recording gives the same tape (the
same bits on every engine): every operation appends one node in the order Python evaluates it; a
number beside a recorded value becomes a `const` node appended just before the operation (`x * 2.0`:
const 2, then mul x const; `2.0 * x`: const 2, then mul const x); `-x` is `neg`, `abs(x)` is `abs`.
Every op of the table (`tapelab.OPS`) is a function here, spelled as in the `.tape` format
(`exp(x)`, `max(x, y)`, and any op the table gains); `maximum`/`minimum` are aliases of `max`/`min`
that do not shadow Python's built-ins. Comparisons of recorded values (`<`, `>`) are not recorded: a
comparison op of the table, where it has one, is called by its name. The tape is checked when it is
made (`rec.tape()`: the `.tape` reader's checks and messages, e.g. an output missing).
"""
import math as _math

from . import _tapelab as _core

__all__ = ["Recorder", "Var", "maximum", "minimum"]


def _ops():
    return tuple(_core.op_names())


def _literal(x):
    """17 significant digits: the .tape format's, so write-then-read is exact."""
    x = float(x)
    if _math.isnan(x) or _math.isinf(x):
        raise ValueError(f"tapelab: a constant must be finite, got {x}")
    return repr(x) if float(repr(x)) == x else f"{x:.17g}"


class Var:
    """A recorded value: node `node` of `recorder`'s tape."""

    __slots__ = ("recorder", "node")

    def __init__(self, recorder, node):
        """Made by the Recorder's methods and ops, not by hand."""
        self.recorder, self.node = recorder, node

    def __repr__(self):
        return f"<tapelab.record.Var node {self.node} of {self.recorder.name!r}>"

    def _bin(self, op, other, reflected=False):
        other = self.recorder._value(other)
        return self.recorder.op(op, other, self) if reflected else self.recorder.op(op, self, other)

    def __add__(self, o): return self._bin("add", o)
    def __radd__(self, o): return self._bin("add", o, True)
    def __sub__(self, o): return self._bin("sub", o)
    def __rsub__(self, o): return self._bin("sub", o, True)
    def __mul__(self, o): return self._bin("mul", o)
    def __rmul__(self, o): return self._bin("mul", o, True)
    def __truediv__(self, o): return self._bin("div", o)
    def __rtruediv__(self, o): return self._bin("div", o, True)
    def __neg__(self): return self.recorder.op("neg", self)
    def __abs__(self): return self.recorder.op("abs", self)

    def __bool__(self):
        raise TypeError("tapelab: a recorded value has no truth value while recording (use an op of the "
                        "table, e.g. max or a comparison op, instead of if/and/or)")


class Recorder:
    """Appends nodes as operations run; `tape()` returns the tapelab.Tape, `text()` its .tape text."""

    def __init__(self, name="python"):
        """A new, empty recording; `name` (one word) names the tape."""
        if not isinstance(name, str) or not name or any(c.isspace() for c in name):
            raise ValueError(f"tapelab: a tape name is one word, got {name!r}")
        self.name = name
        self._lines = []    # one .tape line per node
        self._names = set()
        self._output = None

    def __len__(self):
        """Nodes recorded so far."""
        return len(self._lines)

    def _push(self, line):
        self._lines.append(line)
        return Var(self, len(self._lines) - 1)

    def _value(self, x):
        if isinstance(x, Var):
            if x.recorder is not self:
                raise ValueError("tapelab: a value of another recording")
            return x
        if isinstance(x, (int, float)) and not isinstance(x, bool):
            return self.constant(x)
        raise TypeError(f"tapelab: cannot record {type(x).__name__} {x!r} (a number or a recorded value)")

    def input(self, name, default):
        """A named input (its adjoint is a Greek) with its default value."""
        if not isinstance(name, str) or not name or any(c.isspace() or c == "#" for c in name):
            raise ValueError(f"tapelab: an input name is one word without '#', got {name!r}")
        if name in self._names:
            raise ValueError(f"tapelab: input '{name}' recorded twice")
        self._names.add(name)
        return self._push(f"input {name} {_literal(default)}")

    def constant(self, value):
        """A `const` node of a finite number (numbers beside recorded values become these by themselves)."""
        return self._push(f"const {_literal(value)}")

    def randn(self, k):
        """Standard normal draw number k of the path (the same k: the same draw)."""
        if not isinstance(k, int) or isinstance(k, bool) or not 0 <= k < 2 ** 32:
            raise ValueError(f"tapelab: a draw index is an integer in [0, 2^32), got {k!r}")
        return self._push(f"randn {k}")

    def op(self, name, *args):
        """Node `name args...` for any op of the table (tapelab.OPS), arguments recorded values or numbers."""
        if name not in _ops() or name in ("const", "input", "randn"):
            raise ValueError(f"tapelab: no op '{name}' to apply (ops: {', '.join(_ops())})")
        nodes = [self._value(a).node for a in args]
        return self._push(" ".join([name] + [str(n) for n in nodes]))

    def output(self, v):
        """The tape's output: the value priced, whose adjoints are the Greeks. Once: a tape has one output,
        and a second call is a ValueError (it would silently replace the first)."""
        if self._output is not None:
            raise ValueError(f"tapelab: Recorder.output: the output is recorded already (node {self._output}); "
                             "a tape has one output")
        self._output = self._value(v).node

    def text(self):
        """The recording in the .tape text format."""
        if self._output is None:
            raise ValueError("tapelab: no output recorded (Recorder.output(value))")
        return "tapelab-tape 1\n" + f"# {self.name}: {len(self._lines)} nodes\n" + "\n".join(self._lines) + \
            f"\noutput {self._output}\n"

    def tape(self):
        """The tapelab.Tape of the recording (checked by the .tape reader), named after the recorder."""
        return _core.parse_tape(self.text(), f"<recording {self.name}>", self.name)


# Numbers alone are not recorded: an op of numbers is a number, as std::sqrt(double) is in C++
# (sqrt(dt) with dt a float is a constant, not a node), computed with Python's math.
_NUMERIC = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b, "neg": lambda a: -a, "abs": abs, "exp": _math.exp, "log": _math.log,
    "sqrt": _math.sqrt, "pow": _math.pow, "tanh": _math.tanh,
    "max": lambda a, b: a if a >= b else b, "min": lambda a, b: a if a <= b else b,
    "lt": lambda a, b: 1.0 if a < b else 0.0, "le": lambda a, b: 1.0 if a <= b else 0.0,
    "select": lambda a, b, c: b if a > 0 else c,
}


def _function(name):
    def f(*args):
        rec = next((a.recorder for a in args if isinstance(a, Var)), None)
        if rec is None:
            if name in _NUMERIC and all(isinstance(a, (int, float)) for a in args):
                return float(_NUMERIC[name](*(float(a) for a in args)))
            raise TypeError(f"tapelab: {name}() of numbers alone has no Python meaning here; "
                            "give it a recorded value")
        return rec.op(name, *args)
    f.__name__ = name
    f.__doc__ = f"Records op '{name}' of the table on its arguments (recorded values or numbers)."
    return f


def __getattr__(name):  # every op of the table, including those added after this file
    if name in _ops() and name not in ("const", "input", "randn"):
        return _function(name)
    raise AttributeError(f"module 'tapelab.record' has no attribute '{name}'")


def maximum(x, y):
    """max(x, y) as the table defines it (its adjoint goes to x when x >= y)."""
    return _function("max")(x, y)


def minimum(x, y):
    """min(x, y) as the table defines it (its adjoint goes to x when x <= y)."""
    return _function("min")(x, y)

"""Timings a researcher can defend: interleaved repeats, medians with confidence intervals, paired
ratios, the machine's load and the device's name, and a warning where the noise decides a comparison.

* Interleaved: every kernel of a comparison is compiled and warmed up first, then each round runs
  every kernel once, in an order rotated every other round and reversed in odd rounds (A B, B A,
  B A, A B), so a load change or a clock step hits every kernel alike instead of one of them.
* Median and its confidence interval: the distribution-free interval of order statistics
  [x_(j), x_(n+1-j)], j the largest with P(Binomial(n, 1/2) < j) <= (1 - level) / 2; with fewer
  than 6 runs no interval reaches 95% and [min, max] is given with its coverage (5 runs: 93.8%).
* Ratios from medians, paired by round: kernel A against B is the median of the per-round ratios
  a_r / b_r (a run pair shares the machine's state), with the same interval. A ratio whose
  interval holds 1 is "not resolved": the noise of this run decides it, and the table says so.
"""
import math
import os
import platform
import socket
import statistics

LEVEL = 0.95
NOISY = 0.10  # a median whose interval is wider than this (relative) is flagged noisy


def machine():
    """The machine's state for a table header: host, cores, load averages (1, 5, 15 min)."""
    try:
        load = os.getloadavg()
    except OSError:
        load = (float("nan"),) * 3
    return {"host": socket.gethostname(), "cpus": os.cpu_count() or 0, "load": tuple(round(x, 2) for x in load),
            "cpu": cpu_model()}


def cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def device_name(engine, info):
    """What runs `engine`: the CPU for cpu-jit and the interpreters, else the driver's device (lavapipe,
    PoCL, the GPU's name) from tapelab.engines()'s reason, which names the device where it is usable."""
    if engine.startswith(("cpu-jit", "reference")):
        return cpu_model()
    reason = (info or {}).get("reason", "")
    return reason or engine


def served_by_cpu(engine, info):
    return engine.startswith(("cpu-jit", "reference")) or bool((info or {}).get("cpu_device"))


def order_of(keys, r):
    """Round r's order: the keys rotated by r // 2, reversed in odd rounds (A B, B A, B A, A B, ...; with
    three: A B C, C B A, B C A, A C B, ...): each kernel runs first, and last, as often as the others."""
    k = list(keys)
    if not k:
        return k
    shift = (r // 2) % len(k)
    k = k[shift:] + k[:shift]
    return k[::-1] if r % 2 else k


def interleaved(runs, repeats, warmup=1, progress=None):
    """runs: {key: fn} with fn() -> seconds. Each fn runs `warmup` times, then `repeats` rounds in
    order_of's order. Returns {key: [seconds of each round]} (round order kept, for paired ratios)."""
    for _ in range(warmup):
        for fn in runs.values():
            fn()
    out = {key: [None] * repeats for key in runs}
    for r in range(repeats):
        for key in order_of(runs, r):
            out[key][r] = runs[key]()
        if progress:
            progress(r + 1, repeats)
    return out


def _binom_cdf(k, n):
    return sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n


def median_ci(xs, level=LEVEL):
    """(low, high, coverage) of the median of xs: order statistics, no assumption on the distribution."""
    s = sorted(xs)
    n = len(s)
    if n == 0:
        return None, None, 0.0
    j = 0
    while j + 1 <= n // 2 and _binom_cdf(j, n) <= (1 - level) / 2:  # P(Bin < j+1) = cdf(j)
        j += 1
    j = max(j, 1)
    return s[j - 1], s[n - j], 1 - 2 * _binom_cdf(j - 1, n)


class Stat:
    """A median with its interval: value, low, high, coverage, n; spread = (high - low) / value."""

    def __init__(self, xs, level=LEVEL):
        self.n = len(xs)
        self.value = statistics.median(xs) if xs else None
        self.low, self.high, self.coverage = median_ci(xs, level)
        self.min = min(xs) if xs else None
        self.max = max(xs) if xs else None

    @property
    def spread(self):
        if not self.value:
            return None
        return (self.high - self.low) / self.value

    def holds(self, x):
        return self.low is not None and self.low <= x <= self.high

    def noisy(self):
        return self.spread is not None and self.spread > NOISY


def ratio(base, other):
    """Stat of base_r / other_r over the rounds both ran (e.g. plain ms / kernel ms: above 1, faster)."""
    return Stat([b / o for b, o in zip(base, other) if b and o])


def verdict(r, what):
    """'' when the ratio's interval excludes 1, else one line saying the noise decides it."""
    if r.value is None or not r.holds(1.0):
        return ""
    return (f"{what}: {r.value:.3g}x, interval [{r.low:.3g}, {r.high:.3g}] holds 1 "
            f"({100 * r.coverage:.0f}% coverage, {r.n} paired runs): not resolved at this noise")


def sig(x, digits=3):
    """x at `digits` significant figures, plainly ('1.23', '0.0456', '12,300')."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    if x == 0:
        return "0"
    e = math.floor(math.log10(abs(x)))
    dec = max(0, digits - 1 - e)
    v = round(x, dec if dec else -(e - digits + 1))
    return f"{v:,.{dec}f}"


def with_interval(s, scale=1.0, digits=3):
    """'1.23 [1.20, 1.31]': a Stat's median and interval at 3 significant figures."""
    if s is None or s.value is None:
        return "-"
    return f"{sig(s.value * scale, digits)} [{sig(s.low * scale, digits)}, {sig(s.high * scale, digits)}]"


def header_line(m, devices, precision, paths, repeats, level=LEVEL):
    """The line every table and figure caption starts with: load, devices, precision, paths, repeats."""
    dev = "; ".join(f"{e}: {d}" for e, d in devices.items())
    return (f"machine {m['host']} ({m['cpus']} cores, load {m['load'][0]:.2f}/{m['load'][1]:.2f}/{m['load'][2]:.2f}); "
            f"devices {dev}; precision {precision}; {paths:,} paths a run; {repeats} interleaved rounds after a warm-up; "
            f"medians with order-statistic intervals of {100 * median_ci(range(repeats), level)[2]:.1f}% coverage")

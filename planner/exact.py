"""tapelab's exact strategy: the kept set of a per-value plan as a mixed-integer program (HiGHS).

Run by `tapelab ... --strategy exact` (planner/exact.h embeds this file and runs it as a strategy
process, the same way as --strategy-cmd): it reads the tape's summary (planner/external.h: ops,
arguments, instruction weights, the values each adjoint rule reads, last uses, adjoints live, the
reverse sweep's blocks and the budget) and writes a plan file ("tapelab-plan 2", per-value).

The model, over the blocks B given (the reverse sweep's grouping; planner/plan.h's per-value family):
  x[j]     j is kept (inputs and the output always; a constant never: it is a literal)
  r[s, j]  block s recomputes j (j among the values block s can need: ancestors of what its adjoint
           rules read)
  P        the kept values' count (+ inputs and output)
  required    j read by an adjoint rule of block s:          r[s, j] + x[j] >= 1
  closure     i recomputed in s reads j:                     r[s, j] + x[j] >= r[s, i]
  peak_live <= budget at every point planner/metrics.h counts, with the same lifetimes:
    forward   P + #{j not kept, j <= i < lastUse[j]} <= L
    recompute P + adjointsLive[end_s] + #{recomputed j <= i still read at or after i} <= L
              (a value an adjoint rule of s reads: live to the block's reverse; another: until its last
              recomputed reader, z[s, j, i] >= r[s, k] - x[j] for readers k > i, z monotone in i)
    reverse   P + adjointsLive[i] + #{recomputed j whose first adjoint reader in s is below i} <= L
  minimise    sum over s, j of weight[j] * r[s, j]      (the plan's recompute_cost)
The time limit (--time-limit, the request's time_limit) counts the request's clock: wall (HiGHS's own
limit) or cpu (this process's processor time, through HiGHS's interrupt callbacks); the plan's solver
seconds are on that clock. It is exact over every kept set for the blocks given: the plan the C++ side derives from the x it
returns has exactly this recompute_cost and a peak_live within the budget (tests check both). A time
limit ends the search with the best plan found, the best bound and the gap.

Exit status: 0 with a plan; 2 with one line when no kept set fits the budget (or the input is bad);
3 with one line when highspy is not installed.
"""
import argparse
import json
import sys
import time


def die(status, line):
    print("exact: " + line, file=sys.stderr)
    sys.exit(status)


class Model:
    """Columns with costs and bounds, rows in CSR, built in lists and handed to HiGHS at once."""

    def __init__(self):
        self.cost, self.lo, self.hi, self.integer = [], [], [], []
        self.starts, self.index, self.value, self.rlo, self.rhi = [], [], [], [], []
        self.budget_rows, self.budget_less = [], []  # the peak_live rows: row <= budget - less

    def budget_row(self, terms, L, less):
        self.budget_rows.append(len(self.rlo))
        self.budget_less.append(less)
        self.row(terms, -float("inf"), L - less)

    def var(self, cost=0.0, lo=0.0, hi=1.0, integer=True):
        self.cost.append(cost)
        self.lo.append(lo)
        self.hi.append(hi)
        self.integer.append(integer)
        return len(self.cost) - 1

    def row(self, terms, lo, hi):
        self.starts.append(len(self.index))
        for j, a in terms:
            self.index.append(j)
            self.value.append(a)
        self.rlo.append(lo)
        self.rhi.append(hi)


def ancestors(args, seeds, fixed):
    """Every value reachable from `seeds` through arguments, the fixed (always kept) ones excluded."""
    seen, stack = set(), [j for j in seeds if not fixed[j]]
    seen.update(stack)
    while stack:
        i = stack.pop()
        for j in args[i]:
            if not fixed[j] and j not in seen:
                seen.add(j)
                stack.append(j)
    return seen


def build(summary):
    n = summary["tape"]["nodes"]
    ops, args, weight = summary["op"], summary["args"], summary["weight"]
    reads = summary["adjoint_reads"]
    last, adj = summary["last_use"], summary["adjoints_live"]
    bounds, L = summary["request"]["blocks"], summary["request"]["budget"]
    fixed = [op == "input" for op in ops]
    fixed[summary["output"]] = True
    m = Model()
    INF = float("inf")
    x = {}
    for j in range(n):
        if not fixed[j] and ops[j] != "const":
            x[j] = m.var()
    fixed_count = sum(fixed)
    P = m.var(lo=fixed_count, hi=n, integer=True)
    m.row([(P, 1.0)] + [(c, -1.0) for c in x.values()], fixed_count, fixed_count)

    def not_kept(j):  # terms and constant of "1 - x[j]"
        return ([(x[j], -1.0)], 1.0) if j in x else ([], 1.0)

    readers = [[] for _ in range(n)]
    for i in range(n):
        for j in set(args[i]):
            readers[j].append(i)
    # Forward points.
    live = []
    starts_at = [[] for _ in range(n + 1)]
    for j in range(n):
        if not fixed[j] and last[j] > j:
            starts_at[j].append(j)
    active = set()
    for i in range(n):
        active.update(starts_at[i])
        active = {j for j in active if last[j] - 1 >= i}
        terms, const = [(P, 1.0)], 0.0
        for j in active:
            t, c = not_kept(j)
            terms += t
            const += c
        m.budget_row(terms, L, const)
    r = {}
    for s in range(len(bounds) - 1):
        block(m, s, bounds[s], bounds[s + 1], ops, args, weight, reads, readers, adj, fixed, x, P, L, r)
    return m, x, r


def block(m, s, b, e, ops, args, weight, reads, readers, adj, fixed, x, P, L, r):
    INF = float("inf")
    first_reader = {}  # j -> the smallest node of [b, e) whose adjoint rule reads j
    for i in range(e - 1, b - 1, -1):
        for j in reads[i]:
            first_reader[j] = i
    reach = sorted(ancestors(args, first_reader.keys(), fixed))
    rv = {}
    for j in reach:
        rv[j] = m.var(cost=weight[j])
        r[(s, j)] = rv[j]
    for j in first_reader:
        if fixed[j]:
            continue
        m.row([(rv[j], 1.0)] + ([(x[j], 1.0)] if j in x else []), 1.0, INF)
    for i in reach:
        for j in set(args[i]):
            if fixed[j]:
                continue
            m.row([(rv[j], 1.0), (rv[i], -1.0)] + ([(x[j], 1.0)] if j in x else []), 0.0, INF)
    # Reverse points R(i), i in [b, e).
    for i in range(b, e):
        terms = [(P, 1.0)] + [(rv[j], 1.0) for j, f in first_reader.items() if not fixed[j] and f < i]
        m.budget_row(terms, L, adj[i])
    # Recompute points Q(i): values an adjoint rule reads stay to the end; others until their last
    # recomputed reader (z, monotone).
    inreach = set(reach)
    z = {}
    for j in reach:
        if j in first_reader:
            continue
        later = [k for k in readers[j] if k in inreach]
        if not later:
            continue
        top = max(later)
        zs = [m.var(integer=False) for _ in range(j, top)]  # z[j][i - j], i in [j, top)
        z[j] = zs
        for a in range(len(zs) - 1):
            m.row([(zs[a], 1.0), (zs[a + 1], -1.0)], 0.0, INF)
        for k in later:
            if k > j:
                m.row([(zs[k - 1 - j], 1.0), (rv[k], -1.0)] + ([(x[j], 1.0)] if j in x else []), 0.0, INF)
    points = sorted({i for j, zs in z.items() for i in range(j, j + len(zs))} | {e - 1})
    held = sorted(j for j in first_reader if j in rv)
    for i in points:
        terms = [(P, 1.0)] + [(rv[j], 1.0) for j in held if j <= i]
        for j, zs in z.items():
            if j <= i < j + len(zs):
                terms.append((zs[i - j], 1.0))
        m.budget_row(terms, L, adj[e])


class Solver:
    """The model built once and handed to HiGHS; solved at one budget after another (the front)."""

    def __init__(self, summary, threads):
        try:
            import highspy
        except ImportError:
            die(3, "needs the highspy package (HiGHS): /usr/bin/python3 -m pip install highspy (scripts/setup.sh installs it)")
        import numpy as np
        self.hs, self.np, self.summary = highspy, np, summary
        self.cpu_clock = summary["request"].get("clock", "wall") == "cpu"
        m, self.x, _ = build(summary)
        self.m = m
        h = self.h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("mip_rel_gap", 0.0)
        h.setOptionValue("mip_abs_gap", 1e-6)
        if threads > 0:
            h.setOptionValue("threads", threads)
        ncol = len(m.cost)
        h.addVars(ncol, np.array(m.lo, dtype=float), np.array(m.hi, dtype=float))
        h.changeColsCost(ncol, np.arange(ncol, dtype=np.int32), np.array(m.cost, dtype=float))
        ints = np.array([k for k, f in enumerate(m.integer) if f], dtype=np.int32)
        h.changeColsIntegrality(len(ints), ints, np.full(len(ints), highspy.HighsVarType.kInteger))
        h.addRows(len(m.rlo), np.array(m.rlo, dtype=float), np.array(m.rhi, dtype=float), len(m.index),
                  np.array(m.starts, dtype=np.int32), np.array(m.index, dtype=np.int32), np.array(m.value, dtype=float))
        self.deadline = None
        if self.cpu_clock:  # the limit counts this process's processor time (HiGHS runs in it)
            def stop_at_cpu_limit(e):
                if self.deadline is not None and time.process_time() > self.deadline:
                    e.interrupt()
            h.cbMipInterrupt.subscribe(stop_at_cpu_limit)
            h.cbSimplexInterrupt.subscribe(stop_at_cpu_limit)

    def run(self, L, time_limit, t0, cpu0, start=None):
        """(keep, solver dict) at budget L, or (None, status line) when no kept set fits. The limit covers
        the time since (t0, cpu0) too (the model's build for the first budget)."""
        h, hs, np, m = self.h, self.hs, self.np, self.m
        rows = np.array(m.budget_rows, dtype=np.int32)
        h.changeRowsBounds(len(rows), rows, np.full(len(rows), -hs.kHighsInf),
                           L - np.array(m.budget_less, dtype=float))
        if self.cpu_clock:
            self.deadline = cpu0 + time_limit
        else:
            h.setOptionValue("time_limit", max(1.0, float(time_limit) - (time.monotonic() - t0)))
        if start is not None:  # a plan for a tighter budget fits this one: HiGHS starts from it
            sol = hs.HighsSolution()
            sol.col_value = list(start)
            sol.value_valid = True
            h.setSolution(sol)
        h.run()
        status, info = h.getModelStatus(), h.getInfo()
        seconds, cpu_seconds = time.monotonic() - t0, time.process_time() - cpu0
        S = hs.HighsModelStatus
        if status == S.kInfeasible:
            return None, "infeasible"
        if info.primal_solution_status != 2:  # no feasible solution
            return None, f"no plan found within the time limit of {time_limit} s (HiGHS: {h.modelStatusToString(status)})"
        col = list(h.getSolution().col_value)
        keep = sorted(j for j, c in self.x.items() if col[c] > 0.5)
        objective, bound = info.objective_function_value, info.mip_dual_bound
        optimal = status == S.kOptimal
        gap = 0.0 if optimal else (max(0.0, (objective - bound) / objective) if objective > 0 else 0.0)
        return keep, {"status": "optimal" if optimal else "feasible", "objective": objective,
                      "bound": objective if optimal else bound, "gap": gap,
                      "seconds": round(cpu_seconds if self.cpu_clock else seconds, 3),
                      "name": "HiGHS " + hs.Highs().version(), "_col": col}


def plan_of(summary, keep, solver):
    bounds = summary["request"]["blocks"]
    return {"format": "tapelab-plan 2", "tape": summary["tape"], "strategy": "exact", "family": "per-value",
            "cuts": bounds[1:-1], "keep": keep, "solver": {k: v for k, v in solver.items() if not k.startswith("_")}}


def solve(summary, time_limit, threads):
    """The plan at the request's budget (a plan file's JSON), or exits 2 (infeasible) or 1 (no plan in time)."""
    t0, cpu0 = time.monotonic(), time.process_time()
    keep, solver = Solver(summary, threads).run(summary["request"]["budget"], time_limit, t0, cpu0)
    if keep is None and solver == "infeasible":
        die(2, f"no kept set keeps peak_live within {summary['request']['budget']} over these "
               f"{len(summary['request']['blocks']) - 1} blocks (the model is infeasible)")
    if keep is None:
        die(1, solver)
    return plan_of(summary, keep, solver)


def front(summary, time_limit, threads):
    """The front (a "tapelab-front 1" file's JSON): the optimum at each budget of the request's "front",
    tightest first, each within time_limit on the request's clock, the model built once; a budget no kept
    set fits says "infeasible", one whose search found no plan in time says so."""
    t0, cpu0 = time.monotonic(), time.process_time()
    solver, points, start = Solver(summary, threads), [], None
    for L in sorted(set(summary["request"]["front"])):
        keep, s = solver.run(L, time_limit, t0, cpu0, start)
        if keep is None:
            points.append({"budget": L, "status": s})
        else:
            start = s["_col"]
            points.append({"budget": L, "status": s["status"], "plan": plan_of(summary, keep, s)})
        t0, cpu0 = time.monotonic(), time.process_time()
    return {"format": "tapelab-front 1", "tape": summary["tape"], "points": points}


def main(argv):
    p = argparse.ArgumentParser(prog="exact", description=__doc__.split("\n")[0])
    p.add_argument("--summary", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--time-limit", type=float, default=60.0)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--tape", help="ignored (the summary has what the model needs)")
    p.add_argument("--segments", help="ignored (the summary's blocks)")
    p.add_argument("--budget", help="ignored (the summary's budget)")
    a = p.parse_args(argv)
    try:
        with open(a.summary) as f:
            summary = json.load(f)
    except (OSError, ValueError) as e:
        die(2, f"{a.summary}: {e}")
    out = front(summary, a.time_limit, a.threads) if summary["request"].get("front") else \
        solve(summary, a.time_limit, a.threads)
    with open(a.out, "w") as f:
        json.dump(out, f)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])

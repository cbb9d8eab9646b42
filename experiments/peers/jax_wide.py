#!/usr/bin/env python3
"""JAX peers for the wide products (tape/products/wide.cpp and the LMM): the same models, value and every
Greek by jax.value_and_grad of the mean payoff over a batch of paths (lax.scan over the steps, the paths a
batch axis: XLA's own vectorisation, the strongest plain-JAX formulation), draws generated inside the
jitted function (jax.random.normal). One market per call; Mpath/s and Greeks x Mpath/s, median of
--repeats timed calls after a compile and warm-up call on another key.

  bucketed      steps, buckets        Asian with one vol per time bucket
  localvol      steps, strikes, times local-vol surface by ramp weights (the tape's), vega per node
  hestonbasket  assets, steps         correlated Heston assets, the correlations' Cholesky factor differentiated
  lmm           forwards              LIBOR market model cap, one factor, spot measure

The models are the tapes' arithmetic (python/tests/test_wide.py checks the Heston basket and the local-vol
surface against tapelab on tapelab's own draws to rounding); --check does the same here for every product
with the tapelab module (tapelab.draws on the same seed: the estimators agree to rounding).

    python3 experiments/peers/jax_wide.py --products hestonbasket --assets 5 --steps 252 --paths 1000000   # GPU, fp32
    python3 experiments/peers/jax_wide.py --platform cpu --fp64 --quick --check                             # here
"""
import argparse
import math
import os
import sys

import numpy as np

PRODUCTS = ["bucketed", "localvol", "hestonbasket", "lmm"]


def parse():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--products", default=",".join(PRODUCTS))
    ap.add_argument("--paths", type=int, nargs="+", default=[1000000])
    ap.add_argument("--steps", type=int, default=None, help="steps of every product (default: each product's)")
    ap.add_argument("--assets", type=int, default=5)
    ap.add_argument("--buckets", type=int, default=None, help="bucketed: vol buckets (default: steps)")
    ap.add_argument("--strikes", type=int, default=20)
    ap.add_argument("--times", type=int, default=12)
    ap.add_argument("--forwards", type=int, default=80)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--batch", type=int, default=0,
                    help="paths per chunk: value_and_grad over chunks of this many paths in a lax.map inside the jitted "
                         "function, averaged (equal chunks: the same estimator), so the reverse sweep's residuals fit the "
                         "GPU (the 5 x 252 basket at 1M paths at once needs 63.5 GiB; H100 2026-12-06b); 0: every path at once")
    ap.add_argument("--platform", choices=["gpu", "cpu"], default=None, help="JAX platform (default: JAX's)")
    ap.add_argument("--fp64", action="store_true", help="double precision (jax_enable_x64)")
    ap.add_argument("--quick", action="store_true", help="tiny sizes (a dry run): 8 steps, 3 assets, 8 forwards, 4096 paths")
    ap.add_argument("--check", action="store_true", help="also check each model against tapelab on tapelab's draws")
    ap.add_argument("--out", help="also write the CSV here")
    a = ap.parse_args()
    if a.quick:
        a.steps, a.assets, a.forwards, a.strikes, a.times, a.paths, a.repeats = 8, 3, 8, 5, 3, [4096], 2
    return a


args = parse()
if args.platform:
    os.environ["JAX_PLATFORMS"] = args.platform
import jax  # noqa: E402  (after the environment is set)
import jax.numpy as jnp  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from jax_timing import timed_seconds  # noqa: E402  (the peers' one timing rule)

if args.fp64 or args.check:
    jax.config.update("jax_enable_x64", True)
DT = jnp.float64 if (args.fp64 or args.check) else jnp.float32


# ---- the models: f(p, z) -> mean payoff, p a dict of named inputs, z (paths, draws) standard normals

def bucketed(steps, buckets):
    bucket = np.array([i * buckets // steps for i in range(steps)])
    names = ["spot", "strike"] + [f"vol{b + 1}" for b in range(buckets)] + ["rate", "maturity"]
    defaults = [100.0, 100.0] + [0.2] * buckets + [0.03, 1.0]

    def f(p, z):
        vol = jnp.stack([p[f"vol{b + 1}"] for b in range(buckets)])[bucket]
        dt = p["maturity"] * (1.0 / steps)
        drift = (p["rate"] - 0.5 * (vol * vol)) * dt
        vsd = vol * jnp.sqrt(dt)

        def step(c, x):
            s, acc = c
            zt, d, v = x
            s = s * jnp.exp(d + v * zt)
            return (s, acc + s), None
        init = (jnp.full(z.shape[0], p["spot"], z.dtype), jnp.zeros(z.shape[0], z.dtype))
        (_, acc), _ = jax.lax.scan(step, init, (z.T, drift, vsd))
        pay = jnp.maximum(acc / steps - p["strike"], 0.0) * jnp.exp(-(p["rate"] * p["maturity"]))
        return jnp.mean(pay)
    return names, defaults, steps, f


def localvol(steps, strikes, times):
    h = 2.0 / (strikes - 1)
    grid = np.array([-1.0 + j * h for j in range(strikes)])
    names = ["spot", "strike", "rate", "maturity"] + [f"vol_t{k}_x{j}" for k in range(times) for j in range(strikes)]
    defaults = [100.0, 100.0, 0.03, 1.0] + [0.2 - 0.06 * grid[j] / (1 + k / (times - 1))
                                            for k in range(times) for j in range(strikes)]
    tau = np.arange(steps) / steps * (times - 1)
    col = np.minimum(tau.astype(int), times - 2)
    a = tau - col

    def f(p, z):
        vol = jnp.stack([jnp.stack([p[f"vol_t{k}_x{j}"] for j in range(strikes)]) for k in range(times)])
        dt = p["maturity"] * (1.0 / steps)
        sq = jnp.sqrt(dt)

        def step(y, x):
            zt, k, w = x
            node = (1.0 - w) * vol[k] + w * vol[k + 1]
            # The tape's ties: max(r, 0) sends a tie to r, min(1, r) to the constant (where, not maximum/minimum,
            # which split a tie's gradient): every path starts on a grid node when the strike count is odd.
            r = (y[:, None] - math.log(100.0) - grid[None, :-1]) * (1.0 / h)
            r = jnp.where(r >= 0.0, r, 0.0)
            ramps = jnp.where(1.0 <= r, 1.0, r)
            sigma = node[0] + jnp.sum((node[1:] - node[:-1]) * ramps, axis=1)
            y = y + (p["rate"] - 0.5 * (sigma * sigma)) * dt + sigma * sq * zt
            return y, None
        y0 = jnp.full(z.shape[0], jnp.log(p["spot"]), z.dtype)
        y, _ = jax.lax.scan(step, y0, (z.T, col, a.astype(np.float64)))
        pay = jnp.maximum(jnp.exp(y) - p["strike"], 0.0) * jnp.exp(-(p["rate"] * p["maturity"]))
        return jnp.mean(pay)
    return names, defaults, steps, f


def hestonbasket(m, steps):
    names, defaults = [], []
    for i in range(m):
        n = str(i + 1)
        names += ["spot" + n, "v0_" + n, "kappa" + n, "theta" + n, "xi" + n, "rho" + n]
        defaults += [100.0, 0.04 + 0.005 * i, 1.5 + 0.1 * i, 0.04 + 0.002 * i, 0.3 + 0.02 * i, -0.7 + 0.05 * i]
    for i in range(m):
        for j in range(i):
            names.append(f"corr{j + 1}_{i + 1}")
            defaults.append(0.2 + 0.2 * 0.5 ** (i - j))
    names += ["strike", "rate", "maturity"]
    defaults += [100.0, 0.03, 1.0]

    def f(p, z):
        c = [[1.0 if i == j else p[f"corr{min(i, j) + 1}_{max(i, j) + 1}"] for j in range(m)] for i in range(m)]
        chol = jnp.linalg.cholesky(jnp.stack([jnp.stack([jnp.asarray(x, z.dtype) for x in row]) for row in c]))
        vec = lambda key: jnp.stack([p[f"{key}{i + 1}"] for i in range(m)])  # noqa: E731
        spot, v0, kappa, theta, xi, rho = (vec(k) for k in ("spot", "v0_", "kappa", "theta", "xi", "rho"))
        dt = p["maturity"] * (1.0 / steps)
        sq = jnp.sqrt(dt)
        rhobar = jnp.sqrt(1.0 - rho * rho)

        def step(c, zt):
            x, v = c
            w = zt[:, :m] @ chol.T
            u = rho * w + rhobar * zt[:, m:]
            vp = jnp.where(v > 0.0, v, 0.0)  # full truncation; where, not maximum (see test_wide.py)
            sd = jnp.sqrt(jnp.where(v >= 1e-30, v, 1e-30)) * sq  # the tape's floor under the square root
            x = x + (p["rate"] - 0.5 * vp) * dt + sd * w
            v = v + kappa * (theta - vp) * dt + xi * sd * u
            return (x, v), None
        n = z.shape[0]
        zs = z.reshape(n, steps, 2 * m).transpose(1, 0, 2)
        (x, _), _ = jax.lax.scan(step, (jnp.zeros((n, m), z.dtype), jnp.broadcast_to(v0, (n, m))), zs)
        total = jnp.sum(spot * jnp.exp(x), axis=1) * (1.0 / m)
        return jnp.mean(jnp.maximum(total - p["strike"], 0.0) * jnp.exp(-(p["rate"] * p["maturity"])))
    return names, defaults, 2 * m * steps, f


def lmm(forwards, tau=0.25):
    names = [f"f{k}" for k in range(forwards)] + [f"vol{k}" for k in range(forwards)] + ["strike"]
    defaults = [0.04 + 0.0005 * k for k in range(forwards)] + [0.2 - 0.001 * k for k in range(forwards)] + [0.045]
    st = math.sqrt(tau)
    idx = np.arange(forwards)

    def f(p, z):
        vol = jnp.stack([p[f"vol{k}"] for k in range(forwards)])
        f0 = jnp.stack([p[f"f{k}"] for k in range(forwards)])
        n = z.shape[0]
        fw = jnp.broadcast_to(f0, (n, forwards))
        account = 1.0 + tau * fw[:, 0]
        cap = tau * jnp.maximum(fw[:, 0] - p["strike"], 0.0) / account

        def step(c, x):
            fw, account, cap = c
            zt, i = x
            later = idx > i  # forwards not yet fixed move; their drift sums the older ones' terms
            tf = tau * fw
            term = jnp.where(later, tf * vol / (1.0 + tf), 0.0)
            drift = vol * jnp.cumsum(term, axis=1) * tau - 0.5 * (vol * vol) * tau
            fw = jnp.where(later, fw * jnp.exp(drift + vol * (st * zt[:, None])), fw)
            nxt = jnp.take(fw, i + 1, axis=1)
            account = account * (1.0 + tau * nxt)
            cap = cap + tau * jnp.maximum(nxt - p["strike"], 0.0) / account
            return (fw, account, cap), None
        (_, _, cap), _ = jax.lax.scan(step, (fw, account, cap), (z.T, jnp.arange(forwards - 1)))
        return jnp.mean(cap)
    return names, defaults, forwards - 1, f


def model(product):
    if product == "bucketed":
        steps = args.steps or 252
        return bucketed(steps, args.buckets or steps), {"steps": steps, "buckets": args.buckets or steps}
    if product == "localvol":
        steps = args.steps or 100
        return localvol(steps, args.strikes, args.times), {"steps": steps, "strikes": args.strikes, "times": args.times}
    if product == "hestonbasket":
        steps = args.steps or 252
        return hestonbasket(args.assets, steps), {"assets": args.assets, "steps": steps}
    if product == "lmm":
        return lmm(args.forwards), {"forwards": args.forwards}
    sys.exit(f"jax_wide.py: --products: unknown '{product}' ({', '.join(PRODUCTS)})")




def check(product, names, defaults, draws, f, params):
    """The model's estimator against tapelab's on tapelab's own draws (fp64): they agree to rounding."""
    import tapelab
    tape = tapelab.product(product, **params)
    assert list(tape.inputs) == names, f"{product}: the model's inputs are not the tape's"
    paths = 512
    z = jnp.asarray(tapelab.draws(11, paths, draws))
    value, grads = jax.value_and_grad(f)(dict(zip(names, map(jnp.float64, defaults))), z)
    r = tapelab.price(tape, "reference", paths=paths, seed=11, precision="fp64", checkpoint="off")
    floor = 1e-9 * max(abs(g) for g in r.greeks.values())  # a Greek of 0 against JAX's 1e-16
    worst = max(abs(float(grads[k]) - r.greeks[k]) / max(abs(r.greeks[k]), floor) for k in names)
    ok = abs(float(value) - r.value) <= 1e-9 * abs(r.value) and worst <= 1e-7
    print(f"# check {product}: value {float(value):.12g} vs tapelab {r.value:.12g}, worst Greek relative "
          f"difference {worst:.2e}: {'ok' if ok else 'DIFFERENT'}", flush=True)
    return ok


def main():
    dev = jax.devices()[0]
    rows = [f"# jax {jax.__version__} on {dev.platform}:{dev.device_kind}, {'fp64' if DT == jnp.float64 else 'fp32'}",
            "product,params,inputs,draws,paths,median_s,mpaths_per_s,greeks,mgreek_paths_per_s,value,min_s,max_s"]
    print("\n".join(rows), flush=True)
    failed = False
    for product in args.products.split(","):
        (names, defaults, draws, f), params = model(product)
        if args.check:
            failed |= not check(product, names, defaults, draws, f, params)
        p0 = {k: jnp.asarray(v, DT) for k, v in zip(names, defaults)}
        key = jax.random.PRNGKey(42)
        for paths in args.paths:
            batch = args.batch if 0 < args.batch < paths else paths
            if paths % batch:
                sys.exit(f"jax_wide.py: --batch {batch} does not divide --paths {paths}")
            chunk = lambda p, k: jax.value_and_grad(f)(p, jax.random.normal(k, (batch, draws), dtype=DT))  # noqa: E731
            if batch == paths:
                vg = jax.jit(chunk)
            else:  # equal chunks, one after another: the mean of their means is the mean over every path
                vg = jax.jit(lambda p, k: jax.tree_util.tree_map(
                    lambda x: jnp.mean(x, axis=0), jax.lax.map(lambda kk: chunk(p, kk), jax.random.split(k, paths // batch))))
            call = lambda i: vg(p0, jax.random.fold_in(key, i))  # noqa: E731
            t, t_min, t_max = timed_seconds(call, args.repeats)
            value = float(call(0)[0])
            mps = paths / t / 1e6
            ptext = " ".join(f"{k}={v}" for k, v in params.items()) + (f" batch={batch}" if batch < paths else "")
            row = (f"{product},{ptext},{len(names)},{draws},{paths},{t:.6f},{mps:.4f},{len(names)},"
                   f"{mps * len(names):.4f},{value:.9g},{t_min:.6f},{t_max:.6f}")
            rows.append(row)
            print(row, flush=True)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write("\n".join(rows) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

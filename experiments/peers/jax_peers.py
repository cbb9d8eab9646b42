#!/usr/bin/env python3
"""JAX peers for the main job: the 252-step arithmetic Asian call (tapelab's
products::asianCall: spot, strike, vol, rate, maturity; drift (r - v^2/2) dt,
v sqrt(dt); payoff max(mean - K, 0) e^{-rT}), value and its five Greeks by
jax.value_and_grad over a lax.scan, draws generated inside the jitted function.

Formulations (all in one run, so they share the machine's state):
  one       one market per call, the way tapelab's single-market kernels run
  ladder    the 7-point spot ladder as a JAX user writes it: jax.vmap of
            value_and_grad over the spots, the normals drawn once and shared
            (the strongest formulation: compare tapelab's ladder with this)
  ladder-loop  the ladder as 7 calls of `one` (what comparing one market suggests)
Each runs price only and value + 5 Greeks. Mpath/s counts market-paths (a
ladder of 7 spots over N paths is 7N), median of --repeats timed calls after a
warm-up on another key. CSV on stdout (and --out), one row per measurement.

    python3 experiments/peers/jax_peers.py --paths 1000000 4000000           # GPU (fp32)
    python3 experiments/peers/jax_peers.py --platform cpu --fp64 --threads 1 --paths 100000
"""
import argparse
import os
import sys


def parse():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--paths", type=int, nargs="+", default=[1000000, 4000000])
    ap.add_argument("--steps", type=int, default=252)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--spots", type=float, nargs="+", default=[85, 90, 95, 100, 105, 110, 115])
    ap.add_argument("--formulations", nargs="+", default=["one", "ladder", "ladder-loop"],
                    choices=["one", "ladder", "ladder-loop"])
    ap.add_argument("--platform", choices=["gpu", "cpu"], default=None, help="JAX platform (default: JAX's)")
    ap.add_argument("--fp64", action="store_true", help="double precision (jax_enable_x64)")
    ap.add_argument("--threads", type=int, default=0, help="CPU: run on this many cores (0: all)")
    ap.add_argument("--out", help="also write the CSV here")
    return ap.parse_args()


args = parse()
if args.platform:
    os.environ["JAX_PLATFORMS"] = args.platform
if args.threads:  # pin the process: XLA's CPU thread pools then use these cores only
    os.sched_setaffinity(0, set(sorted(os.sched_getaffinity(0))[:args.threads]))
    if args.threads == 1:
        os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen=false"
import jax  # noqa: E402  (after the environment is set)
import jax.numpy as jnp  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from jax_timing import timed_seconds  # noqa: E402  (the peers' one timing rule)

if args.fp64:
    jax.config.update("jax_enable_x64", True)
DT = jnp.float64 if args.fp64 else jnp.float32


def price_fn(steps):
    def price(params, z):
        spot, strike, vol, rate, maturity = params
        dt = maturity * (1.0 / steps)
        drift = (rate - 0.5 * (vol * vol)) * dt
        vsd = vol * jnp.sqrt(dt)

        def step(carry, zt):
            s, acc = carry
            s = s * jnp.exp(drift + vsd * zt)
            return (s, acc + s), None

        init = (jnp.full(z.shape[1:], spot, DT), jnp.zeros(z.shape[1:], DT))
        (_, acc), _ = jax.lax.scan(step, init, z)
        payoff = jnp.maximum(acc / steps - strike, 0.0) * jnp.exp(-(rate * maturity))
        return jnp.mean(payoff)
    return price


def build(steps, paths, spots):
    price = price_fn(steps)
    draws = lambda key: jax.random.normal(key, (steps, paths), dtype=DT)

    def one_price(params, key):
        return price(params, draws(key))

    def one_greeks(params, key):
        return jax.value_and_grad(price)(params, draws(key))

    spot_vec = jnp.array(spots, DT)

    def with_spot(params, s):
        return params.at[0].set(s)

    def ladder_price(params, key):
        z = draws(key)  # drawn once, shared by the seven markets
        return jax.vmap(lambda s: price(with_spot(params, s), z))(spot_vec)

    def ladder_greeks(params, key):
        z = draws(key)
        return jax.vmap(lambda s: jax.value_and_grad(price)(with_spot(params, s), z))(spot_vec)

    return {k: jax.jit(f) for k, f in dict(one_price=one_price, one_greeks=one_greeks,
                                           ladder_price=ladder_price, ladder_greeks=ladder_greeks).items()}




def main():
    base = jnp.array([100.0, 100.0, 0.2, 0.03, 1.0], DT)
    key = jax.random.PRNGKey(42)
    k = lambda i: jax.random.fold_in(key, i)
    dev = jax.devices()[0]
    rows = [f"# jax {jax.__version__} on {dev.platform}:{dev.device_kind}, {'fp64' if args.fp64 else 'fp32'}, "
            f"{args.steps} steps, spots {args.spots}",
            "formulation,pass,paths,markets,median_s,mpaths_per_s,value_at_spot100,delta_at_spot100,min_s,max_s"]
    print("\n".join(rows), flush=True)
    mid = args.spots.index(100.0) if 100.0 in args.spots else 0
    for paths in args.paths:
        f = build(args.steps, paths, args.spots)
        n = len(args.spots)
        for form in args.formulations:
            for kind in ("price", "greeks"):
                if form == "one":
                    call = lambda i: f[f"one_{kind}"](base, k(i))
                    markets = 1
                elif form == "ladder":
                    call = lambda i: f[f"ladder_{kind}"](base, k(i))
                    markets = n
                else:
                    def call(i, kind=kind):
                        return [f[f"one_{kind}"](base.at[0].set(s), k(i)) for s in args.spots]
                    markets = n
                t, t_min, t_max = timed_seconds(call, args.repeats)
                out = call(0)
                if form == "one":
                    value = out[0] if kind == "greeks" else out
                    delta = out[1][0] if kind == "greeks" else float("nan")
                elif form == "ladder":
                    value = (out[0] if kind == "greeks" else out)[mid]
                    delta = out[1][mid][0] if kind == "greeks" else float("nan")
                else:
                    value = out[mid][0] if kind == "greeks" else out[mid]
                    delta = out[mid][1][0] if kind == "greeks" else float("nan")
                row = (f"{form},{'value+5greeks' if kind == 'greeks' else 'price'},{paths},{markets},{t:.6f},"
                       f"{markets * paths / t / 1e6:.2f},{float(value):.9g},{float(delta):.9g},{t_min:.6f},{t_max:.6f}")
                rows.append(row)
                print(row, flush=True)
    if args.out:  # through the careful writer (experiments/drivers/careful.py): never a directory or a device replaced
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "drivers"))
        import careful
        careful.write_output(args.out, "\n".join(rows) + "\n")


if __name__ == "__main__":
    sys.exit(main())

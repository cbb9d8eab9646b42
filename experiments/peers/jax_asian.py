#!/usr/bin/env python3
"""Peer baseline: the 252-step arithmetic Asian call in JAX, value and the five
Greeks by jax.value_and_grad over a lax.scan, fp32, draws generated inside the
jitted function (as tapelab's kernels generate theirs). Prints Mpath/s as the
median of timed runs after a warm-up, one line per (paths, pass).

    python3 experiments/peers/jax_asian.py --paths 1000000 4000000 [--repeats 7]

Runs wherever JAX runs (the H200 image has it); CPU JAX works but says nothing
about GPUs.
"""
import argparse
import statistics
import time

import jax
import jax.numpy as jnp


def make(steps, paths):
    def price(params, key):
        spot, strike, vol, rate, maturity = params
        dt = maturity / steps
        drift = (rate - 0.5 * vol * vol) * dt
        vsd = vol * jnp.sqrt(dt)
        z = jax.random.normal(key, (steps, paths), dtype=jnp.float32)

        def step(carry, zt):
            s, acc = carry
            s = s * jnp.exp(drift + vsd * zt)
            return (s, acc + s), None

        init = (jnp.full((paths,), spot, jnp.float32), jnp.zeros((paths,), jnp.float32))
        (_, acc), _ = jax.lax.scan(step, init, z)
        payoff = jnp.maximum(acc / steps - strike, 0.0) * jnp.exp(-rate * maturity)
        return jnp.mean(payoff)

    return jax.jit(price), jax.jit(jax.value_and_grad(price))


def timed(fn, params, key, repeats):
    jax.block_until_ready(fn(params, jax.random.fold_in(key, 1)))  # compile + warm up
    times = []
    for i in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(fn(params, jax.random.fold_in(key, 2 + i)))
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--paths", type=int, nargs="+", default=[1000000, 4000000])
    ap.add_argument("--steps", type=int, default=252)
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    params = jnp.array([100.0, 100.0, 0.2, 0.03, 1.0], dtype=jnp.float32)
    key = jax.random.PRNGKey(42)
    print(f"jax {jax.__version__} on {jax.devices()[0]}")
    print("paths,pass,median_s,mpaths_per_s,value,delta,vega")
    for paths in args.paths:
        price, greeks = make(args.steps, paths)
        tp = timed(price, params, key, args.repeats)
        tg = timed(greeks, params, key, args.repeats)
        v, g = greeks(params, key)
        print(f"{paths},price,{tp:.6f},{paths / tp / 1e6:.1f},{float(price(params, key)):.6f},,")
        print(f"{paths},value+5greeks,{tg:.6f},{paths / tg / 1e6:.1f},{float(v):.6f},{float(g[0]):.6f},{float(g[2]):.6f}")


if __name__ == "__main__":
    main()

"""The wide products (tape/products/wide.cpp) against independent answers, and the size bound.

Oracles: JAX on the same draws (tapelab.draws) for the Heston basket, its correlations' Cholesky factor
included, and for the local-volatility surface; QuantLib's analytic Heston engine on a one-asset slice of
the basket. (tests/tape/test_tape_wide.cpp checks the bucket sums and finite differences on the reference.)
Sizes: a product too large together is refused before recording, in well under a second and a few
hundred MB, from Python and the CLI alike.
"""
import math
import resource
import subprocess
import time

import numpy as np
import pytest

import tapelab

from conftest import engine_or_skip
from test_zoo import assert_same_estimator, jax_mean, jax_or_skip, price, quantlib, ql_european, within


def test_wide_products_state_their_sizes():
    names = [p["name"] for p in tapelab.products()]
    assert {"bucketed", "localvol", "hestonbasket"} <= set(names)
    b = tapelab.product("bucketed")
    assert len(b.inputs) == 252 + 4 and b.draws == 252
    lv = tapelab.product("localvol")
    assert len(lv.inputs) == 4 + 20 * 12 >= 200
    hb = tapelab.product("hestonbasket")
    assert len(hb.inputs) == 6 * 5 + 10 + 3 and hb.draws == 2 * 5 * 252 and hb.pipe_width >= 10
    big = tapelab.product("hestonbasket", assets=10, steps=1260)
    assert len(big) == 440323 and len(big.inputs) == 108
    assert len(tapelab.product("lmm", forwards=80).inputs) == 161


def hestonbasket_jax(jax, m, steps):
    import jax.numpy as jnp

    def f(p, z):
        def corr(i, j):
            return 1.0 if i == j else p[f"corr{min(i, j) + 1}_{max(i, j) + 1}"]
        chol = jnp.linalg.cholesky(jnp.stack([jnp.stack([jnp.asarray(corr(i, j), dtype=jnp.float64)
                                                         for j in range(m)]) for i in range(m)]))
        vec = lambda name: jnp.stack([p[f"{name}{i + 1}"] for i in range(m)])  # noqa: E731
        spot, v0, kappa, theta, xi, rho = (vec(n) for n in ("spot", "v0_", "kappa", "theta", "xi", "rho"))
        dt = p["maturity"] / steps
        sq = jnp.sqrt(dt)
        x, v = jnp.zeros(m), v0
        for step in range(steps):
            zs, zv = z[2 * m * step:2 * m * step + m], z[2 * m * step + m:2 * m * (step + 1)]
            w = chol @ zs
            u = rho * w + jnp.sqrt(1.0 - rho * rho) * zv
            vp = jnp.where(v > 0.0, v, 0.0)  # where, not maximum: JAX's maximum multiplies an infinite cotangent by 0
            sd = jnp.sqrt(jnp.where(v >= 1e-30, v, 1e-30)) * sq  # the tape's floor under the square root
            x = x + (p["rate"] - 0.5 * vp) * dt + sd * w
            v = v + kappa * (theta - vp) * dt + xi * sd * u
        total = jnp.mean(spot * jnp.exp(x))
        return jnp.maximum(total - p["strike"], 0.0) * jnp.exp(-(p["rate"] * p["maturity"]))
    return f


def test_heston_basket_against_jax_on_the_same_draws_every_greek(usable):
    jax = jax_or_skip()
    engine_or_skip(usable, "reference")
    m, steps, paths = 4, 8, 2048
    tape = tapelab.product("hestonbasket", assets=m, steps=steps)
    inputs = dict(zip(tape.inputs, tape.defaults))
    r = tapelab.price(tape, "reference", paths=paths, seed=3, precision="fp64", checkpoint="off")
    value, grads = jax_mean(jax, hestonbasket_jax(jax, m, steps), inputs, 3, paths, 2 * m * steps)
    assert set(grads) == set(tape.inputs)  # every spot, Heston parameter and correlation
    assert_same_estimator(r, value, grads, "Heston basket", rtol=1e-9)
    assert all(r.greeks[f"corr{i}_{j}"] != 0.0 for i in range(1, m + 1) for j in range(i + 1, m + 1))


def test_one_asset_heston_basket_against_quantlib_analytic_heston(usable):
    ql = quantlib()
    engine_or_skip(usable, "cpu-jit")
    tape = tapelab.product("hestonbasket", assets=1, steps=100)
    p = dict(zip(tape.inputs, tape.defaults))

    def analytic(spot=p["spot1"], v0=p["v0_1"], rho=p["rho1"]):
        def engine(today, rts, dts, s):
            proc = ql.HestonProcess(rts, dts, s, v0, p["kappa1"], p["theta1"], p["xi1"], rho)
            return ql.AnalyticHestonEngine(ql.HestonModel(proc))
        return ql_european(ql, engine, spot, p["strike"], p["rate"], p["maturity"])

    r = price(tape, 200_000)
    within(r.value, r.stderr, analytic(), "one-asset Heston basket (QuantLib AnalyticHestonEngine)")
    within(r.greeks["spot1"], r.greeks_stderr["spot1"], (analytic(spot=100.01) - analytic(spot=99.99)) / 0.02,
           "delta")
    within(r.greeks["v0_1"], r.greeks_stderr["v0_1"],
           (analytic(v0=p["v0_1"] + 1e-5) - analytic(v0=p["v0_1"] - 1e-5)) / 2e-5, "d/dv0")


def localvol_jax(jax, steps, strikes, times):
    import jax.numpy as jnp
    h = 2.0 / (strikes - 1)
    grid = np.array([-1.0 + j * h for j in range(strikes)])

    def f(p, z):
        vol = jnp.stack([jnp.stack([p[f"vol_t{k}_x{j}"] for j in range(strikes)]) for k in range(times)])
        dt = p["maturity"] / steps
        y = jnp.log(p["spot"])
        for i in range(steps):
            tau = i / steps * (times - 1)
            k = min(int(tau), times - 2)
            a = tau - k
            col = vol[k] if a == 0.0 else (1.0 - a) * vol[k] + a * vol[k + 1]
            r = (y - math.log(100.0) - grid[:-1]) * (1.0 / h)
            r = jnp.where(r >= 0.0, r, 0.0)  # the tape's ties (max to its first argument, min(1, r) to the 1)
            ramps = jnp.where(1.0 <= r, 1.0, r)
            sigma = col[0] + jnp.sum((col[1:] - col[:-1]) * ramps)
            y = y + (p["rate"] - 0.5 * sigma * sigma) * dt + sigma * jnp.sqrt(dt) * z[i]
        return jnp.maximum(jnp.exp(y) - p["strike"], 0.0) * jnp.exp(-(p["rate"] * p["maturity"]))
    return f


def test_local_vol_against_jax_on_the_same_draws_vega_per_node(usable):
    jax = jax_or_skip()
    engine_or_skip(usable, "reference")
    steps, strikes, times, paths = 12, 7, 4, 2048
    tape = tapelab.product("localvol", steps=steps, strikes=strikes, times=times)
    inputs = dict(zip(tape.inputs, tape.defaults))
    r = tapelab.price(tape, "reference", paths=paths, seed=8, precision="fp64", checkpoint="off")
    value, grads = jax_mean(jax, localvol_jax(jax, steps, strikes, times), inputs, 8, paths, steps)
    # Sums in another order than the tape's: rounding apart.
    assert_same_estimator(r, value, grads, "local vol", rtol=1e-9)


# ---- the size bound (issue 49): estimated before recording

def test_a_product_too_large_together_is_refused_before_recording(monkeypatch):
    t0 = time.monotonic()
    with pytest.raises(ValueError, match=r"^tapelab: --product: product 'heat': steps=1000000, points=10001 make about "
                                         r"5e\+10 nodes, over the bound of 2000000 \(raise it with --max-nodes N or "
                                         r"TAPELAB_MAX_NODES\)$"):
        tapelab.product("heat", points=10001, steps=1000000)
    assert time.monotonic() - t0 < 1.0
    with pytest.raises(ValueError, match="over the bound of 1000"):
        tapelab.product("asian", max_nodes=1000)
    assert len(tapelab.product("asian", max_nodes=1536)) == 1536
    monkeypatch.setenv("TAPELAB_MAX_NODES", "1000")
    with pytest.raises(ValueError, match="over the bound of 1000"):
        tapelab.product("asian")
    assert len(tapelab.product("asian", max_nodes=2000)) == 1536  # the keyword beats the variable
    monkeypatch.setenv("TAPELAB_MAX_NODES", "lots")
    with pytest.raises(ValueError, match="TAPELAB_MAX_NODES: expected an integer from 1 to"):
        tapelab.product("asian")


def limited(megabytes):
    def apply():
        resource.setrlimit(resource.RLIMIT_AS, (megabytes << 20, megabytes << 20))
    return apply


@pytest.mark.parametrize("args", [
    ["tape", "--product", "heat", "--param", "points=10001", "--param", "steps=1000000"],
    ["price", "--product", "basket", "--assets", "1000", "--steps", "1000000", "--engine", "reference"],
    ["compare", "--product", "neural", "--param", "hidden=256", "--steps", "1000000"],
    ["plan", "--product", "worstof", "--assets", "200", "--steps", "1000000"],
])
def test_the_cli_refuses_fast_in_bounded_memory(cli, args):
    t0 = time.monotonic()
    p = subprocess.run([cli.path, *args], capture_output=True, text=True, timeout=60, preexec_fn=limited(1024))
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "nodes, over the bound of 2000000 (raise it with --max-nodes N" in lines[0], p.stderr
    assert time.monotonic() - t0 < 10


def test_the_cli_bound_is_a_flag_and_a_variable(cli):
    rc, line = cli.error("tape", "--product", "asian", "--summary", env={"TAPELAB_MAX_NODES": "1000"})
    assert rc == 2 and line.startswith("tapelab: --product: product 'asian': steps=252 make about 1.54e+03 nodes")
    rc, out, err = cli("tape", "--product", "asian", "--summary", "--max-nodes", "1536", env={"TAPELAB_MAX_NODES": "1000"})
    assert rc == 0 and out.startswith("asian-252: 1536 nodes"), err
    rc, line = cli.error("tape", "--product", "asian", "--max-nodes", "0")
    assert rc == 2 and line.startswith("tapelab: --max-nodes: expected an integer from 1 to")


def test_a_tangent_kernel_too_large_is_refused_before_it_is_written(cli):
    # lmm-80 by all 161 inputs: 4.7e6 derivative terms (193 MB of C++), over the default bound.
    rc, line = cli.error("price", "--product", "lmm", "--param", "forwards=80", "--engine", "cpu-jit", "--kernel", "tangent",
                         "--paths", "64")
    assert rc == 2 and line.startswith("tapelab: --kernel tangent: the tangent kernel of lmm-80 by 161 inputs carries "
                                       "4.73e+06 derivative terms"), line
    # Fewer inputs, or the bound raised: past the check (and stopped at once by a tiny compile limit).
    for extra in (["--wrt", "f0,f1,vol0"], ["--max-nodes", "5000000"]):
        rc, line = cli.error("price", "--product", "lmm", "--param", "forwards=80", "--engine", "cpu-jit", "--kernel",
                             "tangent", "--paths", "64", "--compile-timeout", "0.001", *extra)
        assert rc == 1 and "took longer than --compile-timeout 0.001 s" in line, line


def test_compare_reports_greeks_times_paths_per_second(cli):
    js = cli.json("compare", "--product", "bucketed", "--steps", "8", "--param", "buckets=8", "--engines", "reference",
                  "--kernels", "register", "--paths", "64", "--ladders", "1", "--points", "2", "--markets", "2")
    for r in js["rows"]:
        assert r["greeks_per_path"] == 12  # spot, strike, 8 buckets, rate, maturity
        assert r["mgreek_paths_per_second"] == pytest.approx(12 * r["mpaths_per_second"], rel=1e-12)
        stats = r["result"]["kernel_stats"]
        assert set(stats) >= {"source_bytes", "scratch_bytes_per_path"}
    rc, out, err = cli("compare", "--product", "bucketed", "--steps", "8", "--param", "buckets=8", "--engines", "reference",
                       "--paths", "64", "--ladders", "1", "--points", "2", "--no-greeks")
    assert rc == 0, err
    head = next(l for l in out.splitlines() if l.startswith("engine"))
    assert "Greeks x Mpath/s" in head and head.rstrip().endswith("plan")

"""The product zoo: every product against an independent answer.

Oracles: QuantLib (Heston's analytic European engine, the analytic barrier and fixed-strike lookback
engines with the Broadie-Glasserman-Kou discrete-monitoring shift, the analytic CEV engine), closed forms (Black's
caplets for the LMM cap, Black-Scholes for the PDE stepper), and JAX on the same draws (the worst-of,
the neural SDE, the lookback): value and Greeks within K_SE standard errors for Monte-Carlo oracles,
equal to rounding for JAX on the same draws. Skips say why where QuantLib or JAX is absent.
"""
import math

import numpy as np
import pytest

import tapelab

from conftest import engine_or_skip

K_SE = 4.5  # standard errors a Monte-Carlo estimate may lie from an exact answer
ENGINE = "cpu-jit"


def quantlib():
    try:
        import QuantLib as ql
    except ImportError:
        pytest.skip("QuantLib is not installed (Debian's quantlib-python; scripts/setup.sh installs it)")
    return ql


def jax_or_skip():
    try:
        import jax
    except ImportError:
        pytest.skip("jax is not installed (pip install 'jax[cpu]'; scripts/setup.sh installs it)")
    jax.config.update("jax_enable_x64", True)
    return jax


def price(tape, paths, seed=7, **inputs):
    return tapelab.price(tape, ENGINE, paths=paths, seed=seed, inputs=inputs or None, precision="fp64",
                         checkpoint="off")


def within(mc, se, exact, what, k=K_SE):
    assert abs(mc - exact) <= k * se, f"{what}: {mc!r} vs {exact!r}: {abs(mc - exact) / se:.2f} standard errors"


def ncdf(x):
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def black(f, k, vol, t):
    """Undiscounted Black call on a forward."""
    if t <= 0:
        return max(f - k, 0.0)
    sd = vol * math.sqrt(t)
    d1 = (math.log(f / k) + 0.5 * sd * sd) / sd
    return f * ncdf(d1) - k * ncdf(d1 - sd)


def bs_call(s, k, vol, r, t):
    return math.exp(-r * t) * black(s * math.exp(r * t), k, vol, t)


def central(fn, x, h):
    return (fn(x + h) - fn(x - h)) / (2 * h)


# ---- sizes: what each product states (products.h)

def test_every_product_states_its_sizes(cli, usable):
    names = [p["name"] for p in tapelab.products()]
    for name in ["heston", "cev", "barrier", "lookback", "lmm", "worstof", "neural", "heat"]:
        assert name in names
    asian = tapelab.product("asian")
    assert asian.pipe_width == 7  # the article's narrow pipe
    lmm = tapelab.product("lmm", forwards=40)
    assert lmm.pipe_width >= 20  # half the forwards are alive in the middle of the tape
    worst = tapelab.product("worstof")
    assert worst.pipe_width >= 40  # twenty spots and their drift terms
    neural = tapelab.product("neural")
    assert len(neural.inputs) == 16 * 16 + 5 * 16 + 1 + 4 and neural.pipe_width >= len(neural.inputs) - 4
    heat = tapelab.product("heat")
    assert heat.draws == 0 and heat.pipe_width >= 41
    rc, out, err = cli("tape", "--product", "lmm", "--param", "forwards=12", "--summary")
    assert rc == 0, err
    t = tapelab.product("lmm", forwards=12)
    assert out.splitlines()[0] == (f"{t.name}: {len(t)} nodes, {t.draws} draws, {len(t.inputs)} inputs, "
                                   f"pipe width {t.pipe_width}")


def test_product_parameters_are_flags_and_keywords(cli):
    rc, line = cli.error("price", "--product", "lmm", "--param", "wings=3")
    assert rc == 2 and line == ("tapelab: --product: product 'lmm' has no parameter 'wings' "
                                "(its parameters: forwards, tau, strike)")
    rc, line = cli.error("price", "--product", "heat", "--param", "points=10.5")
    assert rc == 2 and line == "tapelab: --product: product 'heat': parameter 'points' must be an integer in [5, 10001]"
    rc, line = cli.error("price", "--product", "heat", "--param", "points=10")
    assert rc == 2 and line == "tapelab: --product: points must be odd and at least 5"
    with pytest.raises(ValueError, match="product 'neural' has no parameter 'width'"):
        tapelab.product("neural", width=3)
    a = cli.json("price", "--product", "barrier", "--steps", "5", "--param", "smoothing=0.01", "--paths", "64",
                 "--engine", "reference")
    b = tapelab.price(tapelab.product("barrier", steps=5, smoothing=0.01), "reference", paths=64, seed=42)
    assert a["value"] == b.value


# ---- QuantLib oracles

def ql_european(ql, engine_of, spot, strike, rate, t):
    today = ql.Date(15, 1, 2025)
    ql.Settings.instance().evaluationDate = today
    expiry = today + int(round(t * 365))
    opt = ql.VanillaOption(ql.PlainVanillaPayoff(ql.Option.Call, strike), ql.EuropeanExercise(expiry))
    dc = ql.Actual365Fixed()
    rts = ql.YieldTermStructureHandle(ql.FlatForward(today, rate, dc))
    dts = ql.YieldTermStructureHandle(ql.FlatForward(today, 0.0, dc))
    opt.setPricingEngine(engine_of(today, rts, dts, ql.QuoteHandle(ql.SimpleQuote(spot))))
    return opt.NPV()


def test_heston_against_quantlib_analytic_engine(usable):
    ql = quantlib()
    engine_or_skip(usable, ENGINE)
    tape = tapelab.product("heston", steps=100)
    p = dict(zip(tape.inputs, tape.defaults))

    def analytic(spot=p["spot"], v0=p["v0"]):
        def engine(today, rts, dts, s):
            proc = ql.HestonProcess(rts, dts, s, v0, p["kappa"], p["theta"], p["xi"], p["rho"])
            return ql.AnalyticHestonEngine(ql.HestonModel(proc))
        return ql_european(ql, engine, spot, p["strike"], p["rate"], p["maturity"])

    r = price(tape, 200_000)
    within(r.value, r.stderr, analytic(), "Heston value (QuantLib AnalyticHestonEngine)")
    within(r.greeks["spot"], r.greeks_stderr["spot"], central(lambda s: analytic(spot=s), p["spot"], 0.01),
           "Heston delta")
    within(r.greeks["v0"], r.greeks_stderr["v0"], central(lambda v: analytic(v0=v), p["v0"], 1e-5), "Heston d/dv0")


def test_cev_against_quantlib_analytic_engine(usable):
    ql = quantlib()
    engine_or_skip(usable, ENGINE)
    tape = tapelab.product("cev", steps=100)
    p = dict(zip(tape.inputs, tape.defaults))

    def analytic(f0=p["forward"], alpha=p["alpha"]):
        today = ql.Date(15, 1, 2025)
        ql.Settings.instance().evaluationDate = today
        expiry = today + int(round(p["maturity"] * 365))
        opt = ql.VanillaOption(ql.PlainVanillaPayoff(ql.Option.Call, p["strike"]), ql.EuropeanExercise(expiry))
        rts = ql.YieldTermStructureHandle(ql.FlatForward(today, p["rate"], ql.Actual365Fixed()))
        opt.setPricingEngine(ql.AnalyticCEVEngine(f0, alpha, p["beta"], rts))
        return opt.NPV()

    r = price(tape, 200_000)
    within(r.value, r.stderr, analytic(), "CEV value (QuantLib AnalyticCEVEngine)")
    within(r.greeks["forward"], r.greeks_stderr["forward"], central(lambda f: analytic(f0=f), p["forward"], 0.01),
           "CEV delta")
    within(r.greeks["alpha"], r.greeks_stderr["alpha"], central(lambda a: analytic(alpha=a), p["alpha"], 1e-4),
           "CEV d/dalpha")


BGK = 0.5826  # Broadie-Glasserman-Kou: -zeta(1/2)/sqrt(2 pi)


def ql_up_and_out(ql, spot, strike, barrier, vol, rate, t, steps):
    """QuantLib's continuous-monitoring engine at the BGK-shifted barrier H exp(0.5826 vol sqrt(T/m))."""
    shifted = barrier * math.exp(BGK * vol * math.sqrt(t / steps))
    today = ql.Date(15, 1, 2025)
    ql.Settings.instance().evaluationDate = today
    expiry = today + int(round(t * 365))
    opt = ql.BarrierOption(ql.Barrier.UpOut, shifted, 0.0, ql.PlainVanillaPayoff(ql.Option.Call, strike),
                           ql.EuropeanExercise(expiry))
    dc = ql.Actual365Fixed()
    proc = ql.BlackScholesMertonProcess(ql.QuoteHandle(ql.SimpleQuote(spot)),
                                        ql.YieldTermStructureHandle(ql.FlatForward(today, 0.0, dc)),
                                        ql.YieldTermStructureHandle(ql.FlatForward(today, rate, dc)),
                                        ql.BlackVolTermStructureHandle(ql.BlackConstantVol(today, ql.NullCalendar(),
                                                                                           vol, dc)))
    opt.setPricingEngine(ql.AnalyticBarrierEngine(proc))
    return opt.NPV()


def ql_lookback_call(ql, spot, strike, vol, rate, t, steps):
    """A fixed-strike lookback call on the maximum of `steps` equally spaced fixings and the spot: QuantLib's
    continuous-monitoring engine with the Broadie-Glasserman-Kou shift a = 0.5826 vol sqrt(T/m) (the discrete
    maximum is about exp(-a) times the continuous one; the spot is a fixing, so the running maximum shifts
    with it): exp(-a) V_cont(strike exp(a), running maximum spot exp(a))."""
    a = BGK * vol * math.sqrt(t / steps)
    today = ql.Date(15, 1, 2025)
    ql.Settings.instance().evaluationDate = today
    expiry = today + int(round(t * 365))
    dc = ql.Actual365Fixed()
    proc = ql.BlackScholesMertonProcess(ql.QuoteHandle(ql.SimpleQuote(spot)),
                                        ql.YieldTermStructureHandle(ql.FlatForward(today, 0.0, dc)),
                                        ql.YieldTermStructureHandle(ql.FlatForward(today, rate, dc)),
                                        ql.BlackVolTermStructureHandle(ql.BlackConstantVol(today, ql.NullCalendar(),
                                                                                           vol, dc)))
    opt = ql.ContinuousFixedLookbackOption(spot * math.exp(a), ql.PlainVanillaPayoff(ql.Option.Call,
                                                                                     strike * math.exp(a)),
                                           ql.EuropeanExercise(expiry))
    opt.setPricingEngine(ql.AnalyticContinuousFixedLookbackEngine(proc))
    return math.exp(-a) * opt.NPV()


def test_lookback_against_quantlib_with_the_discrete_monitoring_shift(usable):
    ql = quantlib()
    engine_or_skip(usable, ENGINE)
    # 200 fixings: the shift's own error shrinks with the fixings' spacing; at the default 50 it is a few
    # standard errors of 400,000 paths (value +3.9, rho +6.6 with seed 7), at 200 within 2.9 for seeds 7, 8, 9.
    steps = 200
    tape = tapelab.product("lookback", steps=steps)
    p = dict(zip(tape.inputs, tape.defaults))
    # Strike off the spot (as in the JAX check below): at strike == spot the paths that never rise end on
    # the payoff's kink, where the pathwise delta is not the price's.
    p["strike"] = 102.0

    def analytic(spot=p["spot"], strike=p["strike"], vol=p["vol"], rate=p["rate"]):
        return ql_lookback_call(ql, spot, strike, vol, rate, p["maturity"], steps)

    r = price(tape, 400_000, strike=p["strike"])
    within(r.value, r.stderr, analytic(), "lookback value (QuantLib AnalyticContinuousFixedLookbackEngine, BGK)")
    for name, h in (("spot", 0.01), ("strike", 0.01), ("vol", 1e-4), ("rate", 1e-4)):
        exact = central(lambda x: analytic(**{name: x}), p[name], h)
        within(r.greeks[name], r.greeks_stderr[name], exact, f"lookback d/d{name} (QuantLib, BGK, central difference)")


def test_barrier_against_quantlib_with_the_discrete_monitoring_shift(usable):
    ql = quantlib()
    engine_or_skip(usable, ENGINE)
    steps = 50
    hard = tapelab.product("barrier", steps=steps)
    p = dict(zip(hard.inputs, hard.defaults))

    def analytic(spot=p["spot"], vol=p["vol"]):
        return ql_up_and_out(ql, spot, p["strike"], p["barrier"], vol, p["rate"], p["maturity"], steps)

    r = price(hard, 400_000)
    within(r.value, r.stderr, analytic(), "up-and-out value, hard indicator (QuantLib AnalyticBarrierEngine, BGK)")
    # The hard indicator's pathwise delta misses the barrier's own term (its derivative is zero path by
    # path): it overstates the delta. The smoothed indicator's pathwise Greeks see it.
    exact_delta = central(lambda s: analytic(spot=s), p["spot"], 0.01)
    assert r.greeks["spot"] - exact_delta > 10 * r.greeks_stderr["spot"]
    smooth = price(tapelab.product("barrier", steps=steps, smoothing=0.002), 400_000)
    within(smooth.value, smooth.stderr, analytic(), "up-and-out value, smoothed indicator", k=6)
    within(smooth.greeks["spot"], smooth.greeks_stderr["spot"], exact_delta, "up-and-out delta, smoothed", k=6)


# ---- closed forms

def test_lmm_cap_against_blacks_caplets(usable):
    engine_or_skip(usable, ENGINE)
    forwards, tau = 40, 0.25
    tape = tapelab.product("lmm", forwards=forwards, tau=tau)
    p = dict(zip(tape.inputs, tape.defaults))
    f = [p[f"f{k}"] for k in range(forwards)]
    vol = [p[f"vol{k}"] for k in range(forwards)]

    def cap(f, vol, strike=p["strike"]):
        total, discount = 0.0, 1.0
        for k in range(forwards):
            discount /= 1.0 + tau * f[k]  # P(0, T_{k+1})
            total += discount * tau * black(f[k], strike, vol[k], k * tau)
        return total

    r = price(tape, 100_000)
    within(r.value, r.stderr, cap(f, vol), "LMM cap (Black caplets)")
    for k in (1, 10, 25, 39):
        bumped = lambda x, k=k: cap(f, vol[:k] + [x] + vol[k + 1:])  # noqa: E731
        within(r.greeks[f"vol{k}"], r.greeks_stderr[f"vol{k}"], central(bumped, vol[k], 1e-5), f"LMM d/dvol{k}")
        bumped = lambda x, k=k: cap(f[:k] + [x] + f[k + 1:], vol)  # noqa: E731
        within(r.greeks[f"f{k}"], r.greeks_stderr[f"f{k}"], central(bumped, f[k], 1e-7), f"LMM d/df{k}")


def test_heat_stepper_against_black_scholes(usable):
    engine_or_skip(usable, "reference")
    tape = tapelab.product("heat", steps=200, points=81)
    p = dict(zip(tape.inputs, tape.defaults))
    p["strike"] = 103.0  # between grid points: at a node the kink's derivative is one-sided (max sends all to a)
    r = tapelab.price(tape, "reference", paths=2, precision="fp64", checkpoint="off", inputs={"strike": 103.0})
    assert r.stderr == 0.0  # no draws: every path is the same
    exact = bs_call(p["spot"], p["strike"], p["vol"], p["rate"], p["maturity"])
    delta = central(lambda s: bs_call(s, p["strike"], p["vol"], p["rate"], p["maturity"]), p["spot"], 1e-3)
    vega = central(lambda v: bs_call(p["spot"], p["strike"], v, p["rate"], p["maturity"]), p["vol"], 1e-5)
    # Discretisation, not sampling (dx = 0.025, dt = 1/200): the value's error is O(dx^2); delta, the
    # adjoint of a grid sum of the payoff's indicator, converges as O(dx) (3% here).
    assert abs(r.value - exact) < 5e-3 * exact, (r.value, exact)
    assert abs(r.greeks["spot"] - delta) < 4e-2 * delta, (r.greeks["spot"], delta)
    assert abs(r.greeks["vol"] - vega) < 2e-2 * vega, (r.greeks["vol"], vega)


# ---- JAX on the same draws

def jax_mean(jax, f, inputs, seed, paths, draws):
    """Mean value and gradient of f over tapelab's fp64 draws of paths 0..paths-1."""
    import jax.numpy as jnp
    z = jnp.asarray(tapelab.draws(seed, paths, draws))
    x = {k: jnp.float64(v) for k, v in inputs.items()}
    vals, grads = jax.vmap(jax.value_and_grad(f), in_axes=(None, 0))(x, z)
    return float(jnp.mean(vals)), {k: float(jnp.mean(g)) for k, g in grads.items()}


def assert_same_estimator(r, value, grads, what, rtol=1e-11):
    assert r.value == pytest.approx(value, rel=rtol, abs=1e-14), what + " value"
    for k, g in grads.items():
        assert r.greeks[k] == pytest.approx(g, rel=rtol, abs=1e-13), f"{what} d/d{k}"


def asian_jax(jax, steps):
    import jax.numpy as jnp

    def f(p, z):
        dt = p["maturity"] / steps
        drift = (p["rate"] - 0.5 * p["vol"] * p["vol"]) * dt
        vs = p["vol"] * jnp.sqrt(dt)

        def step(c, zi):
            s, acc = c
            s = s * jnp.exp(drift + vs * zi)
            return (s, acc + s), None
        (s, acc), _ = jax.lax.scan(step, (p["spot"], 0.0), z)
        return jnp.maximum(acc / steps - p["strike"], 0.0) * jnp.exp(-(p["rate"] * p["maturity"]))
    return f


def test_jax_asian_reproduces_the_built_in_asian(usable, tmp_path):
    jax = jax_or_skip()
    engine_or_skip(usable, "reference")
    steps = 52
    builtin = tapelab.product("asian", steps=steps)
    inputs = dict(zip(builtin.inputs, builtin.defaults))
    tape = tapelab.from_jax(asian_jax(jax, steps), inputs, draws=steps, out=tmp_path / "asian.tape", name="jax-asian")
    assert tape.name == "jax-asian"  # name= names the tape (it was ignored: the tape was called after its source)
    back = tapelab.read_tape(str(tmp_path / "asian.tape"))
    assert (list(back.op), list(back.a), list(back.b)) == (list(tape.op), list(tape.a), list(tape.b))
    a = tapelab.price(tape, "reference", paths=4096, seed=3, precision="fp64", checkpoint="off")
    b = tapelab.price(builtin, "reference", paths=4096, seed=3, precision="fp64", checkpoint="off")
    assert a.value == pytest.approx(b.value, rel=1e-13)
    for k in inputs:
        assert a.greeks[k] == pytest.approx(b.greeks[k], rel=1e-12, abs=1e-15), k
    value, grads = jax_mean(jax, asian_jax(jax, steps), inputs, 3, 4096, steps)
    assert_same_estimator(a, value, grads, "asian from JAX")


def test_a_jax_model_with_scan_maximum_where_and_tanh_imports_and_prices(usable):
    jax = jax_or_skip()
    import jax.numpy as jnp
    engine_or_skip(usable, "reference")
    w = jnp.array([[0.4, -0.3], [0.2, 0.6], [-0.5, 0.1]])

    def f(p, z):
        def step(x, zi):
            h = jnp.tanh(w @ jnp.stack([x, p["a"]]))
            x = x + 0.05 * h.sum() + p["sigma"] * zi
            return jnp.where(x > 0.0, x, 0.5 * x), None
        x, _ = jax.lax.scan(step, p["x0"], z)
        return jnp.maximum(x - p["k"], 0.0)

    inputs = {"x0": 0.5, "a": 1.0, "sigma": 0.3, "k": 0.4}
    tape = tapelab.from_jax(f, inputs, draws=20)
    ops = set(tape.op_names)
    assert {"tanh", "max", "select", "lt"} <= ops
    r = tapelab.price(tape, "reference", paths=2000, seed=9, precision="fp64", checkpoint="off")
    value, grads = jax_mean(jax, f, inputs, 9, 2000, 20)
    assert_same_estimator(r, value, grads, "scan/maximum/where/tanh model")
    plan = tapelab.plan(tape, "window", segments=4)
    c = tapelab.price(tape, "reference", paths=2000, seed=9, precision="fp64", plan=plan, kernel="register")
    assert c.value == r.value and c.greeks == r.greeks  # checkpointed == plain, bit for bit


def test_an_unsupported_primitive_is_named_with_where_it_is():
    jax = jax_or_skip()

    def f(p, z):
        return jax.scipy.special.erf(p["x"] * z[0])

    with pytest.raises(ValueError, match=r"^tapelab: from_jax: unsupported primitive 'erf' at .*test_zoo\.py:\d+"):
        tapelab.from_jax(f, {"x": 1.0}, draws=1)


def worstof_jax(jax, tape, assets, steps, corr):
    import jax.numpy as jnp
    c = np.full((assets, assets), corr)
    np.fill_diagonal(c, 1.0)
    chol = jnp.asarray(np.linalg.cholesky(c))

    def f(p, z):
        s0 = jnp.stack([p[f"spot{i + 1}"] for i in range(assets)])
        vol = jnp.stack([p[f"vol{i + 1}"] for i in range(assets)])
        dt = p["maturity"] / steps
        drift = (p["rate"] - 0.5 * vol * vol) * dt
        s = s0
        for step in range(steps):
            w = chol @ z[step * assets:(step + 1) * assets]
            s = s * jnp.exp(drift + vol * jnp.sqrt(dt) * w)
        return jnp.maximum(jnp.min(s / s0) - p["strike"], 0.0) * jnp.exp(-(p["rate"] * p["maturity"]))
    return f


def test_worstof_against_jax_on_the_same_draws(usable):
    jax = jax_or_skip()
    engine_or_skip(usable, ENGINE)
    assets, steps = 20, 12
    tape = tapelab.product("worstof", assets=assets, steps=steps)
    inputs = dict(zip(tape.inputs, tape.defaults))
    r = price(tape, 4096, seed=5)
    value, grads = jax_mean(jax, worstof_jax(jax, tape, assets, steps, 0.3), inputs, 5, 4096, assets * steps)
    assert_same_estimator(r, value, grads, "worst-of", rtol=1e-9)


def neural_jax(jax, hidden, steps):
    import jax.numpy as jnp

    def f(p, z):
        w1 = jnp.array([[p[f"w1_{i}_{j}"] for j in range(2)] for i in range(hidden)])
        b1 = jnp.array([p[f"b1_{i}_0"] for i in range(hidden)])
        w2 = jnp.array([[p[f"w2_{i}_{j}"] for j in range(hidden)] for i in range(hidden)])
        b2 = jnp.array([p[f"b2_{i}_0"] for i in range(hidden)])
        w3 = jnp.array([p[f"w3_0_{j}"] for j in range(hidden)])
        dt = p["maturity"] / steps
        x = p["x0"]
        for step in range(steps):
            h1 = jnp.tanh(w1 @ jnp.stack([x, dt * step]) + b1)
            h2 = jnp.tanh(w2 @ h1 + b2)
            x = x + (p["b3_0_0"] + w3 @ h2) * dt + p["sigma"] * jnp.sqrt(dt) * z[step]
        return jnp.maximum(x - p["strike"], 0.0)
    return f


def test_neural_sde_against_jax_on_the_same_draws(usable):
    jax = jax_or_skip()
    engine_or_skip(usable, ENGINE)
    hidden, steps = 16, 16
    tape = tapelab.product("neural", hidden=hidden, steps=steps)
    inputs = dict(zip(tape.inputs, tape.defaults))
    assert len(inputs) == hidden * hidden + 5 * hidden + 1 + 4
    r = price(tape, 2048, seed=4)
    value, grads = jax_mean(jax, neural_jax(jax, hidden, steps), inputs, 4, 2048, steps)
    assert_same_estimator(r, value, grads, "neural SDE", rtol=1e-9)


def test_lookback_against_jax_on_the_same_draws(usable):
    jax = jax_or_skip()
    import jax.numpy as jnp
    engine_or_skip(usable, ENGINE)
    steps = 50
    tape = tapelab.product("lookback", steps=steps)
    inputs = dict(zip(tape.inputs, tape.defaults))

    def f(p, z):
        dt = p["maturity"] / steps
        drift = (p["rate"] - 0.5 * (p["vol"] * p["vol"])) * dt
        vs = p["vol"] * jnp.sqrt(dt)

        def step(c, zi):
            s, top = c
            s = s * jnp.exp(drift + vs * zi)
            return (s, jnp.maximum(top, s)), None
        (s, top), _ = jax.lax.scan(step, (p["spot"], p["spot"]), z)
        return jnp.maximum(top - p["strike"], 0.0) * jnp.exp(-(p["rate"] * p["maturity"]))

    # Strike off the spot: at strike == spot a path that never rises ends on the payoff's kink, where
    # tapelab's max sends the whole adjoint to its first argument and JAX's maximum half.
    inputs["strike"] = 102.0
    r = price(tape, 4096, seed=6, strike=102.0)
    value, grads = jax_mean(jax, f, inputs, 6, 4096, steps)
    assert_same_estimator(r, value, grads, "lookback", rtol=1e-10)

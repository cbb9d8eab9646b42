"""tapelab.record: a tape recorded in Python is the C++ Recorder's tape, node for node."""
import numpy as np
import pytest

import tapelab
from tapelab.record import Recorder, exp, maximum, sqrt


def asian(steps):
    """products::asianCall (tape/products/products.cpp), line for line."""
    rec = Recorder(f"asian-{steps}")
    spot, strike = rec.input("spot", 100.0), rec.input("strike", 100.0)
    vol, rate, maturity = rec.input("vol", 0.2), rec.input("rate", 0.03), rec.input("maturity", 1.0)
    vol2 = vol * vol
    half = rec.constant(0.5)
    mu = rate - half * vol2
    dt = maturity * rec.constant(1.0 / steps)
    drift = mu * dt
    vol_sqrt_dt = vol * sqrt(dt)
    total = rec.constant(0.0)
    s = spot
    for i in range(steps):
        z = rec.randn(i)
        s = s * exp(drift + vol_sqrt_dt * z)
        total = total + s
    avg = total / rec.constant(float(steps))
    payoff = maximum(avg - strike, rec.constant(0.0))
    rec.output(payoff * exp(-(rate * maturity)))
    return rec


def test_the_python_asian_is_the_built_in_asian():
    built = tapelab.product("asian", steps=12)
    rec = asian(12)
    t = rec.tape()
    assert len(t) == len(built) == len(rec)
    for column in ("op", "a", "b", "imm", "input_nodes", "defaults"):
        assert np.array_equal(getattr(t, column), getattr(built, column)), column
    assert t.output == built.output and t.structure == built.structure
    want = tapelab.price(built, "reference", paths=2000, seed=7)
    got = tapelab.price(t, "reference", paths=2000, seed=7)
    assert got.value == want.value and got.greeks == want.greeks  # the same bits
    # and through the .tape text: the same tape again
    assert tapelab.parse_tape(t.text(), "round-trip").structure == built.structure


def test_a_recorded_tape_is_named_after_its_recorder():
    rec = Recorder("cev-asian")
    rec.output(rec.input("spot", 100.0) * 2.0)
    t = rec.tape()
    assert t.name == "cev-asian"
    assert "cev-asian" in repr(t)
    assert tapelab.parse_tape(rec.text()).name == ""  # text alone names nothing; the recorder does


def test_numbers_become_constants_in_the_c_order():
    rec = Recorder("mixed")
    x = rec.input("x", 2.0)
    y = x * 3.0          # const 3, mul x const
    z = 4.0 - y          # const 4, sub const y
    rec.output(abs(-z / 2))
    t = rec.tape()
    assert list(t.op_names) == ["input", "const", "mul", "const", "sub", "neg", "const", "div", "abs"]
    assert list(t.a[:5]) == [-1, -1, 0, -1, 3] and list(t.b[:5]) == [-1, -1, 1, -1, 2]
    r = tapelab.price(t, "reference", paths=10)
    assert r.value == abs(-(4.0 - 6.0) / 2) and r.greeks["x"] == pytest.approx(1.5)  # |(3x - 4) / 2|' at 2


def test_every_op_of_the_table_is_a_function():
    import tapelab.record as record
    for name in tapelab.OPS:
        if name in ("const", "input", "randn"):
            continue
        assert callable(getattr(record, name)), name
    with pytest.raises(AttributeError):
        record.not_an_op


def test_errors_are_one_line_naming_the_problem():
    rec = Recorder("bad")
    x = rec.input("x", 1.0)
    with pytest.raises(ValueError, match="input 'x' recorded twice"):
        rec.input("x", 2.0)
    with pytest.raises(ValueError, match="no output recorded"):
        rec.tape()
    with pytest.raises(TypeError, match="no truth value"):
        bool(x)
    with pytest.raises(ValueError, match="must be finite"):
        x * float("inf")
    with pytest.raises(ValueError, match="another recording"):
        x + Recorder("other").input("y", 1.0)
    with pytest.raises(ValueError, match="draw index"):
        rec.randn(-1)
    with pytest.raises(ValueError, match="no op 'frobnicate'"):
        rec.op("frobnicate", x)


def test_functions_of_numbers_alone_are_numbers_not_nodes():
    from tapelab.record import sqrt, exp, maximum, select
    rec = Recorder("numbers")
    x = rec.input("x", 2.0)
    dt = 1.0 / 64
    assert sqrt(dt) == 0.125 and exp(0.0) == 1.0 and maximum(1.0, 3) == 3.0 and select(-1.0, 5.0, 7.0) == 7.0
    rec.output(x * sqrt(dt))
    # one const node (0.125) and the mul: sqrt(dt) recorded nothing
    assert rec.text().count("sqrt") == 0 and "const 0.125" in rec.text()

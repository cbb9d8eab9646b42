"""A strategy written in Python runs on every engine here, with results identical (==) to the same
cuts given as a list, and (the project's promise) to the plain kernel of the same engine."""
import numpy as np
import pytest

import tapelab
from conftest import ENGINES, engine_or_skip, live_minima, live_minima_halved

PATHS, SEED = 2000, 11


def same(a, b):
    return (np.array_equal(a.values, b.values) and np.array_equal(a.stderrs, b.stderrs)
            and np.array_equal(a.greek_array, b.greek_array) and np.array_equal(a.greek_stderr_array, b.greek_stderr_array))


@pytest.fixture(scope="module")
def tape():
    return tapelab.product("asian", steps=12)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_python_strategy_runs_as_its_cuts(engine, usable, tape):
    engine_or_skip(usable, engine)
    run = dict(paths=PATHS, seed=SEED, ladder={"spot": [95, 105]})
    mine = tapelab.price(tape, engine, strategy=live_minima, segments=4, **run)
    listed = tapelab.price(tape, engine, strategy=live_minima(tape, 4), **run)
    as_plan = tapelab.price(tape, engine, plan=tapelab.plan(tape, cuts=live_minima(tape, 4)), **run)
    plain = tapelab.price(tape, engine, checkpoint="off", **run)
    assert mine.kind == "register" and mine.plan.strategy == "python:live_minima" and mine.segments == 4
    assert mine.plan.same_cuts(listed.plan) and listed.plan.strategy == "cuts"
    assert plain.kind == "plain"
    assert same(mine, listed) and same(mine, as_plan) and same(mine, plain)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_nested_python_strategy_runs_as_its_cuts(engine, usable, tape):
    engine_or_skip(usable, engine)
    mine = tapelab.price(tape, engine, strategy=live_minima_halved, segments=3, paths=PATHS, seed=SEED)
    cuts = live_minima_halved(tape, 3)
    listed = tapelab.price(tape, engine, plan=tapelab.plan(tape, cuts=cuts["cuts"], inner=cuts["inner"]),
                           paths=PATHS, seed=SEED)
    plain = tapelab.price(tape, engine, checkpoint="off", paths=PATHS, seed=SEED)
    assert mine.plan.depth == 2 and mine.plan.same_cuts(listed.plan)
    assert same(mine, listed) and same(mine, plain)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_python_strategy_on_a_scratch_kernel(engine, usable, tape):
    caps = engine_or_skip(usable, engine)
    if "scratch" not in caps["kinds"]:
        pytest.skip(f"{engine} has no scratch kernel")
    mine = tapelab.price(tape, engine, strategy=live_minima, segments=4, kernel="scratch", paths=PATHS, seed=SEED)
    plain = tapelab.price(tape, engine, checkpoint="off", paths=PATHS, seed=SEED)
    assert mine.kind == "scratch" and same(mine, plain)

"""checkpoint_schedules interop (tapelab.schedules, planner/schedules.h): the package's Revolve, Multistage,
H-Revolve and Mixed schedules run in tapelab kernels with the plain kernel's bits (==) on reference and
cpu-jit; a tapelab plan goes out as a schedule and comes back; a schedule that does not fit the tape is
one line and exit 2, with nothing written."""
import json
import os
import warnings

import numpy as np
import pytest

import tapelab

cs = pytest.importorskip("checkpoint_schedules", reason="checkpoint_schedules is not installed (scripts/setup.sh)")
from tapelab.schedules import (from_schedule, read_schedule, step_evaluations, to_schedule,  # noqa: E402
                               write_schedule)
from conftest import engine_or_skip  # noqa: E402

STEPS, SNAPSHOTS, PATHS, SEED = 12, 3, 1500, 5


def same(a, b):
    return (np.array_equal(a.values, b.values) and np.array_equal(a.greek_array, b.greek_array)
            and np.array_equal(a.greek_stderr_array, b.greek_stderr_array))


def schedules():
    with warnings.catch_warnings():  # Mixed says once that Numba is absent (it memoizes instead)
        warnings.simplefilter("ignore", RuntimeWarning)
        return {"revolve": cs.Revolve(STEPS, SNAPSHOTS), "multistage": cs.MultistageCheckpointSchedule(STEPS, SNAPSHOTS, 0),
                "hrevolve": cs.HRevolve(STEPS, SNAPSHOTS, 0), "mixed": cs.MixedCheckpointSchedule(STEPS, SNAPSHOTS)}


@pytest.fixture(scope="module")
def tape():
    return tapelab.product("barrier", steps=STEPS)


@pytest.mark.parametrize("engine", ["reference", "cpu-jit"])
@pytest.mark.parametrize("name", ["revolve", "multistage", "hrevolve", "mixed"])
def test_a_checkpoint_schedules_schedule_returns_plains_bits(engine, name, usable, tape):
    engine_or_skip(usable, engine)
    plan = from_schedule(tape, schedules()[name], name=name)
    assert plan.strategy == name and plan.segments > 1 and plan.depth >= 2
    run = dict(paths=PATHS, seed=SEED, ladder={"spot": [95, 105]})
    checkpointed = tapelab.price(tape, engine, plan=plan, **run)
    plain = tapelab.price(tape, engine, checkpoint="off", **run)
    assert checkpointed.kind == "register" and plain.kind == "plain"
    assert same(checkpointed, plain)


@pytest.mark.parametrize("steps,snapshots", [(10, 3), (12, 4), (24, 6), (50, 3), (100, 8), (252, 40)])
def test_revolve_and_hrevolve_evaluate_as_many_steps_as_tapelabs_revolve(steps, snapshots):
    """Both optimal for the rule tapelab's revolve is optimal for (tests/planner/test_planner_revolve.cpp's brute
    force), so the same count of step evaluations, whichever schedule of that cost each picks (the same cuts at
    10 steps; recomputed operations may differ, steps having different node counts); Multistage's optimum is for
    its own costs: as many or one more."""
    tape = tapelab.product("barrier", steps=steps)
    ours = tapelab.plan(tape, "revolve", segments=snapshots)
    for name, sched in [("revolve", cs.Revolve(steps, snapshots)), ("hrevolve", cs.HRevolve(steps, snapshots, 0))]:
        theirs = from_schedule(tape, sched)
        assert step_evaluations(theirs) == step_evaluations(ours), name
        assert theirs.same_cuts(ours) or steps != 10, name
    multistage = step_evaluations(from_schedule(tape, cs.MultistageCheckpointSchedule(steps, snapshots, 0)))
    assert step_evaluations(ours) <= multistage <= step_evaluations(ours) + 1


def test_a_plan_goes_out_as_a_schedule_and_comes_back(tape, tmp_path):
    for strategy in ("revolve", "two-level", "uniform"):
        plan = tapelab.plan(tape, strategy, segments=4)
        try:
            sched = to_schedule(plan)
        except ValueError as e:  # uniform may cut between step starts: said in one line
            assert "not the start of a time step" in str(e)
            continue
        assert isinstance(sched, cs.CheckpointSchedule) and sched.max_n == STEPS
        assert from_schedule(tape, sched).same_cuts(plan), strategy
        path = tmp_path / f"{strategy}.json"
        write_schedule(plan, str(path))
        assert from_schedule(tape, str(path)).same_cuts(plan)
        assert from_schedule(tape, read_schedule(str(path))).same_cuts(plan)


def test_a_schedule_that_does_not_fit_is_one_line(tape, tmp_path):
    with pytest.raises(ValueError, match=r"steps: the schedule has 20 steps, the tape barrier-12 12"):
        from_schedule(tape, cs.Revolve(20, 3))
    garbage = tmp_path / "garbage.json"
    garbage.write_text('{"format": "tapelab-schedule 1", "steps": 12, "actions": ["Forward(0, 4)"]}')
    with pytest.raises(ValueError, match=r"actions\[0\]: Forward takes 5 arguments, got 2"):
        from_schedule(tape, str(garbage))


def test_the_cli_takes_and_writes_schedules(cli, tape, tmp_path):
    product = ["--product", "barrier", "--param", f"steps={STEPS}"]
    good = tmp_path / "revolve.json"
    write_schedule(cs.Revolve(STEPS, SNAPSHOTS), str(good))
    j = cli.json("plan", *product, "--from-schedule", good)
    assert j["plan"]["strategy"] == "schedule" and j["plan"]["metrics"]["depth"] >= 2
    out = tmp_path / "back.json"
    rc, _, err = cli("plan", *product, "--strategy", "revolve", "--checkpoint", SNAPSHOTS, "--to-schedule", out)
    assert rc == 0, err
    assert json.loads(out.read_text())["actions"][-1] == "EndReverse()"
    wrong = tmp_path / "wrong.json"
    write_schedule(cs.Revolve(STEPS + 1, SNAPSHOTS), str(wrong))
    plan_out = tmp_path / "plan.json"
    rc, line = cli.error("plan", *product, "--from-schedule", wrong, "--out", plan_out)
    assert rc == 2 and "steps: the schedule has 13 steps" in line and str(wrong) in line
    assert not os.path.exists(plan_out)
    rc, line = cli.error("plan", *product, "--from-schedule", good, "--strategy", "window")
    assert rc == 2 and "--from-schedule" in line

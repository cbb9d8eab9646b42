"""Plans: built-in strategies as `tapelab plan` makes them, given cuts (flat and nested),
Python strategies, metrics, and plan files both ways."""
import numpy as np
import pytest

import tapelab
from conftest import live_minima, live_minima_halved

STRATEGY_OPTIONS = [("uniform", {}), ("uniform", {"seglen": 20}), ("window", {}), ("marginal", {}),
                    ("optimal", {}), ("optimal-persistent", {}), ("auto", {}), ("two-level", {"inner": 3}),
                    ("revolve", {}), ("budget", {}), ("budget", {"budget": 40}), ("mincut", {}),
                    ("mincut-weighted", {"budget": 40})]


@pytest.fixture(scope="module")
def tape():
    return tapelab.product("asian", steps=16)


def test_every_strategy_is_listed():
    names = tapelab.strategies()
    assert {s for s, _ in STRATEGY_OPTIONS} == set(names)
    assert all(isinstance(line, str) and line for line in names.values())


@pytest.mark.parametrize("strategy,options", STRATEGY_OPTIONS, ids=[f"{s}{o}" for s, o in STRATEGY_OPTIONS])
def test_built_in_strategies_plan_as_the_cli_does(tape, cli, strategy, options):
    p = tapelab.plan(tape, strategy, segments=4, **options)
    flags = [f"--{k}={v}" for k, v in options.items()]
    want = cli.json("plan", "--product", "asian", "--steps", 16, "--strategy", strategy, "--checkpoint", 4, *flags)
    assert p.cuts == want["plan"]["cuts"]
    assert p.inner == want["plan"].get("inner")
    assert p.metrics.to_dict() == want["plan"]["metrics"]
    assert p.strategy == strategy and p.requested_segments == 4
    assert p.segments == p.metrics.segments and p.depth == p.metrics.depth


def test_metrics_have_every_field(tape):
    m = tapelab.plan(tape, "two-level", segments=4).metrics
    assert set(m.to_dict()) == {"segments", "persistent", "peak_live", "scratch_slots", "recompute_ops",
                                "recompute_cost", "depth", "peak_segment"}
    assert m.depth == 2 and m.peak_live > 0 and m.recompute_cost > 0
    plain = tapelab._tapelab._plain_plan(tape).metrics
    assert plain.segments == 1 and plain.recompute_ops == 0


def test_given_cuts_flat_and_nested(tape):
    w = tapelab.plan(tape, "window", segments=4)
    flat = tapelab.plan(tape, cuts=w.cuts)
    assert flat.same_cuts(w) and flat.strategy == "cuts" and flat.metrics == w.metrics
    assert tapelab.plan(tape, cuts=np.array(w.cuts, dtype=np.int64)).same_cuts(w)
    two = tapelab.plan(tape, "two-level", segments=4)
    assert tapelab.plan(tape, cuts=two.cuts, inner=two.inner).same_cuts(two)
    # Bare lists are short for {"cuts": [...]}; None leaves a segment uncut; chains and deeper levels.
    c = w.cuts
    mid = (c[0] + c[1]) // 2
    short = tapelab.plan(tape, cuts=c, inner=[None, [mid], None, None])
    assert short.nested and short.inner == [None, {"cuts": [mid]}, None, None]
    deep = tapelab.plan(tape, cuts=c, inner=[None, {"cuts": [mid], "inner": [[mid - 2], None]},
                                             {"cuts": [c[1] + 3, c[1] + 6], "chain": True}, None])
    assert deep.depth == 3 and deep.inner[2] == {"cuts": [c[1] + 3, c[1] + 6], "chain": True}


def test_a_python_strategy_is_its_cuts(tape):
    p = tapelab.plan(tape, live_minima, segments=5)
    assert p.strategy == "python:live_minima" and p.requested_segments == 5 and p.seconds > 0
    assert p.cuts == live_minima(tape, 5)
    assert p.same_cuts(tapelab.plan(tape, cuts=live_minima(tape, 5)))
    assert tapelab.plan(tape, live_minima, segments=5, name="mine").strategy == "mine"


def test_a_python_strategy_may_nest(tape):
    p = tapelab.plan(tape, live_minima_halved, segments=3)
    assert p.nested and p.depth == 2 and p.metrics.depth == 2
    q = tapelab.plan(tape, cuts=p.cuts, inner=p.inner)
    assert q.same_cuts(p) and q.metrics == p.metrics


@pytest.mark.parametrize("returned,message", [
    ([20, 10], r"cuts\[1\]: 10 does not increase on 20$"),
    ([0, 10], r"cuts\[0\]: 0 is outside \(0, 120\)$"),
    ([10.5], r"cuts\[0\]: expected an integer node index$"),
    ({"cuts": [10, 20], "inner": [None]}, r"inner: 1 entries for 3 segments$"),
    ({"cuts": [10], "inner": [[5], [5]]}, r"inner\[1\]\.cuts\[0\]: 5 is outside \(10, 120\)$"),
    ({"cut": [10]}, r"returned a dict with keys \['cut'\]; expected cuts and optionally inner$"),
    (None, r"returned NoneType; expected a list of cuts"),
])
def test_a_bad_strategy_is_a_value_error_naming_the_field(tape, returned, message):
    def bad(t, segments):
        return returned
    with pytest.raises(ValueError, match=r"^tapelab: strategy 'python:bad': " + message):
        tapelab.plan(tape, bad, segments=3)


def test_an_unknown_strategy_fails_as_the_cli_does(tape, cli):
    rc, line = cli.error("price", "--product", "asian", "--steps", 16, "--strategy", "nope", "--checkpoint", 4)
    assert rc == 2
    with pytest.raises(ValueError) as e:
        tapelab.plan(tape, "nope", segments=4)
    assert str(e.value) == line
    with pytest.raises(ValueError) as e:
        tapelab.price(tape, strategy="nope", segments=4, paths=10)
    assert str(e.value) == line


@pytest.mark.parametrize("strategy", ["window", "two-level", "revolve"])
def test_plan_files_round_trip_with_the_cli(tape, cli, tmp_path, strategy):
    cli_file = tmp_path / "cli.json"
    rc, _, err = cli("plan", "--product", "asian", "--steps", 16, "--strategy", strategy, "--checkpoint", 4,
                     "--out", cli_file)
    assert rc == 0, err
    p = tapelab.plan(tape, strategy, segments=4)
    assert p.to_json() == cli_file.read_text()  # the same bytes as tapelab plan --out
    back = tapelab.read_plan(str(cli_file), tape)
    assert back.same_cuts(p) and back.to_json() == p.to_json() and back.metrics == p.metrics
    py_file = tmp_path / "py.json"
    p.write(str(py_file))
    assert py_file.read_text() == cli_file.read_text()
    again = tapelab.parse_plan(py_file.read_text(), tape)
    assert again.same_cuts(p) and again.strategy == strategy


def test_a_python_strategy_plan_file_round_trips(tape, tmp_path):
    p = tapelab.plan(tape, live_minima, segments=4)
    path = tmp_path / "mine.json"
    p.write(str(path))
    back = tapelab.read_plan(str(path), tape)
    assert back.same_cuts(p) and back.strategy == "python:live_minima" and back.to_json() == p.to_json()


def test_a_plan_file_for_another_tape_fails_as_the_cli_does(tape, cli, tmp_path):
    path = tmp_path / "other.json"
    tapelab.plan(tapelab.product("european", steps=16), "window", segments=4).write(str(path))
    rc, line = cli.error("price", "--product", "asian", "--steps", 16, "--plan", path)
    assert rc == 2
    with pytest.raises(ValueError) as e:
        tapelab.read_plan(str(path), tape)
    assert str(e.value) == line
